package repocfg_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// execution_pool: the server's repos[] value (last matching entry that
// sets it), overridden by a project's only with allowed_overrides:
// [execution_pool]; "" (local) when neither sets one, and "local" written
// anywhere resolves to "".
func TestExecutionPoolPrecedence(t *testing.T) {
	const projects = "version: 3\nprojects:\n- dir: a\n- dir: b\n"
	const allow = "  allowed_overrides: [execution_pool]\n"
	cases := []struct {
		name, server, file string
		wantA, wantB       string
		wantDefault        string
	}{
		{name: "nothing set is local", server: "repos:\n- id: /.*/\n", file: projects},
		{name: "no server config is local", file: projects},
		{name: "server", server: "repos:\n- id: /.*/\n  execution_pool: eu-runners\n", file: projects,
			wantA: "eu-runners", wantB: "eu-runners", wantDefault: "eu-runners"},
		{name: "server local is local", server: "repos:\n- id: /.*/\n  execution_pool: local\n", file: projects},
		{name: "later server entry wins", server: "repos:\n- id: /.*/\n  execution_pool: shared\n- id: github.com/acme/infra\n  execution_pool: acme\n",
			file: projects, wantA: "acme", wantB: "acme", wantDefault: "acme"},
		{name: "a later entry that does not set it keeps the earlier one", server: "repos:\n- id: /.*/\n  execution_pool: shared\n- id: github.com/acme/infra\n  workflow: default\n",
			file: projects, wantA: "shared", wantB: "shared", wantDefault: "shared"},
		{name: "another repository's entry does not apply", server: "repos:\n- id: github.com/acme/other\n  execution_pool: other\n", file: projects},
		{name: "project over server", server: "repos:\n- id: /.*/\n  execution_pool: shared\n" + allow,
			file: "version: 3\nprojects:\n- dir: a\n  execution_pool: gpu-1\n- dir: b\n", wantA: "gpu-1", wantB: "shared", wantDefault: "shared"},
		{name: "project without server", server: "repos:\n- id: /.*/\n" + allow,
			file: "version: 3\nprojects:\n- dir: a\n  execution_pool: gpu-1\n- dir: b\n", wantA: "gpu-1"},
		{name: "project local over a server pool", server: "repos:\n- id: /.*/\n  execution_pool: shared\n" + allow,
			file: "version: 3\nprojects:\n- dir: a\n  execution_pool: local\n- dir: b\n", wantB: "shared", wantDefault: "shared"},
		{name: "project null keeps the server's", server: "repos:\n- id: /.*/\n  execution_pool: shared\n" + allow,
			file: "version: 3\nprojects:\n- dir: a\n  execution_pool:\n- dir: b\n", wantA: "shared", wantB: "shared", wantDefault: "shared"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sc := repocfg.DefaultServerConfig()
			if tc.server != "" {
				sc = server(t, tc.server)
			}
			cfg, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": tc.file})
			if err != nil {
				t.Fatal(err)
			}
			for dir, want := range map[string]string{"a": tc.wantA, "b": tc.wantB} {
				if got := project(t, cfg, dir).ExecutionPool; got != want {
					t.Errorf("project %s: ExecutionPool = %q; want %q", dir, got, want)
				}
			}
			if cfg.Defaults.ExecutionPool != tc.wantDefault {
				t.Errorf("Defaults.ExecutionPool = %q; want %q", cfg.Defaults.ExecutionPool, tc.wantDefault)
			}
			if len(cfg.Warnings) != 0 {
				t.Errorf("warnings %q", cfg.Warnings)
			}
		})
	}
}

// A project the file does not list (autodiscovered, or without a file at
// all) runs in the server's pool.
func TestExecutionPoolAutodiscovered(t *testing.T) {
	sc := server(t, "repos:\n- id: /.*/\n  execution_pool: eu-runners\n")
	for name, files := range map[string]map[string]string{
		"no file": {"net/main.tf": "# net\n"},
		"file with autodiscover enabled": {"net/main.tf": "# net\n",
			"atlantis.yaml": "version: 3\nautodiscover: {mode: enabled}\nprojects:\n- dir: a\n", "a/main.tf": "# a\n"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for f, body := range files {
				p := filepath.Join(root, filepath.FromSlash(f))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			cfg, err := sc.Load(root, repoID, "main")
			if err != nil {
				t.Fatal(err)
			}
			got, err := repocfg.Modified(cfg, root, []string{"net/main.tf"})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Dir != "net" || got[0].ExecutionPool != "eu-runners" {
				t.Errorf("projects = %+v; want net in eu-runners", got)
			}
		})
	}
}

// A project's execution_pool is refused unless allowed_overrides lists
// execution_pool, as the other governed keys are; atlantis.yaml has no
// top-level execution_pool.
func TestExecutionPoolNeedsAllowedOverrides(t *testing.T) {
	tests := []struct {
		name, server, file string
		want               []string
	}{
		{"no server config", "", "version: 3\nprojects:\n- dir: a\n  execution_pool: gpu\n",
			[]string{"atlantis.yaml line 4: projects[0].execution_pool: the server-side repo config does not allow this repository's config to set execution_pool",
				"allowed_overrides: [execution_pool]"}},
		{"server pool, not allowed", "repos:\n- id: /.*/\n  execution_pool: shared\n  allowed_overrides: [workflow]\n",
			"version: 3\nprojects:\n- dir: a\n  execution_pool: gpu\n", []string{"allowed_overrides: [execution_pool]"}},
		{"local is governed too", "repos:\n- id: /.*/\n  execution_pool: shared\n",
			"version: 3\nprojects:\n- dir: a\n  execution_pool: local\n", []string{"allowed_overrides: [execution_pool]"}},
		{"allowed for another repository only", "repos:\n- id: github.com/acme/other\n  allowed_overrides: [execution_pool]\n",
			"version: 3\nprojects:\n- dir: a\n  execution_pool: gpu\n", []string{"allowed_overrides: [execution_pool]"}},
		{"top level", "repos:\n- id: /.*/\n  allowed_overrides: [execution_pool]\n",
			"version: 3\nexecution_pool: gpu\nprojects:\n- dir: a\n", []string{"atlantis.yaml line 2: execution_pool: is set per project (projects[].execution_pool)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := repocfg.DefaultServerConfig()
			if tt.server != "" {
				sc = server(t, tt.server)
			}
			_, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": tt.file})
			wantInvalid(t, err, tt.want...)
		})
	}
}

// Pool names are "local" or DNS labels; anything else is refused, in the
// server config (naming the repository id and the value) and in
// atlantis.yaml.
func TestExecutionPoolNames(t *testing.T) {
	long := strings.Repeat("a", 63)
	for _, ok := range []string{"local", "a", "0", "eu-runners", "gpu-1", "1a", long} {
		if err := repocfg.CheckPool(ok); err != nil {
			t.Errorf("CheckPool(%q) = %v", ok, err)
		}
		sc := server(t, "repos:\n- id: /.*/\n  execution_pool: "+ok+"\n  allowed_overrides: [execution_pool]\n")
		if _, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n- dir: a\n  execution_pool: " + ok + "\n"}); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	bad := map[string]string{ // YAML value => the name as quoted in the message
		"EU-runners":       `"EU-runners"`,
		"Local":            `"Local"`,
		`"eu runners"`:     `"eu runners"`,
		`" eu"`:            `" eu"`,
		long + "a":         `"` + long + `a"`,
		"../x":             `"../x"`,
		"a/b":              `"a/b"`,
		"-eu":              `"-eu"`,
		"eu-":              `"eu-"`,
		"eu_runners":       `"eu_runners"`,
		"eu.runners":       `"eu.runners"`,
		`""`:               `""`,
		"élan":             `"élan"`,
		`"local\n"`:        `"local\n"`,
		"LOCAL":            `"LOCAL"`,
		"pool-with-ä-char": `"pool-with-ä-char"`,
	}
	for val, quoted := range bad {
		t.Run(val, func(t *testing.T) {
			_, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: github.com/acme/infra\n  workflow: default\n  execution_pool: "+val+"\n"))
			wantInvalid(t, err, "repos.yaml line 4: repos[0].execution_pool: repository github.com/acme/infra: "+quoted+" is not a valid execution pool name")
			// The id is named even when it comes after the key.
			_, err = repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- execution_pool: "+val+"\n  id: /acme/\n"))
			wantInvalid(t, err, "repos.yaml line 2: repos[0].execution_pool: repository /acme/: "+quoted+" is not a valid execution pool name")
			sc := server(t, "repos:\n- id: /.*/\n  allowed_overrides: [execution_pool]\n")
			_, err = loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n- dir: a\n  execution_pool: " + val + "\n"})
			wantInvalid(t, err, "atlantis.yaml line 4: projects[0].execution_pool: "+quoted+" is not a valid execution pool name")
		})
	}
	// Not a string.
	for _, val := range []string{"[a]", "{a: b}"} {
		_, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: /.*/\n  execution_pool: "+val+"\n"))
		wantInvalid(t, err, "repos[0].execution_pool: must be a string")
	}
	// allowed_overrides accepts the key.
	if _, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n- id: /.*/\n  allowed_overrides: [execution_pool]\n")); err != nil {
		t.Error(err)
	}
}

// The JSON form (--repo-config-json) takes the key too.
func TestExecutionPoolJSON(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("--repo-config-json", []byte(`{"repos": [{"id": "/.*/", "execution_pool": "eu-runners"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if r := sc.Repos[1]; r.ExecutionPool == nil || *r.ExecutionPool != "eu-runners" {
		t.Errorf("ExecutionPool = %v", r.ExecutionPool)
	}
	if _, err := repocfg.ParseServerConfig("--repo-config-json", []byte(`{"repos": [{"id": "github.com/acme/infra", "execution_pool": "EU"}]}`)); err == nil ||
		!strings.Contains(err.Error(), `repository github.com/acme/infra: "EU" is not a valid execution pool name`) {
		t.Errorf("err = %v", err)
	}
}

// The server's default pool (--default-execution-pool) is the pool of a
// repository no matching entry gives one: an entry's pool wins, and a
// project overrides it only where allowed.
func TestDefaultExecutionPool(t *testing.T) {
	const plain, override = "version: 3\nprojects:\n- dir: a\n", "version: 3\nprojects:\n- dir: a\n  execution_pool: gpu\n"
	for _, tc := range []struct{ name, server, file, want string }{
		{"default only", "repos:\n- id: /.*/\n", plain, "k8s"},
		{"an entry's pool wins", "repos:\n- id: /.*/\n  execution_pool: eu\n", plain, "eu"},
		{"a project's pool where allowed", "repos:\n- id: /.*/\n  allowed_overrides: [execution_pool]\n", override, "gpu"},
		{"local written in an entry is local", "repos:\n- id: /.*/\n  execution_pool: local\n", plain, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := server(t, tc.server)
			sc.DefaultExecutionPool = "k8s"
			cfg, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": tc.file})
			if err != nil {
				t.Fatal(err)
			}
			if got := project(t, cfg, "a").ExecutionPool; got != tc.want {
				t.Errorf("ExecutionPool = %q; want %q", got, tc.want)
			}
		})
	}
}

// execution_pools: each pool name maps to how its jobs run (a kubernetes
// pod template, kept as JSON for package kube to decode); bad shapes are
// errors with the file, line and key, as for every other key.
func TestExecutionPoolsParse(t *testing.T) {
	sc := server(t, `execution_pools:
  team-a:
    kubernetes:
      image: ghcr.io/atollhq/atoll:1.0.0
      limits: {memory: 2Gi}
      tolerations:
      - {key: dedicated, operator: Equal, value: terraform, effect: NoSchedule}
      ttlSecondsAfterFinished: 0
repos:
- id: /.*/
  execution_pool: team-a
`)
	p, ok := sc.ExecutionPools["team-a"]
	if !ok || len(sc.ExecutionPools) != 1 {
		t.Fatalf("ExecutionPools = %v", sc.ExecutionPools)
	}
	const want = `{"image":"ghcr.io/atollhq/atoll:1.0.0","limits":{"memory":"2Gi"},"tolerations":[{"effect":"NoSchedule","key":"dedicated","operator":"Equal","value":"terraform"}],"ttlSecondsAfterFinished":0}`
	if string(p.Kubernetes) != want || p.KubernetesLine != 3 || p.Line != 2 {
		t.Fatalf("team-a = %s (lines %d, %d)", p.Kubernetes, p.Line, p.KubernetesLine)
	}
	if got := repocfg.PoolLocation("repos.yaml", "team-a", p); got != "repos.yaml line 3: execution_pools.team-a.kubernetes" {
		t.Fatalf("PoolLocation = %q", got)
	}

	for _, tc := range []struct{ name, yaml, want string }{
		{"not a mapping", "execution_pools: [a]\n", "line 1: execution_pools: must be a mapping"},
		{"bad pool name", "execution_pools:\n  Team_A:\n    kubernetes: {}\n", `line 2: execution_pools.Team_A: "Team_A" is not a pool name`},
		{"local", "execution_pools:\n  local:\n    kubernetes: {}\n", `execution_pools.local: "local" is not a pool name for this list`},
		{"unknown key", "execution_pools:\n  a:\n    docker: {}\n", `line 3: execution_pools.a: unknown key "docker"`},
		{"empty pool", "execution_pools:\n  a: {}\n", "line 2: execution_pools.a: says nothing of how its jobs run"},
		{"template not a mapping", "execution_pools:\n  a:\n    kubernetes: [x]\n", "line 3: execution_pools.a.kubernetes: must be a mapping (a pod template), got a list"},
		{"key twice", "execution_pools:\n  a:\n    kubernetes: {}\n  a:\n    kubernetes: {}\n", "line 4: execution_pools.a: key is defined twice"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := repocfg.ParseServerConfig("repos.yaml", []byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
		})
	}
}
