package repocfg_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

var defaultAutoplan = repocfg.Autoplan{Enabled: true, WhenModified: []string{"**/*.tf*", "**/terragrunt.hcl", "**/.terraform.lock.hcl"}}

var yes = true

func TestParseAllKeys(t *testing.T) {
	cfg := mustParse(t, lines(
		`version: 3`,
		`automerge: true`,
		`delete_source_branch_on_merge: true`,
		`parallel_plan: true`,
		`parallel_apply: true`,
		`emoji_reaction: eyes`,
		`abort_on_execution_order_fail: true`,
		`allowed_regexp_prefixes: [dev/, staging/]`,
		`projects:`,
		`- name: my-project-name`,
		`  branch: /main/`,
		`  dir: ./project1/`,
		`  workspace: staging`,
		`  execution_order_group: 2`,
		`  delete_source_branch_on_merge: true`,
		`  repo_locking: true`,
		`  repo_locks: {mode: on_plan}`,
		`  custom_policy_check: false`,
		`  policy_check: true`,
		`  terraform_version: v1.5.7`,
		`  terraform_distribution: terraform`,
		`  depends_on: [other]`,
		`  silence_pr_comments: [apply]`,
		`  autoplan:`,
		`    when_modified: ["*.tf", "../modules/**/*.tf"]`,
		`    enabled: false`,
		`  apply_requirements: [mergeable, approved, undiverged]`,
		`  plan_requirements: [approved]`,
		`  import_requirements: [mergeable]`,
		`  workflow: myworkflow`,
		`- name: other`,
		`  dir: .`,
		`workflows:`,
		`  myworkflow:`,
		`    plan:`,
		`      steps:`,
		`      - run: my-custom-command arg1 arg2`,
		`      - init`,
		`      - plan:`,
		`          extra_args: ["-lock", "false"]`,
		`      - env:`,
		`          name: FOO`,
		`          value: bar`,
		`      - multienv: ./envs.sh`,
		`    apply:`,
		`      steps:`,
		`      - run: {command: echo hi, output: hide}`,
		`      - apply`,
		`    policy_check:`,
		`      steps: []`,
	))
	want := &repocfg.Config{
		Version:       3,
		Automerge:     &yes,
		ParallelPlan:  &yes,
		ParallelApply: &yes,
		Explicit:      true,
		// Acted on since execution order groups and depends_on run.
		AbortOnExecutionOrderFail: true,
		DeleteSourceBranchOnMerge: boolp(true),
		Projects: []repocfg.Project{{
			DeleteSourceBranchOnMerge: boolp(true),
			CustomPolicyCheck:         boolp(false),
			PolicyCheck:               boolp(true),
			RepoLocking:               boolp(true),
			RepoLocks:                 repocfg.LockOnPlan,
			Name:                      "my-project-name",
			Dir:                       "project1",
			Workspace:                 "staging",
			TerraformVersion:          "v1.5.7",
			TerraformDistribution:     "terraform",
			Workflow:                  "myworkflow",
			Autoplan:                  repocfg.Autoplan{Enabled: false, WhenModified: []string{"*.tf", "../modules/**/*.tf"}},
			ApplyRequirements:         []string{"mergeable", "approved", "undiverged"},
			PlanRequirements:          []string{"approved"},
			ExecutionOrderGroup:       2,
			ImportRequirements:        []string{"mergeable"},
			DependsOn:                 []string{"other"},
			SilencePRComments:         []string{"apply"},
		}, {
			Name:      "other",
			Dir:       ".",
			Workspace: "default",
			Autoplan:  defaultAutoplan,
		}},
		Workflows: map[string]repocfg.Workflow{
			"myworkflow": {
				Name: "myworkflow",
				Plan: []repocfg.Step{
					{Name: "run", Args: map[string]any{"command": "my-custom-command arg1 arg2"}},
					{Name: "init"},
					{Name: "plan", Args: map[string]any{"extra_args": []string{"-lock", "false"}}},
					{Name: "env", Args: map[string]any{"name": "FOO", "value": "bar"}},
					{Name: "multienv", Args: map[string]any{"command": "./envs.sh"}},
				},
				Apply: []repocfg.Step{
					{Name: "run", Args: map[string]any{"command": "echo hi", "output": "hide"}},
					{Name: "apply"},
				},
				PolicyCheck: []repocfg.Step{},
			},
		},
	}
	want.Warnings = []string{
		"atlantis.yaml line 6: `emoji_reaction` is accepted but not acted on by Atoll yet",
	}
	if b := cfg.Projects[0].Branch; b == nil || b.String() != "main" {
		t.Errorf("projects[0].branch = %v, want main", b)
	}
	cfg.Projects[0].Branch = nil
	if got := exported(cfg); !reflect.DeepEqual(got, exported(want)) {
		t.Errorf("got  %+v\nwant %+v", got, exported(want))
	}
	// Acted on with --enable-regexp-cmd.
	if want := []string{"dev/", "staging/"}; !reflect.DeepEqual(cfg.AllowedRegexpPrefixes, want) {
		t.Errorf("AllowedRegexpPrefixes = %q, want %q", cfg.AllowedRegexpPrefixes, want)
	}
}

func TestParseValid(t *testing.T) {
	tests := []struct {
		name  string
		yaml  string
		check func(t *testing.T, cfg *repocfg.Config)
	}{
		{"v2 minimal defaults", lines(`version: 2`, `projects:`, `- dir: project1`), func(t *testing.T, cfg *repocfg.Config) {
			want := []repocfg.Project{{Dir: "project1", Workspace: "default", Autoplan: defaultAutoplan}}
			if cfg.Version != 2 || !cfg.Explicit || !reflect.DeepEqual(cfg.Projects, want) {
				t.Errorf("got %+v", cfg)
			}
			if cfg.Workflows == nil {
				t.Error("Workflows is nil, want empty map")
			}
		}},
		{"version only", lines(`version: 3`), func(t *testing.T, cfg *repocfg.Config) {
			if len(cfg.Projects) != 0 || cfg.Automerge != nil || cfg.ParallelPlan != nil || cfg.ParallelApply != nil {
				t.Errorf("got %+v", cfg)
			}
		}},
		{"null sections keep defaults", lines(`version: 3`, `automerge:`, `projects:`, `workflows: ~`), func(t *testing.T, cfg *repocfg.Config) {
			if len(cfg.Projects) != 0 || cfg.Workflows == nil || cfg.Automerge != nil {
				t.Errorf("got %+v", cfg)
			}
		}},
		{"dir is cleaned, a leading slash is the root as in Atlantis", lines(`version: 3`, `projects:`, `- dir: ./a//b/./c/`, `- dir: ./`, `- dir: /etc`, `- {dir: /, workspace: w}`), func(t *testing.T, cfg *repocfg.Config) {
			if got := labels(cfg.Projects); !reflect.DeepEqual(got, []string{"a/b/c:default", ".:default", "etc:default", ".:w"}) {
				t.Errorf("got %v", got)
			}
		}},
		{"same dir and workspace when all named", lines(`version: 3`, `projects:`, `- {name: a, dir: x}`, `- {name: b, dir: x}`, `- {dir: x, workspace: other}`), func(t *testing.T, cfg *repocfg.Config) {
			if len(cfg.Projects) != 3 {
				t.Errorf("got %v", labels(cfg.Projects))
			}
		}},
		{"names may contain slashes and dots", lines(`version: 3`, `projects:`, `- {name: prod/net_v1.2-x, dir: x}`), func(t *testing.T, cfg *repocfg.Config) {
			if cfg.Projects[0].Name != "prod/net_v1.2-x" {
				t.Errorf("got %q", cfg.Projects[0].Name)
			}
		}},
		{"terraform version forms", lines(`version: 3`, `projects:`,
			`- {name: a, dir: x, terraform_version: 1.5.7}`,
			`- {name: b, dir: x, terraform_version: 0.12.0-beta1}`,
			`- {name: c, dir: x, terraform_version: 1.5}`,
			`- {name: d, dir: x, terraform_version: "~> 1.5"}`,
			`- {name: e, dir: x, terraform_version: ">= 1.2.0, < 2.0.0"}`,
			`- {name: f, dir: x, terraform_version: "=1.6.0"}`,
			`- {name: g, dir: x, terraform_version: v1.7.0+ent}`,
		), func(t *testing.T, cfg *repocfg.Config) {
			var got []string
			for _, p := range cfg.Projects {
				got = append(got, p.TerraformVersion)
			}
			want := []string{"1.5.7", "0.12.0-beta1", "1.5", "~> 1.5", ">= 1.2.0, < 2.0.0", "=1.6.0", "v1.7.0+ent"}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got %q", got)
			}
		}},
		{"autoplan partial keeps defaults", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan: {enabled: false}`, `- dir: b`, `  autoplan: {when_modified: []}`, `- dir: c`, `  autoplan:`), func(t *testing.T, cfg *repocfg.Config) {
			a, b, c := cfg.Projects[0].Autoplan, cfg.Projects[1].Autoplan, cfg.Projects[2].Autoplan
			if a.Enabled || !reflect.DeepEqual(a.WhenModified, defaultAutoplan.WhenModified) {
				t.Errorf("a = %+v", a)
			}
			if !b.Enabled || b.WhenModified == nil || len(b.WhenModified) != 0 {
				t.Errorf("b = %#v, want enabled with an empty non-nil list", b)
			}
			if !reflect.DeepEqual(c, defaultAutoplan) {
				t.Errorf("c = %+v", c)
			}
		}},
		{"when_modified negation and escapes", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan: {when_modified: ["**/*.tf", "!test/**", "\\[x\\].tf"]}`), func(t *testing.T, cfg *repocfg.Config) {
			if got := cfg.Projects[0].Autoplan.WhenModified; len(got) != 3 {
				t.Errorf("got %q", got)
			}
		}},
		{"workflow defined after projects and default workflow", lines(`version: 3`, `projects:`, `- {name: a, dir: x, workflow: later}`, `- {name: b, dir: x, workflow: default}`, `workflows:`, `  later:`), func(t *testing.T, cfg *repocfg.Config) {
			if w, ok := cfg.Workflows["later"]; !ok || w.Name != "later" || w.Plan != nil || w.Apply != nil {
				t.Errorf("workflows = %+v", cfg.Workflows)
			}
		}},
		{"anchors, aliases and merge keys", lines(
			`version: 3`,
			`projects:`,
			`- &base`,
			`  name: base`,
			`  dir: shared`,
			`  workspace: staging`,
			`  terraform_version: 1.6.0`,
			`- <<: *base`,
			`  name: prod`,
			`  workspace: prod`,
		), func(t *testing.T, cfg *repocfg.Config) {
			p := cfg.Projects[1]
			if p.Name != "prod" || p.Dir != "shared" || p.Workspace != "prod" || p.TerraformVersion != "1.6.0" {
				t.Errorf("merged project = %+v", p)
			}
		}},
		{"alias for a whole autoplan block", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan: &off {enabled: false}`, `- dir: b`, `  autoplan: *off`), func(t *testing.T, cfg *repocfg.Config) {
			if cfg.Projects[1].Autoplan.Enabled {
				t.Errorf("b autoplan = %+v", cfg.Projects[1].Autoplan)
			}
		}},
		{"an unset setting takes the server's default, a set one overrides it", lines(`version: 3`, `automerge: false`), func(t *testing.T, cfg *repocfg.Config) {
			if repocfg.Setting(cfg.Automerge, true) || !repocfg.Setting(cfg.ParallelPlan, true) || repocfg.Setting(cfg.ParallelApply, false) {
				t.Errorf("got automerge %v parallel_plan %v parallel_apply %v", cfg.Automerge, cfg.ParallelPlan, cfg.ParallelApply)
			}
		}},
		{"YAML 1.1 plain booleans", lines(`version: 3`, `automerge: yes`, `parallel_plan: on`, `parallel_apply: off`), func(t *testing.T, cfg *repocfg.Config) {
			if !*cfg.Automerge || !*cfg.ParallelPlan || *cfg.ParallelApply {
				t.Errorf("got %+v", cfg)
			}
		}},
		{"numeric scalars are strings", lines(`version: 3`, `projects:`, `- {name: 2024, dir: 2024, workspace: 01}`), func(t *testing.T, cfg *repocfg.Config) {
			if got := labels(cfg.Projects); !reflect.DeepEqual(got, []string{"2024=2024:01"}) {
				t.Errorf("got %v", got)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.check(t, mustParse(t, tt.yaml))
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // message fragments; the first is the location prefix
	}{
		// Syntax and document shape.
		// Lines of syntax errors are yaml.v3's, which for some errors is the
		// line of the enclosing construct.
		{"tab indentation", lines(`version: 3`, `projects:`, `- dir: a`, "\tworkspace: b"), []string{"atlantis.yaml line 3: invalid YAML: found a tab character"}},
		{"mapping value in scalar", lines(`version: 3`, `projects:`, `- dir: a`, `  workspace: b: c`), []string{"atlantis.yaml line 4: invalid YAML: mapping values are not allowed"}},
		{"reserved character", lines(`version: 3`, `projects:`, `- dir: a`, `  name: @x`), []string{"atlantis.yaml line 4: invalid YAML: found character that cannot start any token"}},
		{"syntax error without line", lines(`version: 3: x`), []string{"atlantis.yaml: invalid YAML: mapping values are not allowed"}},
		{"empty file", "", []string{"atlantis.yaml line 1: version: is required"}},
		{"comments only", "# nothing\n", []string{"atlantis.yaml line 1: version: is required"}},
		{"top level list", lines(`- dir: a`), []string{"atlantis.yaml line 1: must be a mapping, got a list"}},
		{"top level scalar", lines(`hello`), []string{"atlantis.yaml line 1: must be a mapping, got the string \"hello\""}},
		{"duplicate key", lines(`version: 3`, `automerge: true`, `automerge: false`), []string{"atlantis.yaml line 3: automerge: key is defined twice (first on line 2)"}},

		// version.
		{"version missing", lines(`automerge: true`, `projects: []`), []string{"atlantis.yaml line 1: version: is required"}},
		{"version 4", lines(`# header`, `version: 4`), []string{"atlantis.yaml line 2: version: must be 2 or 3, got 4"}},
		{"version 1", lines(`version: 1`), []string{"line 1: version: must be 2 or 3, got 1"}},
		{"version quoted", lines(`version: "3"`), []string{"line 1: version: must be a whole number, got the string \"3\""}},
		{"version null", lines(`version:`), []string{"line 1: version: must be a whole number, got null"}},
		{"version float", lines(`version: 3.0`), []string{"line 1: version: must be a whole number, got a number"}},

		// Unknown keys and top-level types.
		{"unknown top-level key", lines(`version: 3`, `autoplan: true`), []string{"atlantis.yaml line 2: unknown key \"autoplan\""}},
		{"unknown top-level key without value", lines(`version: 3`, `projcts:`), []string{"atlantis.yaml line 2: unknown key \"projcts\""}},
		{"unknown project key without value", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplann:`), []string{"line 4: projects[0]: unknown key \"autoplann\""}},
		{"unknown autoplan key without value", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan:`, `    enable:`), []string{"line 5: projects[0].autoplan: unknown key \"enable\""}},
		{"unknown project key", lines(`version: 3`, `projects:`, `- dir: a`, `  dirr: b`), []string{"atlantis.yaml line 4: projects[0]: unknown key \"dirr\""}},
		{"projects is a string", lines(`version: 3`, `projects: foo`), []string{"atlantis.yaml line 2: projects: must be a list of projects, got the string \"foo\""}},
		{"projects is a mapping", lines(`version: 3`, `projects:`, `  dir: a`), []string{"atlantis.yaml line 3: projects: must be a list of projects, got a mapping"}},
		{"project is a string", lines(`version: 3`, `projects:`, `- a`), []string{"atlantis.yaml line 3: projects[0]: must be a mapping, got the string \"a\""}},
		{"automerge quoted yes", lines(`version: 3`, `automerge: "yes"`), []string{"atlantis.yaml line 2: automerge: must be a boolean (true or false), got the string \"yes\""}},
		{"parallel_plan number", lines(`version: 3`, `parallel_plan: 1`), []string{"line 2: parallel_plan: must be a boolean"}},
		{"ignored bool key still typed", lines(`version: 3`, `delete_source_branch_on_merge: maybe`), []string{"line 2: delete_source_branch_on_merge: must be a boolean"}},
		{"allowed_regexp_prefixes scalar", lines(`version: 3`, `allowed_regexp_prefixes: dev/`), []string{"line 2: allowed_regexp_prefixes: must be a list of strings"}},
		{"workflows is a list", lines(`version: 3`, `workflows: []`), []string{"line 2: workflows: must be a mapping, got a list"}},

		// dir.
		{"dir missing", lines(`version: 3`, `projects:`, `- name: a`, `  workspace: b`), []string{"atlantis.yaml line 3: projects[0]: dir is required"}},
		{"dir null", lines(`version: 3`, `projects:`, `- dir:`), []string{"atlantis.yaml line 3: projects[0].dir: is required"}},
		{"dir empty", lines(`version: 3`, `projects:`, `- dir: ""`), []string{"line 3: projects[0].dir: must not be empty"}},
		{"dir list", lines(`version: 3`, `projects:`, `- dir: [a]`), []string{"atlantis.yaml line 3: projects[0].dir: must be a string, got a list"}},
		{"dir dotdot", lines(`version: 3`, `automerge: true`, `projects:`, `- dir: a`, `  name: a`, `- name: b`, `  dir: ../b`), []string{"atlantis.yaml line 7: projects[1].dir: must not contain .."}},
		{"dir dotdot inside", lines(`version: 3`, `projects:`, `- dir: a/../../b`), []string{"line 3: projects[0].dir: must not contain .."}},
		{"dir dotdot that cleans inside", lines(`version: 3`, `projects:`, `- dir: a/../b`), []string{"line 3: projects[0].dir: must not contain .."}},
		{"dir dotdot in a name", lines(`version: 3`, `projects:`, `- dir: a..b`), []string{"line 3: projects[0].dir: must not contain .."}},
		{"dir bad glob", lines(`version: 3`, `projects:`, `- dir: "envs/[a"`), []string{"line 3: projects[0].dir: \"envs/[a\" is not a valid glob pattern"}},

		// workspace and name.
		{"workspace leading dash", lines(`version: 3`, `projects:`, `- dir: a`, `  workspace: -x`), []string{"atlantis.yaml line 4: projects[0].workspace: \"-x\" is not a valid workspace name"}},
		{"workspace with space", lines(`version: 3`, `projects:`, `- {dir: a, workspace: "a b"}`), []string{"line 3: projects[0].workspace: \"a b\" is not a valid"}},
		{"workspace with slash", lines(`version: 3`, `projects:`, `- {dir: a, workspace: a/b}`), []string{"line 3: projects[0].workspace:"}},
		{"workspace mapping", lines(`version: 3`, `projects:`, `- dir: a`, `  workspace:`, `    x: y`), []string{"line 5: projects[0].workspace: must be a string, got a mapping"}},
		{"name with space", lines(`version: 3`, `projects:`, `- {dir: a, name: "my project"}`), []string{"line 3: projects[0].name: \"my project\" may contain only"}},
		{"name empty", lines(`version: 3`, `projects:`, `- {dir: a, name: ""}`), []string{"line 3: projects[0].name: must not be empty"}},

		// Cross-project checks.
		{"same dir and workspace unnamed", lines(`version: 3`, `projects:`, `- dir: a`, `- dir: ./a/`), []string{"atlantis.yaml line 3: projects[0]: 2 projects have dir \"a\" and workspace \"default\", so each must have a name"}},
		{"same dir and workspace one unnamed", lines(`version: 3`, `projects:`, `- {dir: a, name: x}`, `- dir: a`), []string{"atlantis.yaml line 4: projects[1]: 2 projects have dir \"a\""}},
		{"duplicate names", lines(`version: 3`, `projects:`, `- name: x`, `  dir: a`, `- name: x`, `  dir: b`), []string{"atlantis.yaml line 5: projects[1].name: project name \"x\" is already used by projects[0] (line 3)"}},
		{"workflow undefined", lines(`version: 3`, `projects:`, `- dir: a`, `  workflow: custom`, `workflows:`, `  other: {}`), []string{"atlantis.yaml line 4: projects[0].workflow: workflow \"custom\" is not defined in workflows (defined: other)"}},
		{"workflow undefined no workflows", lines(`version: 3`, `projects:`, `- {dir: a, workflow: custom}`), []string{"line 3: projects[0].workflow: workflow \"custom\" is not defined in workflows"}},

		// Requirements.
		{"apply requirement unknown", lines(`version: 3`, `projects:`, `- dir: a`, `  apply_requirements:`, `  - approved`, `  - reviewed`), []string{"atlantis.yaml line 6: projects[0].apply_requirements[1]: unknown requirement \"reviewed\" (allowed: approved, mergeable, undiverged)"}},
		{"plan requirement unknown", lines(`version: 3`, `projects:`, `- {dir: a, plan_requirements: [policies_passed]}`), []string{"line 3: projects[0].plan_requirements[0]: unknown requirement \"policies_passed\""}},
		{"import requirement unknown", lines(`version: 3`, `projects:`, `- {dir: a, import_requirements: [nope]}`), []string{"line 3: projects[0].import_requirements[0]: unknown requirement"}},
		{"apply requirements scalar", lines(`version: 3`, `projects:`, `- dir: a`, `  apply_requirements: approved`), []string{"line 4: projects[0].apply_requirements: must be a list of strings, got the string \"approved\""}},
		{"apply requirements nested list", lines(`version: 3`, `projects:`, `- {dir: a, apply_requirements: [[approved]]}`), []string{"line 3: projects[0].apply_requirements[0]: must be a string, got a list"}},

		// terraform_version.
		{"terraform version word", lines(`version: 3`, `projects:`, `- dir: a`, `  terraform_version: latest`), []string{"atlantis.yaml line 4: projects[0].terraform_version: \"latest\" is not a Terraform version"}},
		{"terraform version wildcard", lines(`version: 3`, `projects:`, `- {dir: a, terraform_version: 1.x}`), []string{"line 3: projects[0].terraform_version: \"1.x\" is not"}},
		{"terraform version empty", lines(`version: 3`, `projects:`, `- {dir: a, terraform_version: ""}`), []string{"line 3: projects[0].terraform_version: \"\" is not"}},
		{"terraform version bad constraint", lines(`version: 3`, `projects:`, `- {dir: a, terraform_version: ">= 1.0, banana"}`), []string{"line 3: projects[0].terraform_version:"}},

		// autoplan.
		{"autoplan not a mapping", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan: true`), []string{"line 4: projects[0].autoplan: must be a mapping, got a boolean"}},
		{"autoplan unknown key", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan:`, `    when_modifed: ["*.tf"]`), []string{"atlantis.yaml line 5: projects[0].autoplan: unknown key \"when_modifed\""}},
		{"autoplan enabled quoted", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan:`, `    enabled: "false"`), []string{"line 5: projects[0].autoplan.enabled: must be a boolean"}},
		{"when_modified bad glob", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan:`, `    when_modified:`, `    - "*.tf"`, `    - "[a"`), []string{"atlantis.yaml line 7: projects[0].autoplan.when_modified[1]: \"[a\" is not a valid glob pattern"}},
		{"when_modified empty pattern", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan: {when_modified: ["!"]}`), []string{"line 4: projects[0].autoplan.when_modified[0]: pattern must not be empty"}},
		{"when_modified scalar", lines(`version: 3`, `projects:`, `- dir: a`, `  autoplan: {when_modified: "*.tf"}`), []string{"line 4: projects[0].autoplan.when_modified: must be a list of strings"}},

		// Ignored project keys are still type-checked.
		{"execution_order_group quoted", lines(`version: 3`, `projects:`, `- {dir: a, execution_order_group: "1"}`), []string{"line 3: projects[0].execution_order_group: must be a whole number"}},
		{"branch list", lines(`version: 3`, `projects:`, `- {dir: a, branch: [main]}`), []string{"line 3: projects[0].branch: must be a string"}},
		{"depends_on scalar", lines(`version: 3`, `projects:`, `- {dir: a, depends_on: b}`), []string{"line 3: projects[0].depends_on: must be a list of strings"}},

		// Workflows.
		{"workflow unknown stage", lines(`version: 3`, `workflows:`, `  w:`, `    destroy:`, `      steps: [init]`), []string{"atlantis.yaml line 4: workflows.w: unknown key \"destroy\""}},
		{"stage unknown key", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      step: [init]`), []string{"line 5: workflows.w.plan: unknown key \"step\""}},
		{"steps not a list", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps: init`), []string{"line 5: workflows.w.plan.steps: must be a list of steps"}},
		{"unknown step", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - init`, `      - fmt`), []string{"atlantis.yaml line 7: workflows.w.plan.steps[1]: unknown step \"fmt\""}},
		{"unknown mapping step", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - shell: ls`), []string{"line 6: workflows.w.plan.steps[0]: unknown key \"shell\""}},
		{"step with two keys", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - {run: a, init: {}}`), []string{"line 6: workflows.w.plan.steps[0]: a step must have exactly one key, got 2"}},
		{"run without command", lines(`version: 3`, `workflows:`, `  w:`, `    apply:`, `      steps:`, `      - run: ""`), []string{"line 6: workflows.w.apply.steps[0].run: command must not be empty"}},
		{"env without name", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - env:`, `          value: x`), []string{"line 7: workflows.w.plan.steps[0].env: name is required"}},
		{"extra_args not a list", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - plan: {extra_args: -lock=false}`), []string{"line 6: workflows.w.plan.steps[0].plan.extra_args: must be a list of strings"}},
		{"builtin step unknown option", lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - init: {args: [x]}`), []string{"line 6: workflows.w.plan.steps[0].init: unknown key \"args\""}},

		// Merge keys that refer to themselves must not hang.
		{"self-merging anchor", lines(`version: 3`, `projects:`, `- &p`, `  <<: *p`, `  dir: a`), []string{"projects[0]: merge keys (<<) nested too deeply"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := repocfg.Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error", cfg)
			}
			wantInvalid(t, err, tt.want...)
		})
	}
}

func boolp(b bool) *bool { return &b }
