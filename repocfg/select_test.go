package repocfg_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

func TestSelectWithConfig(t *testing.T) {
	repo := writeRepo(t,
		"main.tf",
		"project1/main.tf",
		"project1/test/fixture.tf",
		"project2/main.tf",
		"staging/main.tf",
		"modules/vpc/main.tf",
		"shared/scripts/setup.sh",
		"off/main.tf",
		"empty/",
	)
	tests := []struct {
		name    string
		yaml    string
		changed []string
		want    []string
	}{
		{"default globs match tf", lines(`version: 3`, `projects:`, `- dir: project1`, `- dir: project2`),
			[]string{"project1/main.tf"}, []string{"project1:default"}},
		{"default globs match tfvars", lines(`version: 3`, `projects:`, `- dir: project1`),
			[]string{"project1/prod.tfvars"}, []string{"project1:default"}},
		{"default globs match nested files", lines(`version: 3`, `projects:`, `- dir: project1`),
			[]string{"project1/test/fixture.tf"}, []string{"project1:default"}},
		{"default globs match lock file and terragrunt", lines(`version: 3`, `projects:`, `- dir: project1`, `- dir: project2`),
			[]string{"project1/.terraform.lock.hcl", "project2/terragrunt.hcl"}, []string{"project1:default", "project2:default"}},
		{"other dirs do not match", lines(`version: 3`, `projects:`, `- dir: project1`),
			[]string{"project2/main.tf", "project1x/main.tf"}, nil},
		{"non terraform files do not match", lines(`version: 3`, `projects:`, `- dir: project1`),
			[]string{"project1/README.md"}, nil},
		{"parent module reference", lines(`version: 3`, `projects:`, `- dir: project1`, `  autoplan: {when_modified: ["*.tf", "../modules/**/*.tf"]}`, `- dir: project2`),
			[]string{"modules/vpc/main.tf"}, []string{"project1:default"}},
		{"relative pattern is not recursive", lines(`version: 3`, `projects:`, `- dir: project1`, `  autoplan: {when_modified: ["*.tf"]}`),
			[]string{"project1/test/fixture.tf"}, nil},
		{"autoplan disabled", lines(`version: 3`, `projects:`, `- dir: off`, `  autoplan: {enabled: false}`, `- dir: project1`),
			[]string{"off/main.tf", "project1/main.tf"}, []string{"project1:default"}},
		{"missing dir skipped", lines(`version: 3`, `projects:`, `- dir: deleted`, `- dir: project1`),
			[]string{"deleted/main.tf", "project1/main.tf"}, []string{"project1:default"}},
		{"dir that is a file skipped", lines(`version: 3`, `projects:`, `- dir: main.tf`, `  autoplan: {when_modified: ["../*.tf"]}`),
			[]string{"main.tf"}, nil},
		{"workspaces of one dir sorted", lines(`version: 3`, `projects:`, `- {dir: staging, workspace: zeta}`, `- {dir: staging, workspace: alpha}`),
			[]string{"staging/main.tf"}, []string{"staging:alpha", "staging:zeta"}},
		{"named projects of one dir", lines(`version: 3`, `projects:`, `- {name: b, dir: project2}`, `- {name: a, dir: project2}`),
			[]string{"project2/main.tf"}, []string{"a=project2:default", "b=project2:default"}},
		{"many changes in one project deduplicated", lines(`version: 3`, `projects:`, `- dir: project1`),
			[]string{"project1/main.tf", "project1/vars.tf", "./project1/x.tfvars"}, []string{"project1:default"}},
		{"sorted by dir", lines(`version: 3`, `projects:`, `- dir: staging`, `- dir: project2`, `- dir: project1`),
			[]string{"staging/main.tf", "project1/main.tf", "project2/main.tf"}, []string{"project1:default", "project2:default", "staging:default"}},
		{"root project", lines(`version: 3`, `projects:`, `- dir: .`, `  autoplan: {when_modified: ["*.tf"]}`),
			[]string{"main.tf", "project1/main.tf"}, []string{".:default"}},
		{"root project default globs see everything", lines(`version: 3`, `projects:`, `- dir: .`),
			[]string{"project2/main.tf"}, []string{".:default"}},
		{"exclusion pattern", lines(`version: 3`, `projects:`, `- dir: project1`, `  autoplan: {when_modified: ["**/*.tf", "!test/**"]}`),
			[]string{"project1/test/fixture.tf"}, nil},
		{"later pattern re-includes", lines(`version: 3`, `projects:`, `- dir: project1`, `  autoplan: {when_modified: ["**/*.tf", "!test/**", "test/fixture.tf"]}`),
			[]string{"project1/test/fixture.tf"}, []string{"project1:default"}},
		{"directory pattern matches contents", lines(`version: 3`, `projects:`, `- dir: project1`, `  autoplan: {when_modified: ["../shared"]}`),
			[]string{"shared/scripts/setup.sh"}, []string{"project1:default"}},
		{"empty when_modified never plans", lines(`version: 3`, `projects:`, `- dir: project1`, `  autoplan: {when_modified: []}`),
			[]string{"project1/main.tf"}, nil},
		{"leading slash (Azure DevOps) kept, escapes ignored", lines(`version: 3`, `projects:`, `- dir: .`),
			[]string{"../other/main.tf", "/main.tf"}, []string{".:default"}},
		{"no changed files", lines(`version: 3`, `projects:`, `- dir: project1`),
			nil, nil},
		{"config without projects autodiscovers", lines(`version: 3`, `automerge: true`),
			[]string{"project2/main.tf"}, []string{"project2:default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := repocfg.Select(mustParse(t, tt.yaml), repo, tt.changed)
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if g := labels(got); !reflect.DeepEqual(g, append([]string{}, tt.want...)) {
				t.Errorf("got %v, want %v", g, tt.want)
			}
		})
	}
}

func TestSelectReturnsCopies(t *testing.T) {
	repo := writeRepo(t, "a/main.tf")
	cfg := mustParse(t, lines(`version: 3`, `projects:`, `- dir: a`, `  apply_requirements: [approved]`))
	got, err := repocfg.Select(cfg, repo, []string{"a/main.tf"})
	if err != nil || len(got) != 1 {
		t.Fatalf("Select = %v, %v", got, err)
	}
	got[0].Autoplan.WhenModified[0] = "changed"
	got[0].ApplyRequirements[0] = "changed"
	if cfg.Projects[0].Autoplan.WhenModified[0] == "changed" || cfg.Projects[0].ApplyRequirements[0] == "changed" {
		t.Error("modifying Select's result changed the config")
	}
}

func TestSelectAutodiscover(t *testing.T) {
	tests := []struct {
		name    string
		files   []string // files in the checkout
		changed []string
		want    []string
	}{
		{"changed tf file's dir", []string{"app/main.tf"}, []string{"app/main.tf"}, []string{"app:default"}},
		{"changed tfvars file's dir", []string{"app/main.tf", "app/prod.tfvars"}, []string{"app/prod.tfvars"}, []string{"app:default"}},
		{"tf.json counts", []string{"app/main.tf.json"}, []string{"app/main.tf.json"}, []string{"app:default"}},
		{"root dir", []string{"main.tf"}, []string{"main.tf"}, []string{".:default"}},
		{"OpenTofu files count", []string{"app/main.tofu"}, []string{"app/main.tofu"}, []string{"app:default"}},
		{"tofu.json counts", []string{"app/main.tofu.json", "app/x.tfvars"}, []string{"app/x.tfvars"}, []string{"app:default"}},
		{"non terraform change ignored", []string{"app/main.tf", "app/README.md"}, []string{"app/README.md"}, nil},
		{"dir without tf files ignored", []string{"vars/prod.tfvars"}, []string{"vars/prod.tfvars"}, nil},
		{"deleted project ignored", []string{"other/main.tf"}, []string{"gone/main.tf"}, nil},
		{"module under project plans project", []string{"app/main.tf", "app/modules/db/main.tf"}, []string{"app/modules/db/main.tf"}, []string{"app:default"}},
		{"deep module plans dir above first modules", []string{"a/b/main.tf", "a/b/modules/c/modules/d/x.tf"}, []string{"a/b/modules/c/modules/d/x.tf"}, []string{"a/b:default"}},
		{"root modules dir plans root with tf", []string{"main.tf", "modules/vpc/main.tf"}, []string{"modules/vpc/main.tf"}, []string{".:default"}},
		{"root modules dir without root tf", []string{"modules/vpc/main.tf", "project1/main.tf"}, []string{"modules/vpc/main.tf"}, nil},
		{"module itself is not a project", []string{"app/modules/main.tf"}, []string{"app/modules/main.tf"}, nil},
		{"modules as a file name is not a modules dir", []string{"app/main.tf"}, []string{"app/modules.tf"}, []string{"app:default"}},
		{"env dir plans parent", []string{"app/main.tf", "app/env/prod.tfvars"}, []string{"app/env/prod.tfvars"}, []string{"app:default"}},
		{"env dir with tf is its own project", []string{"app/main.tf", "app/env/main.tf"}, []string{"app/env/main.tf"}, []string{"app/env:default"}},
		{"dedupe and sort", []string{"a/main.tf", "b/main.tf", "b/modules/x/main.tf"},
			[]string{"b/main.tf", "a/x.tf", "a/y.tf", "b/vars.tfvars", "b/modules/x/main.tf", "./a/z.tf"}, []string{"a:default", "b:default"}},
		{"escaping paths ignored", []string{"main.tf"}, []string{"../main.tf", "/etc/x.tf"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			repo := writeRepo(t, tt.files...)
			got, err := repocfg.Select(nil, repo, tt.changed)
			if err != nil {
				t.Fatalf("Select: %v", err)
			}
			if g := labels(got); !reflect.DeepEqual(g, append([]string{}, tt.want...)) {
				t.Errorf("got %v, want %v", g, tt.want)
			}
			for _, p := range got {
				if !reflect.DeepEqual(p.Autoplan, defaultAutoplan) || p.Name != "" || p.Workflow != "" {
					t.Errorf("discovered project %+v, want defaults", p)
				}
			}
		})
	}
}

func TestSelectHandBuiltConfigWithBadGlob(t *testing.T) {
	repo := writeRepo(t, "a/main.tf")
	cfg := &repocfg.Config{Projects: []repocfg.Project{{Dir: "a", Workspace: "default", Autoplan: repocfg.Autoplan{Enabled: true, WhenModified: []string{"[a"}}}}}
	_, err := repocfg.Select(cfg, repo, []string{"a/main.tf"})
	wantInvalid(t, err, `when_modified pattern "[a" is not a valid glob`)
}

// A plan comment without flags plans every modified project, autoplan
// enabled or not (Atlantis's BuildPlanCommands); autoplan skips the disabled.
func TestModifiedIncludesAutoplanDisabled(t *testing.T) {
	repo := writeRepo(t, "off/main.tf", "on/main.tf", "narrow/main.tf")
	cfg := mustParse(t, lines(`version: 3`, `projects:`,
		`- dir: off`, `  autoplan: {enabled: false}`,
		`- dir: narrow`, `  autoplan: {enabled: false, when_modified: ["vars.tf"]}`,
		`- dir: on`))
	changed := []string{"off/main.tf", "on/main.tf", "narrow/main.tf"}
	tests := []struct {
		name string
		fn   func(*repocfg.Config, string, []string) ([]repocfg.Project, error)
		want []string
	}{
		{"comment plan (Modified)", repocfg.Modified, []string{"off:default", "on:default"}},
		{"autoplan (Select)", repocfg.Select, []string{"on:default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.fn(cfg, repo, changed)
			if err != nil {
				t.Fatal(err)
			}
			if g := labels(got); !reflect.DeepEqual(g, tt.want) {
				t.Errorf("got %v, want %v", g, tt.want)
			}
		})
	}
}

func TestAffected(t *testing.T) {
	repo := writeRepo(t, "a/main.tf", "b/main.tf", "modules/m/main.tf", "adhoc/main.tf")
	cfg := mustParse(t, lines(`version: 3`, `projects:`,
		`- dir: a`, `  autoplan: {when_modified: ["*.tf", "../modules/**/*.tf"]}`,
		`- dir: b`, `  autoplan: {enabled: false}`,
		`- name: bare`, `  dir: b`, `  workspace: other`, `  autoplan: {when_modified: []}`))
	tests := []struct {
		name             string
		cfg              *repocfg.Config
		project, dir, ws string
		files            []string
		want             bool
	}{
		{"own file", cfg, "", "a", "default", []string{"a/main.tf"}, true},
		{"other project's file", cfg, "", "a", "default", []string{"b/main.tf", "README.md"}, false},
		{"module it watches", cfg, "", "a", "default", []string{"modules/m/main.tf"}, true},
		{"no files", cfg, "", "a", "default", nil, false},
		{"autoplan disabled still watched", cfg, "", "b", "default", []string{"b/x.tf"}, true},
		{"no patterns: any change", cfg, "bare", "b", "other", []string{"README.md"}, true},
		{"ad-hoc dir uses default patterns", cfg, "", "adhoc", "default", []string{"adhoc/main.tf"}, true},
		{"ad-hoc dir ignores others", cfg, "", "adhoc", "default", []string{"a/main.tf"}, false},
		{"autodiscovered: own dir", nil, "", "a", "default", []string{"a/main.tf"}, true},
		{"autodiscovered: other dir", nil, "", "a", "default", []string{"b/main.tf"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := repocfg.Affected(tt.cfg, repo, tt.project, tt.dir, tt.ws, tt.files)
			if err != nil || got != tt.want {
				t.Fatalf("Affected = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}
