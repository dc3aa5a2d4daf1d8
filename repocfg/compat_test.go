package repocfg_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// referenceYAML has the shape of the "Example Using All Keys" of Atlantis's
// repo-level atlantis.yaml documentation (v0.47): every key, in that
// order, plus the keys that page describes elsewhere (emoji_reaction,
// repo_locks, silence_pr_comments and policies at the top) and the step
// forms of Atlantis's step documentation. The values differ; one change of
// substance: depends_on names a project that exists (see TestParseDependsOn).
var referenceYAML = lines(
	`version: 3`, // 1
	`automerge: true`,
	`autodiscover:`,
	`  mode: auto`,
	`  ignore_paths:`, // 5
	`  - vendor/**`,
	`delete_source_branch_on_merge: true`,
	`parallel_plan: true`,
	`parallel_apply: true`,
	`abort_on_execution_order_fail: true`, // 10
	`emoji_reaction: eyes`,
	`repo_locks:`,
	`  mode: on_apply`,
	`silence_pr_comments: [plan]`,
	`projects:`, // 15
	`- name: network`,
	`  branch: /release-.*/`,
	`  dir: infra/network`,
	`  workspace: prod`,
	`  terraform_distribution: opentofu`, // 20
	`  terraform_version: v1.6.2`,
	`  delete_source_branch_on_merge: true`,
	`  repo_locking: true`,
	`  repo_locks:`,
	`    mode: on_plan`, // 25
	`  custom_policy_check: false`,
	`  autoplan:`,
	`    when_modified: ["*.tf", "../modules/**/*.tf", ".terraform.lock.hcl"]`,
	`    enabled: true`,
	`  plan_requirements: [mergeable, approved, undiverged]`, // 30
	`  apply_requirements: [mergeable, approved, undiverged]`,
	`  import_requirements: [mergeable, approved, undiverged]`,
	`  silence_pr_comments: ["apply"]`,
	`  execution_order_group: 1`,
	`  depends_on:`, // 35
	`    - base`,
	`  workflow: custom`,
	`- name: base`,
	`  dir: infra/base`,
	`  policy_check: true`, // 40
	`workflows:`,
	`  custom:`,
	`    plan:`,
	`      steps:`,
	`      - run: make check ARG=1`, // 45
	`      - run:`,
	`          command: make check`,
	`          output: hide`,
	`      - run:`,
	`          command: terraform plan -no-color`, // 50
	`          output: ["strip_refreshing", {"filter_regex": "((?i)secret:\\s\")[^\"]*"}]`,
	`      - run:`,
	`          command: echo ${X::7}`,
	`          shell: bash`,
	`          shellArgs: ["--verbose", "-c"]`, // 55
	`      - env:`,
	`          name: TF_VAR_region`,
	`          value: eu-west-1`,
	`      - env:`,
	`          name: COMMIT`, // 60
	`          command: git rev-parse HEAD`,
	`          shell: sh`,
	`          shellArgs: -c`,
	`      - multienv: ./envs.sh`,
	`      - multienv:`, // 65
	`          command: ./envs.sh`,
	`          output: hide`,
	`      - init`,
	`      - plan:`,
	`          extra_args: ["-lock", "false"]`, // 70
	`      - show`,
	`    apply:`,
	`      steps:`,
	`      - apply: {}`,
	`    policy_check:`, // 75
	`      steps: [show, policy_check]`,
	`    import:`,
	`      steps: [init, import]`,
	`    state_rm:`,
	`      steps: [state_rm]`, // 80
	`allowed_regexp_prefixes:`,
	`- dev/`,
	`policies:`,
	`  conftest_version: 0.46.0`,
	`  owners:`, // 85
	`    users: [alice]`,
	`  policy_sets:`,
	`  - name: base`,
	`    path: policies/`,
	`    source: local`, // 90
	`    approve_count: 2`,
)

func TestParseAtlantisReference(t *testing.T) {
	cfg := mustParse(t, referenceYAML)
	if !reflect.DeepEqual(cfg.SilencePRComments, []string{"plan"}) {
		t.Errorf("top-level silence_pr_comments = %q", cfg.SilencePRComments)
	}
	if !*cfg.Automerge || !*cfg.ParallelPlan || !*cfg.ParallelApply || cfg.Version != 3 || cfg.DeleteSourceBranchOnMerge == nil || !*cfg.DeleteSourceBranchOnMerge {
		t.Errorf("top-level settings = %+v", cfg)
	}
	net := cfg.Projects[0]
	want := repocfg.Project{
		Name: "network", Dir: "infra/network", Workspace: "prod", TerraformVersion: "v1.6.2", TerraformDistribution: "opentofu", Workflow: "custom",
		Autoplan:            repocfg.Autoplan{Enabled: true, WhenModified: []string{"*.tf", "../modules/**/*.tf", ".terraform.lock.hcl"}},
		ApplyRequirements:   []string{"mergeable", "approved", "undiverged"},
		PlanRequirements:    []string{"mergeable", "approved", "undiverged"},
		ImportRequirements:  []string{"mergeable", "approved", "undiverged"},
		ExecutionOrderGroup: 1, DependsOn: []string{"base"}, DeleteSourceBranchOnMerge: boolp(true),
		CustomPolicyCheck: boolp(false), RepoLocking: boolp(true), RepoLocks: repocfg.LockOnPlan,
		SilencePRComments: []string{"apply"},
	}
	if cfg.RepoLocks != repocfg.LockOnApply {
		t.Errorf("top-level repo_locks = %q, want on_apply", cfg.RepoLocks)
	}
	if net.Branch == nil || net.Branch.String() != "release-.*" {
		t.Errorf("branch = %v, want release-.*", net.Branch)
	}
	net.Branch = nil
	if !reflect.DeepEqual(net, want) {
		t.Errorf("project = %+v\nwant      %+v", net, want)
	}
	w := cfg.Workflows["custom"]
	var names []string
	for _, s := range w.Plan {
		names = append(names, s.Name)
	}
	if want := []string{"run", "run", "run", "run", "env", "env", "multienv", "multienv", "init", "plan", "show"}; !reflect.DeepEqual(names, want) {
		t.Errorf("plan steps = %q, want %q", names, want)
	}
	if got := w.Plan[2].Args["output"]; !reflect.DeepEqual(got, []any{"strip_refreshing", map[string]any{"filter_regex": `((?i)secret:\s")[^"]*`}}) {
		t.Errorf("run output = %#v", got)
	}
	if got := w.Plan[5].Args; !reflect.DeepEqual(got, map[string]any{"name": "COMMIT", "command": "git rev-parse HEAD", "shell": "sh", "shellArgs": "-c"}) {
		t.Errorf("env step = %#v", got)
	}
	if got := w.Plan[3].Args["shellArgs"]; !reflect.DeepEqual(got, []string{"--verbose", "-c"}) {
		t.Errorf("shellArgs = %#v", got)
	}
	if len(w.Apply) != 1 || w.Apply[0].Name != "apply" || len(w.PolicyCheck) != 2 || len(w.Import) != 2 || len(w.StateRm) != 1 {
		t.Errorf("other stages = %+v", w)
	}
	wantWarnings := []string{
		"atlantis.yaml line 11: `emoji_reaction` is accepted but not acted on by Atoll yet",
		"atlantis.yaml line 83: `policies` is accepted but not acted on by Atoll yet (policy checks come from the server-side config, with --enable-policy-checks)",
	}
	if !reflect.DeepEqual(cfg.Warnings, wantWarnings) {
		t.Errorf("warnings:\n%s\nwant:\n%s", join(cfg.Warnings), join(wantWarnings))
	}
}

func join(l []string) string {
	out := ""
	for _, s := range l {
		out += "  " + s + "\n"
	}
	return out
}

// TestParseWarnings checks that a key warns exactly when its value asks for
// something Atoll does not do, and never when Atoll already does it.
func TestParseWarnings(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string // warnings, without the common suffix
	}{
		{"acted-on keys do not warn", lines(`version: 3`, `automerge: true`, `parallel_plan: true`, `parallel_apply: false`,
			`projects:`, `- {name: a, dir: a, workspace: w, terraform_version: 1.5.7, workflow: default,`,
			`   autoplan: {enabled: false}, apply_requirements: [approved], plan_requirements: [mergeable]}`), nil},
		{"values Atoll already behaves as do not warn", lines(`version: 3`, `delete_source_branch_on_merge: false`,
			`abort_on_execution_order_fail: false`, `allowed_regexp_prefixes: []`, `emoji_reaction: ""`, `silence_pr_comments: []`,
			`repo_locks: {mode: on_plan}`, `autodiscover: {mode: auto, ignore_paths: []}`,
			`projects:`, `- {dir: a, repo_locking: true, repo_locks: {mode: on_plan}, terraform_distribution: terraform,`,
			`   execution_order_group: 0, depends_on: [], import_requirements: [], silence_pr_comments: [],`,
			`   delete_source_branch_on_merge: false, policy_check: false, custom_policy_check: false}`), nil},
		{"null values do not warn", lines(`version: 3`, `emoji_reaction:`, `repo_locks:`, `policies:`, `autodiscover: {mode: ~}`), nil},
		{"autodiscover modes and branch, acted on, do not warn", lines(`version: 3`, `autodiscover:`, `  mode: enabled`, `  ignore_paths: [a/**]`,
			`projects:`, `- {dir: a, branch: /main/}`), nil},
		// Lock modes are acted on (lockmode.go in runner): no warning.
		{"repo_locks disabled per project", lines(`version: 3`, `projects:`, `- dir: a`, `  repo_locks:`, `    mode: disabled`), nil},
		{"repo_locks on_apply", lines(`version: 3`, `repo_locks: {mode: on_apply}`), nil},
		{"repo_locking false", lines(`version: 3`, `projects:`, `- dir: a`, `  repo_locking: false`), nil},
		// custom_policy_check is acted on (with allowed_overrides): no warning.
		{"custom_policy_check", lines(`version: 3`, `projects:`, `- dir: a`, `  custom_policy_check: true`), nil},
		// policy_check is acted on (with allowed_overrides): no warning.
		// execution_pool (Atoll's own, with allowed_overrides) is acted on: no warning.
		{"execution_pool", lines(`version: 3`, `projects:`, `- dir: a`, `  execution_pool: eu-runners`, `- dir: b`, `  execution_pool: local`), nil},
		{"policy_check, merged into two projects", lines(`version: 3`, `projects:`, `- &p`, `  dir: a`, `  policy_check: false`, `- <<: *p`, `  workspace: b`), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := mustParse(t, tt.yaml)
			if !reflect.DeepEqual(cfg.Warnings, tt.want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", join(cfg.Warnings), join(tt.want))
			}
		})
	}
}

// TestParseAtlantisRejections covers what Atlantis v0.47 rejects (and, where
// marked, what Atoll rejects beyond it): each error names the line and key.
func TestParseAtlantisRejections(t *testing.T) {
	step := func(s ...string) string {
		return lines(append([]string{`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`}, s...)...)
	}
	tests := []struct {
		name string
		yaml string
		want string
	}{
		// Keys Atlantis does not know.
		{"parallel_policy_check is not an atlantis.yaml key", lines(`version: 3`, `parallel_policy_check: true`), `atlantis.yaml line 2: unknown key "parallel_policy_check"`},
		{"project unknown key", lines(`version: 3`, `projects:`, `- dir: a`, `  emoji_reaction: eyes`), `atlantis.yaml line 4: projects[0]: unknown key "emoji_reaction"`},

		// Top-level keys.
		{"emoji_reaction list", lines(`version: 3`, `emoji_reaction: [eyes]`), `atlantis.yaml line 2: emoji_reaction: must be a string, got a list`},
		{"silence_pr_comments scalar", lines(`version: 3`, `silence_pr_comments: plan`), `atlantis.yaml line 2: silence_pr_comments: must be a list of strings`},
		{"repo_locks bad mode", lines(`version: 3`, `repo_locks:`, `  mode: always`), `atlantis.yaml line 3: repo_locks.mode: "always" is not one of disabled, on_plan, on_apply`},
		{"repo_locks unknown key", lines(`version: 3`, `repo_locks: {enabled: true}`), `atlantis.yaml line 2: repo_locks: unknown key "enabled"`},
		{"repo_locks scalar", lines(`version: 3`, `repo_locks: on_plan`), `atlantis.yaml line 2: repo_locks: must be a mapping`},
		{"autodiscover bad mode", lines(`version: 3`, `autodiscover:`, `  mode: on`), `atlantis.yaml line 3: autodiscover.mode: "on" is not one of auto, enabled, disabled`},
		{"autodiscover unknown key", lines(`version: 3`, `autodiscover:`, `  ignore: [a]`), `atlantis.yaml line 3: autodiscover: unknown key "ignore"`},
		{"autodiscover ignore_paths leading slash", lines(`version: 3`, `autodiscover:`, `  ignore_paths:`, `  - ok/**`, `  - /abs/**`), `atlantis.yaml line 5: autodiscover.ignore_paths[1]: pattern must not begin with a slash`},
		{"autodiscover ignore_paths bad glob", lines(`version: 3`, `autodiscover: {ignore_paths: ["a/[b"]}`), `atlantis.yaml line 2: autodiscover.ignore_paths[0]: "a/[b" is not a valid glob pattern`},
		{"policies unknown key", lines(`version: 3`, `policies:`, `  owners: {users: [a]}`, `  policy_set: []`), `atlantis.yaml line 4: policies: unknown key "policy_set"`},
		{"policies approve_count string", lines(`version: 3`, `policies:`, `  policy_sets:`, `  - name: a`, `    approve_count: two`), `atlantis.yaml line 5: policies.policy_sets[0].approve_count: must be a whole number`},
		{"policies owners list", lines(`version: 3`, `policies:`, `  owners: [alice]`), `atlantis.yaml line 3: policies.owners: must be a mapping, got a list`},

		// Projects.
		{"name with a space", lines(`version: 3`, `projects:`, `- {dir: a, name: "a b"}`), `atlantis.yaml line 3: projects[0].name: "a b" may contain only`},
		{"name with a glob", lines(`version: 3`, `projects:`, `- {dir: a, name: "a*"}`), `atlantis.yaml line 3: projects[0].name: "a*" may contain only`},
		{"branch without slashes", lines(`version: 3`, `projects:`, `- dir: a`, `  branch: main`), `atlantis.yaml line 4: projects[0].branch: "main" must be a regular expression that begins and ends with a slash`},
		{"branch single slash", lines(`version: 3`, `projects:`, `- {dir: a, branch: /}`), `atlantis.yaml line 3: projects[0].branch: "/" must be a regular expression`},
		{"branch bad regex", lines(`version: 3`, `projects:`, `- dir: a`, `  branch: /release-(/`), `atlantis.yaml line 4: projects[0].branch: "/release-(/" is not a valid regular expression`},
		{"terraform_distribution", lines(`version: 3`, `projects:`, `- dir: a`, `  terraform_distribution: tofu`), `atlantis.yaml line 4: projects[0].terraform_distribution: "tofu" is not one of terraform, opentofu`},
		{"terraform_version word", lines(`version: 3`, `projects:`, `- {dir: a, terraform_version: latest}`), `atlantis.yaml line 3: projects[0].terraform_version: "latest" is not a Terraform version`},
		{"execution_order_group float", lines(`version: 3`, `projects:`, `- {dir: a, execution_order_group: 1.5}`), `atlantis.yaml line 3: projects[0].execution_order_group: must be a whole number`},
		{"depends_on list of lists", lines(`version: 3`, `projects:`, `- {dir: a, depends_on: [[b]]}`), `atlantis.yaml line 3: projects[0].depends_on[0]: must be a string, got a list`},
		{"silence_pr_comments value", lines(`version: 3`, `projects:`, `- dir: a`, `  silence_pr_comments: [plan, policy_check]`), `atlantis.yaml line 4: projects[0].silence_pr_comments[1]: "policy_check" is not one of plan, apply`},
		{"policy_check not a bool", lines(`version: 3`, `projects:`, `- {dir: a, policy_check: {enabled: true}}`), `atlantis.yaml line 3: projects[0].policy_check: must be a boolean`},
		{"repo_locking not a bool", lines(`version: 3`, `projects:`, `- {dir: a, repo_locking: on_plan}`), `atlantis.yaml line 3: projects[0].repo_locking: must be a boolean`},
		{"project repo_locks mode", lines(`version: 3`, `projects:`, `- dir: a`, `  repo_locks: {mode: on_merge}`), `atlantis.yaml line 4: projects[0].repo_locks.mode: "on_merge" is not one of`},
		{"import_requirements value", lines(`version: 3`, `projects:`, `- {dir: a, import_requirements: [policies_passed]}`), `atlantis.yaml line 3: projects[0].import_requirements[0]: unknown requirement "policies_passed"`},
		{"workspace with a dollar", lines(`version: 3`, `projects:`, `- {dir: a, workspace: $x}`), `atlantis.yaml line 3: projects[0].workspace: "$x" is not a valid workspace name`},

		// Steps.
		{"version is not a step", step(`      - version`), `atlantis.yaml line 6: workflows.w.plan.steps[0]: unknown step "version"`},
		{"bare run", step(`      - run`), `atlantis.yaml line 6: workflows.w.plan.steps[0]: unknown step "run" (run needs a value`},
		{"bare env (beyond Atlantis)", step(`      - env`), `atlantis.yaml line 6: workflows.w.plan.steps[0]: unknown step "env"`},
		{"built-in step without a value", step(`      - plan:`), `atlantis.yaml line 6: workflows.w.plan.steps[0].plan: needs a mapping`},
		{"built-in step extra key", step(`      - apply: {extra_args: [a], args: [b]}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].apply: unknown key "args"`},
		{"env scalar", step(`      - env: FOO=bar`), `atlantis.yaml line 6: workflows.w.plan.steps[0].env: must be a mapping`},
		{"env without name", step(`      - env:`, `          value: x`), `atlantis.yaml line 7: workflows.w.plan.steps[0].env: name is required`},
		{"env with value and command", step(`      - env: {name: A, value: x, command: echo y}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].env: needs exactly one of value and command`},
		{"env with neither (beyond Atlantis)", step(`      - env: {name: A}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].env: needs exactly one of value and command`},
		{"env with output", step(`      - env:`, `          name: A`, `          value: x`, `          output: hide`), `atlantis.yaml line 9: workflows.w.plan.steps[0].env: unknown key "output"`},
		{"env bad name (beyond Atlantis)", step(`      - env: {name: "A B", value: x}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].env.name: "A B" is not a valid environment variable name`},
		{"run without command", step(`      - run:`, `          output: hide`), `atlantis.yaml line 7: workflows.w.plan.steps[0].run: command is required`},
		{"run command number", step(`      - run: {command: 42}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].run.command: must be a string, got a number`},
		{"run unknown key", step(`      - run:`, `          command: make`, `          dir: x`), `atlantis.yaml line 8: workflows.w.plan.steps[0].run: unknown key "dir" (run steps take command, output, shell, shellArgs)`},
		{"run bad output", step(`      - run: {command: make, output: quiet}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].run.output: "quiet" is not one of show, hide, strip_refreshing`},
		{"run filter_regex as a string output", step(`      - run: {command: make, output: filter_regex}`), `workflows.w.plan.steps[0].run.output: "filter_regex" is not one of`},
		{"run bad filter_regex (beyond Atlantis)", step(`      - run:`, `          command: make`, `          output:`, `          - filter_regex: "a("`), `atlantis.yaml line 9: workflows.w.plan.steps[0].run.output[0].filter_regex: error parsing regexp`},
		{"run bad output list item (beyond Atlantis)", step(`      - run: {command: make, output: [show, loud]}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].run.output[1]: "loud" is not one of`},
		{"run output list key", step(`      - run: {command: make, output: [{filter: x}]}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].run.output[0]: unknown key "filter" (only filter_regex)`},
		{"shell without command", step(`      - env:`, `          name: A`, `          value: x`, `          shell: bash`), `atlantis.yaml line 9: workflows.w.plan.steps[0].env: shell needs command`},
		{"shellArgs without shell", step(`      - run:`, `          command: make`, `          shellArgs: -c`), `atlantis.yaml line 8: workflows.w.plan.steps[0].run: shellArgs needs shell`},
		{"shellArgs list of lists", step(`      - run: {command: make, shell: sh, shellArgs: [[-c]]}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].run.shellArgs[0]: must be a string, got a list`},
		{"shellArgs mapping", step(`      - run: {command: make, shell: sh, shellArgs: {a: b}}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].run.shellArgs: must be a string, got a mapping`},
		{"multienv without command", step(`      - multienv: {output: hide}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].multienv: command is required`},
		{"multienv strip_refreshing", step(`      - multienv: {command: ./e.sh, output: strip_refreshing}`), `atlantis.yaml line 6: workflows.w.plan.steps[0].multienv.output: "strip_refreshing" is not one of show, hide`},
		{"step with two keys", step(`      - {run: a, multienv: b}`), `atlantis.yaml line 6: workflows.w.plan.steps[0]: a step must have exactly one key, got 2`},
		{"empty step", step(`      - {}`), `atlantis.yaml line 6: workflows.w.plan.steps[0]: a step must have exactly one key, got 0`},

		// Version 2 splits run commands into words; Atlantis rejects what it cannot split.
		{"v2 unclosed quote", lines(`version: 2`, `workflows:`, `  w:`, `    apply:`, `      steps:`, `      - apply`, `      - run: echo "hi`), `atlantis.yaml line 7: workflows.w.apply.steps[1]: version 2 cannot parse "echo \"hi": EOF found when expecting closing quote`},
		{"v2 trailing backslash", lines(`version: 2`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - run: {command: "echo \\"}`), `atlantis.yaml line 6: workflows.w.plan.steps[0]: version 2 cannot parse "echo \\": EOF found after escape character`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := repocfg.Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error", cfg)
			}
			wantInvalid(t, err, tt.want)
		})
	}
}

func TestParseLegacyShellAccepts(t *testing.T) {
	for _, yaml := range []string{
		// Version 3 runs commands as written.
		lines(`version: 3`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - run: echo "hi`),
		// Only plan and apply stages are split, as in Atlantis.
		lines(`version: 2`, `workflows:`, `  w:`, `    import:`, `      steps:`, `      - run: echo "hi`),
		// Quotes in a comment, escaped and nested quotes.
		lines(`version: 2`, `workflows:`, `  w:`, `    plan:`, `      steps:`, `      - run: echo it\'s "a \" b" 'c " d' # don't`),
	} {
		mustParse(t, yaml)
	}
}

func TestParseDependsOn(t *testing.T) {
	t.Run("a chain and a diamond parse", func(t *testing.T) {
		mustParse(t, lines(`version: 3`, `projects:`,
			`- {name: app, dir: app, depends_on: [db, net]}`,
			`- {name: db, dir: db, depends_on: [net]}`,
			`- {name: net, dir: net}`,
			`- {dir: other, depends_on: [net, db]}`))
	})
	tests := []struct {
		name string
		yaml string
		want string
	}{
		// The literal Atlantis documentation example names a project
		// ("project-1") that it does not define; Atoll refuses it.
		{"unknown project", lines(`version: 3`, `projects:`, `- name: my-project-name`, `  dir: .`, `  depends_on:`, `    - project-1`),
			`atlantis.yaml line 6: projects[0].depends_on[0]: no project is named "project-1"`},
		{"unnamed projects cannot be named", lines(`version: 3`, `projects:`, `- {dir: a}`, `- {name: b, dir: b, depends_on: [a]}`),
			`atlantis.yaml line 4: projects[1].depends_on[0]: no project is named "a"`},
		{"itself", lines(`version: 3`, `projects:`, `- name: a`, `  dir: a`, `  depends_on: [a]`),
			`atlantis.yaml line 5: projects[0].depends_on[0]: project "a" depends on itself`},
		{"cycle of two", lines(`version: 3`, `projects:`, `- {name: a, dir: a, depends_on: [b]}`, `- {name: b, dir: b, depends_on: [a]}`),
			`atlantis.yaml line 4: projects[1].depends_on[0]: depends_on forms a cycle: a -> b -> a`},
		{"cycle of three after a branch", lines(`version: 3`, `projects:`,
			`- {name: a, dir: a, depends_on: [x, b]}`,
			`- {name: x, dir: x}`,
			`- {name: b, dir: b, depends_on: [c]}`,
			`- name: c`,
			`  dir: c`,
			`  depends_on:`,
			`  - x`,
			`  - a`),
			`atlantis.yaml line 10: projects[3].depends_on[1]: depends_on forms a cycle: a -> b -> c -> a`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := repocfg.Parse([]byte(tt.yaml))
			if err == nil {
				t.Fatalf("Parse succeeded with %+v, want error", cfg)
			}
			wantInvalid(t, err, tt.want)
		})
	}
}

// TestParseAtlantisAcceptsValues covers values Atlantis accepts that Atoll
// used to refuse.
func TestParseAtlantisAcceptsValues(t *testing.T) {
	cfg := mustParse(t, lines(`version: 3`, `projects:`,
		`- {name: a~1, dir: a, workspace: ""}`,
		`- {name: b, dir: b, terraform_version: 1.2.3.4}`,
		`- {name: c, dir: c, terraform_version: 1.5.0beta1}`,
		`workflows:`,
		`  w:`,
		`    plan:`,
		`      steps:`,
		`      - plan: {}`,
		`      - init: {extra_args: ~}`,
	))
	if p := cfg.Projects[0]; p.Name != "a~1" || p.Workspace != "default" {
		t.Errorf("project = %+v", p)
	}
	if got := cfg.Workflows["w"].Plan; len(got) != 2 || got[0].Name != "plan" || got[1].Name != "init" {
		t.Errorf("steps = %+v", got)
	}
}
