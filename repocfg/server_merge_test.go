package repocfg_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

const repoID = "github.com/acme/infra"

func server(t *testing.T, in string) *repocfg.ServerConfig {
	t.Helper()
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// loadWith writes files into a checkout and loads its config through sc.
func loadWith(t *testing.T, sc *repocfg.ServerConfig, id, branch string, files map[string]string) (*repocfg.Config, error) {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return sc.Load(root, id, branch)
}

// project returns the merged project with dir, failing the test if absent.
func project(t *testing.T, cfg *repocfg.Config, dir string) repocfg.Project {
	t.Helper()
	for _, p := range cfg.Projects {
		if p.Dir == dir {
			return p
		}
	}
	t.Fatalf("no project %s in %+v", dir, cfg.Projects)
	return repocfg.Project{}
}

func TestServerConfigDefaultRefusesOverrides(t *testing.T) {
	// With no server config, as in Atlantis, atlantis.yaml may set none of
	// the keys allowed_overrides governs, nor define workflows.
	for _, key := range []struct{ line, want string }{
		{"apply_requirements: [approved]", "apply_requirements"},
		{"plan_requirements: [approved]", "plan_requirements"},
		{"import_requirements: [approved]", "import_requirements"},
		{"workflow: default", "workflow"},
		{"delete_source_branch_on_merge: false", "delete_source_branch_on_merge"},
		{"repo_locking: true", "repo_locking"},
		{"repo_locks: {mode: on_plan}", "repo_locks"},
		{"policy_check: false", "policy_check"},
		{"custom_policy_check: false", "custom_policy_check"},
		{"silence_pr_comments: [plan]", "silence_pr_comments"},
	} {
		t.Run(key.want, func(t *testing.T) {
			yaml := "version: 3\nprojects:\n  - dir: .\n    " + key.line + "\n"
			for _, sc := range []*repocfg.ServerConfig{nil, repocfg.DefaultServerConfig(), server(t, "")} {
				_, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": yaml})
				want := "atlantis.yaml line 4: projects[0]." + key.want + ": the server-side repo config does not allow this repository's config to set " + key.want + ": it needs `allowed_overrides: [" + key.want + "]` for the repository"
				if atoll.ErrorCode(err) != atoll.EINVALID || atoll.ErrorMessage(err) != want {
					t.Errorf("got  %v\nwant %s", err, want)
				}
			}
			allowed := server(t, "repos:\n  - id: "+repoID+"\n    allowed_overrides: ["+key.want+"]\n")
			if _, err := loadWith(t, allowed, repoID, "main", map[string]string{"atlantis.yaml": yaml}); err != nil {
				t.Errorf("allowed: %v", err)
			}
			// Allowed for another repository only: still refused.
			other := server(t, "repos:\n  - id: github.com/acme/other\n    allowed_overrides: ["+key.want+"]\n")
			if _, err := loadWith(t, other, repoID, "main", map[string]string{"atlantis.yaml": yaml}); err == nil {
				t.Error("allowed for another repository, accepted for this one")
			}
		})
	}
}

func TestServerConfigCustomWorkflows(t *testing.T) {
	repo := "version: 3\nprojects:\n  - dir: .\n    workflow: mine\nworkflows:\n  mine:\n    plan:\n      steps: [init, plan]\n"
	for _, tt := range []struct{ name, server, want string }{
		{"default config", "", "atlantis.yaml line 4: projects[0].workflow: the server-side repo config does not allow"},
		{"workflow allowed, custom workflows not", "repos:\n  - id: /.*/\n    allowed_overrides: [workflow]\n",
			"atlantis.yaml line 5: workflows: the server-side repo config does not allow this repository to define custom workflows: it needs `allow_custom_workflows: true` for the repository"},
		{"custom workflows false later", "repos:\n  - id: /.*/\n    allowed_overrides: [workflow]\n    allow_custom_workflows: true\n  - id: " + repoID + "\n    allow_custom_workflows: false\n",
			"atlantis.yaml line 5: workflows: the server-side repo config does not allow"},
		{"both allowed", "repos:\n  - id: /.*/\n    allowed_overrides: [workflow]\n    allow_custom_workflows: true\n", ""},
		{"allowed_workflows does not limit the repo's own", "workflows:\n  strict: {}\nrepos:\n  - id: /.*/\n    allowed_overrides: [workflow]\n    allow_custom_workflows: true\n    allowed_workflows: [strict]\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := loadWith(t, server(t, tt.server), repoID, "main", map[string]string{"atlantis.yaml": repo})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if p := project(t, cfg, "."); p.Workflow != "mine" {
					t.Errorf("workflow = %q", p.Workflow)
				}
				if _, ok := cfg.Workflows["mine"]; !ok {
					t.Errorf("workflows %v lack the repository's", cfg.Workflows)
				}
				return
			}
			if !strings.HasPrefix(atoll.ErrorMessage(err), tt.want) {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestServerConfigWorkflowsByName(t *testing.T) {
	sc := server(t, `workflows:
  strict: {plan: {steps: [init, plan]}}
  loose: {}
repos:
  - id: /.*/
    workflow: strict
    allowed_overrides: [workflow]
    allowed_workflows: [strict, loose]
`)
	// A project without a workflow gets the server's; one that names a
	// server workflow in allowed_workflows gets it.
	cfg, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n  - dir: b\n    workflow: loose\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := project(t, cfg, "a"), project(t, cfg, "b"); a.Workflow != "strict" || b.Workflow != "loose" {
		t.Errorf("workflows a=%q b=%q", a.Workflow, b.Workflow)
	}
	if w, ok := cfg.Workflows["strict"]; !ok || len(w.Plan) != 2 {
		t.Errorf("server workflow strict not available: %+v", cfg.Workflows)
	}
	if cfg.Defaults.Workflow != "strict" {
		t.Errorf("defaults %+v", cfg.Defaults)
	}
	for _, tt := range []struct{ name, yaml, want string }{
		{"not in allowed_workflows", "version: 3\nprojects:\n  - dir: a\n    workflow: default\n",
			`atlantis.yaml line 4: projects[0].workflow: workflow "default" is not allowed for this repository by the server-side repo config (allowed_workflows: [strict, loose])`},
		{"defined nowhere", "version: 3\nprojects:\n  - dir: a\n    workflow: nope\n",
			`atlantis.yaml line 4: projects[0].workflow: workflow "nope" is not defined in workflows (defined: default, loose, strict)`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": tt.yaml})
			if atoll.ErrorMessage(err) != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

func TestServerConfigPrecedence(t *testing.T) {
	sc := server(t, `repos:
  - id: /.*/
    apply_requirements: [mergeable]
    plan_requirements: [approved]
  - id: /^github\.com/acme/.*$/
    apply_requirements: [approved, undiverged]
  - id: github.com/acme/infra
    plan_requirements: []
  - id: github.com/other/infra
    apply_requirements: []
`)
	for _, tt := range []struct {
		id          string
		apply, plan []string
	}{
		{"github.com/acme/infra", []string{"approved", "undiverged"}, []string{}},
		{"github.com/acme/web", []string{"approved", "undiverged"}, []string{"approved"}},
		{"github.com/other/infra", []string{}, []string{"approved"}},
		{"gitlab.com/x/y", []string{"mergeable"}, []string{"approved"}},
	} {
		t.Run(tt.id, func(t *testing.T) {
			// Each key comes from the last matching entry that sets it,
			// for listed projects that say nothing and for the others.
			cfg, err := loadWith(t, sc, tt.id, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n", "a/main.tf": "", "b/main.tf": ""})
			if err != nil {
				t.Fatal(err)
			}
			p := project(t, cfg, "a")
			if !reflect.DeepEqual(p.ApplyRequirements, tt.apply) || !reflect.DeepEqual(p.PlanRequirements, tt.plan) {
				t.Errorf("listed: apply %v plan %v", p.ApplyRequirements, p.PlanRequirements)
			}
			nofile, err := loadWith(t, sc, tt.id, "main", map[string]string{"b/main.tf": ""})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(nofile.Defaults.ApplyRequirements, tt.apply) || !reflect.DeepEqual(nofile.Defaults.PlanRequirements, tt.plan) {
				t.Errorf("defaults %+v", nofile.Defaults)
			}
		})
	}
}

func TestServerConfigRequirementsWhenRepoSaysNothing(t *testing.T) {
	// The safety point: an author cannot drop a server requirement by
	// editing atlantis.yaml in their pull request.
	sc := server(t, "repos:\n  - id: "+repoID+"\n    apply_requirements: [approved]\n")
	root := t.TempDir()
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "main.tf"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, ps []repocfg.Project) {
		t.Helper()
		if len(ps) == 0 {
			t.Fatalf("%s: no projects", what)
		}
		for _, p := range ps {
			if !reflect.DeepEqual(p.ApplyRequirements, []string{"approved"}) {
				t.Errorf("%s: %s apply_requirements %v", what, p.Dir, p.ApplyRequirements)
			}
		}
	}
	// No atlantis.yaml: autodiscovered and -d projects.
	cfg, err := sc.Load(root, repoID, "main")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := repocfg.Select(cfg, root, []string{"a/main.tf", "b/main.tf"})
	if err != nil {
		t.Fatal(err)
	}
	check("autodiscovered", ps)
	ps, err = repocfg.Find(cfg, root, "", "b", "")
	if err != nil {
		t.Fatal(err)
	}
	check("ad-hoc", ps)
	// An atlantis.yaml listing the project without requirements.
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte("version: 3\nprojects:\n  - dir: a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if cfg, err = sc.Load(root, repoID, "main"); err != nil {
		t.Fatal(err)
	}
	ps, err = repocfg.Select(cfg, root, []string{"a/main.tf"})
	if err != nil {
		t.Fatal(err)
	}
	check("listed", ps)
	ps, err = repocfg.Find(cfg, root, "", "b", "")
	if err != nil {
		t.Fatal(err)
	}
	check("ad-hoc beside listed", ps)
	// Setting an empty list is refused, not honoured.
	if err := os.WriteFile(filepath.Join(root, "atlantis.yaml"), []byte("version: 3\nprojects:\n  - dir: a\n    apply_requirements: []\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Load(root, repoID, "main"); !strings.Contains(atoll.ErrorMessage(err), "projects[0].apply_requirements: the server-side repo config does not allow") {
		t.Errorf("emptied requirements: %v", err)
	}
}

func TestServerConfigRepoOverridesWhenAllowed(t *testing.T) {
	sc := server(t, "repos:\n  - id: /.*/\n    apply_requirements: [approved]\n    plan_requirements: [mergeable]\n    allowed_overrides: [apply_requirements]\n")
	cfg, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n    apply_requirements: [undiverged]\n  - dir: b\n"})
	if err != nil {
		t.Fatal(err)
	}
	a, b := project(t, cfg, "a"), project(t, cfg, "b")
	if !reflect.DeepEqual(a.ApplyRequirements, []string{"undiverged"}) || !reflect.DeepEqual(a.PlanRequirements, []string{"mergeable"}) {
		t.Errorf("a: %+v", a)
	}
	if !reflect.DeepEqual(b.ApplyRequirements, []string{"approved"}) {
		t.Errorf("b: %+v", b)
	}
}

func TestServerConfigBranch(t *testing.T) {
	sc := server(t, "repos:\n  - id: /.*/\n    branch: /^(main|release-.*)$/\n    pre_workflow_hooks: [{run: ./a.sh}]\n  - id: github.com/acme/infra\n    post_workflow_hooks: [{run: ./b.sh}]\n")
	for _, tt := range []struct {
		id, branch string
		ok         bool
	}{
		{"github.com/other/x", "main", true},
		{"github.com/other/x", "release-1", true},
		{"github.com/other/x", "dev", false},
		// The last matching entry sets no branch: every branch is served.
		{repoID, "dev", true},
	} {
		cfg, err := loadWith(t, sc, tt.id, tt.branch, nil)
		if tt.ok != (err == nil) {
			t.Errorf("%s into %s: %v", tt.id, tt.branch, err)
		}
		if !tt.ok && (!errors.Is(err, repocfg.ErrBranchNotServed) || atoll.ErrorCode(err) != atoll.EINVALID) {
			t.Errorf("%s into %s: error %v", tt.id, tt.branch, err)
		}
		if tt.ok && tt.id == repoID && tt.branch == "dev" {
			// Hooks come from every entry matching id and branch.
			if len(cfg.PreWorkflowHooks) != 0 || !reflect.DeepEqual(cfg.PostWorkflowHooks, []repocfg.Hook{{Run: "./b.sh"}}) {
				t.Errorf("hooks %+v %+v", cfg.PreWorkflowHooks, cfg.PostWorkflowHooks)
			}
		}
	}
	pre, post := sc.Hooks(repoID, "main")
	if !reflect.DeepEqual(pre, []repocfg.Hook{{Run: "./a.sh"}}) || !reflect.DeepEqual(post, []repocfg.Hook{{Run: "./b.sh"}}) {
		t.Errorf("hooks %+v %+v", pre, post)
	}
}

func TestServerConfigRepoConfigFile(t *testing.T) {
	sc := server(t, "repos:\n  - id: /.*/\n    repo_config_file: ops/atlantis.yaml\n    allowed_overrides: [apply_requirements]\n  - id: github.com/acme/plain\n")
	files := map[string]string{
		"atlantis.yaml":     "version: 3\nprojects:\n  - dir: root\n",
		"ops/atlantis.yaml": "version: 3\nprojects:\n  - dir: ops-project\n    apply_requirements: [bogus]\n",
	}
	_, err := loadWith(t, sc, repoID, "main", files)
	if want := `ops/atlantis.yaml line 4: projects[0].apply_requirements[0]: unknown requirement "bogus"`; !strings.HasPrefix(atoll.ErrorMessage(err), want) {
		t.Errorf("got %v, want the file named: %s", err, want)
	}
	files["ops/atlantis.yaml"] = "version: 3\nprojects:\n  - dir: ops-project\n"
	cfg, err := loadWith(t, sc, repoID, "main", files)
	if err != nil || len(cfg.Projects) != 1 || cfg.Projects[0].Dir != "ops-project" {
		t.Fatalf("%+v %v", cfg, err)
	}
	// A later matching entry without repo_config_file reads atlantis.yaml.
	cfg, err = loadWith(t, sc, "github.com/acme/plain", "main", files)
	if err != nil || len(cfg.Projects) != 1 || cfg.Projects[0].Dir != "root" {
		t.Fatalf("%+v %v", cfg, err)
	}
	// The configured file missing means no config, not atlantis.yaml.
	delete(files, "ops/atlantis.yaml")
	cfg, err = loadWith(t, sc, repoID, "main", files)
	if err != nil || len(cfg.Projects) != 0 || cfg.Explicit {
		t.Fatalf("%+v %v", cfg, err)
	}
}

func TestServerConfigRedefinedDefaultWorkflow(t *testing.T) {
	// A server that redefines "default" changes the workflow of every
	// project that names none; the runner looks it up by that name.
	sc := server(t, "workflows:\n  default:\n    plan:\n      steps: [init, {plan: {extra_args: [-refresh=false]}}]\n")
	cfg, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n"})
	if err != nil {
		t.Fatal(err)
	}
	if p := project(t, cfg, "a"); p.Workflow != "" {
		t.Errorf("workflow %q, want the default (\"\")", p.Workflow)
	}
	w, ok := cfg.Workflows[repocfg.DefaultWorkflow]
	if !ok || len(w.Plan) != 2 || w.Plan[1].Name != "plan" {
		t.Errorf("default workflow %+v", w)
	}
}

func TestServerConfigMergeDoesNotModifyInputs(t *testing.T) {
	sc := server(t, "repos:\n  - id: /.*/\n    apply_requirements: [approved]\n")
	cfg, err := repocfg.Parse([]byte("version: 3\nprojects:\n  - dir: a\n"))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := sc.Merge(repoID, cfg)
	if err != nil {
		t.Fatal(err)
	}
	merged.Projects[0].ApplyRequirements[0] = "mergeable"
	merged.Workflows["x"] = repocfg.Workflow{}
	if cfg.Projects[0].ApplyRequirements != nil || len(cfg.Workflows) != 0 {
		t.Errorf("input changed: %+v", cfg)
	}
	if got := sc.Repos[1].ApplyRequirements[0]; got != "approved" {
		t.Errorf("server config changed: %s", got)
	}
	if _, ok := sc.Workflows["x"]; ok {
		t.Error("server workflows changed")
	}
}

func TestServerConfigLaterEntryNarrowsOverrides(t *testing.T) {
	sc := server(t, `repos:
  - id: /.*/
    allowed_overrides: [apply_requirements, workflow]
  - id: github.com/acme/infra
    allowed_overrides: [workflow]
`)
	yaml := map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n    apply_requirements: [approved]\n"}
	if _, err := loadWith(t, sc, "github.com/acme/web", "main", yaml); err != nil {
		t.Errorf("other repository: %v", err)
	}
	_, err := loadWith(t, sc, repoID, "main", yaml)
	if !strings.Contains(atoll.ErrorMessage(err), "projects[0].apply_requirements: the server-side repo config does not allow") {
		t.Errorf("narrowed repository: %v", err)
	}
}

// import_requirements follow the server as the other requirements do: the
// server's apply to listed and ad-hoc projects, and atlantis.yaml's own
// only where allowed_overrides lists the key.
func TestServerConfigImportRequirements(t *testing.T) {
	sc := server(t, "repos:\n  - id: /.*/\n    import_requirements: [approved]\n")
	files := map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n", "a/main.tf": "", "b/main.tf": ""}
	cfg, err := loadWith(t, sc, repoID, "main", files)
	if err != nil {
		t.Fatal(err)
	}
	if a := project(t, cfg, "a"); !reflect.DeepEqual(a.ImportRequirements, []string{"approved"}) {
		t.Errorf("listed: %+v", a)
	}
	if !reflect.DeepEqual(cfg.Defaults.ImportRequirements, []string{"approved"}) {
		t.Errorf("defaults: %+v", cfg.Defaults)
	}
	files["atlantis.yaml"] = "version: 3\nprojects:\n  - dir: a\n    import_requirements: []\n"
	if _, err := loadWith(t, sc, repoID, "main", files); !strings.Contains(atoll.ErrorMessage(err), "projects[0].import_requirements: the server-side repo config does not allow") {
		t.Errorf("emptied import requirements: %v", err)
	}
	allowed := server(t, "repos:\n  - id: /.*/\n    import_requirements: [approved]\n    allowed_overrides: [import_requirements]\n")
	files["atlantis.yaml"] = "version: 3\nprojects:\n  - dir: a\n    import_requirements: [mergeable]\n"
	if cfg, err = loadWith(t, allowed, repoID, "main", files); err != nil {
		t.Fatal(err)
	}
	if a := project(t, cfg, "a"); !reflect.DeepEqual(a.ImportRequirements, []string{"mergeable"}) {
		t.Errorf("overridden: %+v", a)
	}
}

// A project's custom_policy_check, where allowed_overrides lets it set
// one, is kept for the runner; a project that sets none leaves the
// server's setting (nil).
func TestServerConfigProjectCustomPolicyCheck(t *testing.T) {
	allowed := server(t, "repos:\n  - id: "+repoID+"\n    allowed_overrides: [custom_policy_check]\n")
	cfg, err := loadWith(t, allowed, repoID, "main", map[string]string{"atlantis.yaml": "version: 3\nprojects:\n  - dir: a\n    custom_policy_check: true\n  - dir: b\n"})
	if err != nil {
		t.Fatal(err)
	}
	if a := project(t, cfg, "a"); a.CustomPolicyCheck == nil || !*a.CustomPolicyCheck {
		t.Errorf("a: custom_policy_check = %v, want true", a.CustomPolicyCheck)
	}
	if b := project(t, cfg, "b"); b.CustomPolicyCheck != nil {
		t.Errorf("b: custom_policy_check = %v, want nil (the server's)", *b.CustomPolicyCheck)
	}
	if len(cfg.Warnings) != 0 {
		t.Errorf("warnings: %q", cfg.Warnings)
	}
}
