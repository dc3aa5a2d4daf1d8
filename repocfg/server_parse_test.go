package repocfg_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

const allServerKeys = `repos:
  - id: github.com/acme/infra
    branch: /^main$/
    repo_config_file: config/atlantis.yaml
    workflow: strict
    plan_requirements: [mergeable]
    apply_requirements: [approved, undiverged]
    import_requirements: [approved]
    allowed_overrides: [plan_requirements, apply_requirements, import_requirements, workflow, delete_source_branch_on_merge, repo_locking, repo_locks, policy_check, custom_policy_check, silence_pr_comments, execution_pool, drift_detection]
    allowed_workflows: [strict, default]
    allow_custom_workflows: true
    pre_workflow_hooks:
      - run: ./pre.sh
        description: Pre
        shell: bash
        shellArgs: -c
    post_workflow_hooks:
      - run: ./post.sh
    delete_source_branch_on_merge: true
    repo_locking: true
    repo_locks: {mode: on_apply}
    policy_check: false
    custom_policy_check: false
    silence_pr_comments: [apply]
    execution_pool: eu-runners
    autodiscover: {mode: enabled, ignore_paths: [tmp/*]}
    drift_detection: {enabled: true, schedule: "0 6 * * 1-5", branch: main, projects: [envs/*], remediation: auto}
  - id: /^github\.com/acme/.*$/
workflows:
  strict:
    plan:
      steps: [init, {plan: {extra_args: [-lock-timeout=5m]}}]
policies:
  conftest_version: v0.46.0
  policy_sets:
    - name: base
      path: policies/
      source: local
metrics:
  prometheus: {endpoint: /metrics}
`

func TestParseServerConfigAllKeys(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(allServerKeys))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Repos) != 3 {
		t.Fatalf("repos = %d, want default + 2", len(sc.Repos))
	}
	if !reflect.DeepEqual(sc.Repos[0], repocfg.DefaultServerRepo()) {
		t.Errorf("first entry is not the default: %+v", sc.Repos[0])
	}
	r := sc.Repos[1]
	yes, no := true, false
	if r.ID != "github.com/acme/infra" || r.IDRegex != nil || r.BranchRegex.String() != "^main$" || r.Line != 2 ||
		r.RepoConfigFile != "config/atlantis.yaml" || *r.Workflow != "strict" ||
		!reflect.DeepEqual(r.PlanRequirements, []string{"mergeable"}) ||
		!reflect.DeepEqual(r.ApplyRequirements, []string{"approved", "undiverged"}) ||
		!reflect.DeepEqual(r.ImportRequirements, []string{"approved"}) ||
		!reflect.DeepEqual(r.AllowedOverrides, repocfg.OverrideKeys) ||
		!reflect.DeepEqual(r.AllowedWorkflows, []string{"strict", "default"}) ||
		!reflect.DeepEqual(r.AllowCustomWorkflows, &yes) || !reflect.DeepEqual(r.DeleteSourceBranchOnMerge, &yes) ||
		!reflect.DeepEqual(r.RepoLocking, &yes) || *r.RepoLocksMode != "on_apply" ||
		!reflect.DeepEqual(r.PolicyCheck, &no) || !reflect.DeepEqual(r.CustomPolicyCheck, &no) ||
		!reflect.DeepEqual(r.SilencePRComments, []string{"apply"}) || r.ExecutionPool == nil || *r.ExecutionPool != "eu-runners" ||
		r.Autodiscover.Mode != "enabled" ||
		r.Drift == nil || !r.Drift.Enabled || r.Drift.Schedule != "0 6 * * 1-5" || r.Drift.Branch != "main" ||
		!reflect.DeepEqual(r.Drift.Projects, []string{"envs/*"}) || r.Drift.Remediation != "auto" ||
		!reflect.DeepEqual(r.PreWorkflowHooks, []repocfg.Hook{{Run: "./pre.sh", Description: "Pre", Shell: "bash", ShellArgs: "-c"}}) ||
		!reflect.DeepEqual(r.PostWorkflowHooks, []repocfg.Hook{{Run: "./post.sh"}}) {
		t.Errorf("entry 1: %+v", r)
	}
	if r2 := sc.Repos[2]; r2.ID != "" || r2.IDRegex.String() != `^github\.com/acme/.*$` || r2.Workflow != nil || r2.ApplyRequirements != nil {
		t.Errorf("entry 2 should set only its id: %+v", r2)
	}
	if sc.Policies == nil || len(sc.Policies.Sets) != 1 || sc.Policies.Sets[0].Path != "policies/" || sc.Policies.ConftestVersion != "v0.46.0" {
		t.Errorf("policies: %+v", sc.Policies)
	}
	if _, ok := sc.Workflows["strict"]; !ok {
		t.Error("workflow strict missing")
	}
	if _, ok := sc.Workflows[repocfg.DefaultWorkflow]; !ok {
		t.Error("default workflow missing")
	}
	if r := sc.Repos[1]; r.DeleteSourceBranchOnMerge == nil || !*r.DeleteSourceBranchOnMerge {
		t.Errorf("entry 1 delete_source_branch_on_merge = %v", r.DeleteSourceBranchOnMerge)
	}
	if !strings.Contains(strings.Join(sc.Warnings, "\n"), "repos.yaml line 39: `metrics`") {
		t.Errorf("warnings %q lack metrics", sc.Warnings)
	}
	if strings.Contains(strings.Join(sc.Warnings, "\n"), "repo_lock") {
		t.Errorf("warnings %q name repo_locks/repo_locking, which Atoll acts on", sc.Warnings)
	}
}

func TestParseServerConfigEmptyIsDefault(t *testing.T) {
	for _, in := range []string{"", "# nothing\n", "repos:\n", "{}", `{"repos": []}`} {
		sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(in))
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if !reflect.DeepEqual(sc, repocfg.DefaultServerConfig()) {
			t.Errorf("%q: %+v", in, sc)
		}
	}
}

func TestParseServerConfigJSON(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("--repo-config-json", []byte(`{"repos":[{"id":"/.*/","apply_requirements":["approved"],"allowed_overrides":["workflow"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := sc.Repos[1].ApplyRequirements; !reflect.DeepEqual(got, []string{"approved"}) {
		t.Errorf("apply_requirements = %v", got)
	}
	_, err = repocfg.ParseServerConfig("--repo-config-json", []byte(`{"repos":[{"id":"/.*/","apply_requirement":["approved"]}]}`))
	if want := `--repo-config-json line 1: repos[0]: unknown key "apply_requirement"`; atoll.ErrorMessage(err) != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestParseServerConfigRejects(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"top-level unknown key", "repo:\n  - id: x\n", `repos.yaml line 1: unknown key "repo"`},
		{"repos not a list", "repos: {id: x}\n", "repos.yaml line 1: repos: must be a list of repository entries, got a mapping"},
		{"entry unknown key", "repos:\n  - id: a/b/c\n    allowed_override: [workflow]\n", `repos.yaml line 3: repos[0]: unknown key "allowed_override"`},
		{"id missing", "repos:\n  - workflow: default\n", "repos.yaml line 2: repos[0]: id is required (host/owner/name, or /regex/)"},
		{"id empty", "repos:\n  - id: \"\"\n", "repos.yaml line 2: repos[0].id: must not be empty"},
		{"id null", "repos:\n  - id:\n", "repos.yaml line 2: repos[0].id: must be a string, got null"},
		{"id bad regex", "repos:\n  - id: /a(/\n", "repos.yaml line 2: repos[0].id: invalid regex: error parsing regexp: missing closing ): `a(`"},
		{"branch not a regex", "repos:\n  - id: /.*/\n    branch: main\n", "repos.yaml line 3: repos[0].branch: must be a regex between slashes, e.g. /^main$/"},
		{"branch bad regex", "repos:\n  - id: /.*/\n    branch: /[/\n", "repos.yaml line 3: repos[0].branch: invalid regex: error parsing regexp: missing closing ]: `[`"},
		{"repo_config_file absolute", "repos:\n  - id: /.*/\n    repo_config_file: /etc/passwd\n", "repos.yaml line 3: repos[0].repo_config_file: must be a path inside the repository, not an absolute path"},
		{"repo_config_file parent", "repos:\n  - id: /.*/\n    repo_config_file: a/../../x.yaml\n", "repos.yaml line 3: repos[0].repo_config_file: must not contain .."},
		{"repo_config_file dir", "repos:\n  - id: /.*/\n    repo_config_file: conf/\n", `repos.yaml line 3: repos[0].repo_config_file: "conf/" is not a file path`},
		{"workflow undefined", "repos:\n  - id: /.*/\n    workflow: nope\n", `repos.yaml line 3: repos[0].workflow: workflow "nope" is not defined in workflows (defined: default)`},
		{"allowed_workflows undefined", "repos:\n  - id: /.*/\n    allowed_workflows: [default, nope]\n", `repos.yaml line 3: repos[0].allowed_workflows[1]: workflow "nope" is not defined in workflows (defined: default)`},
		{"plan_requirements value", "repos:\n  - id: /.*/\n    plan_requirements: [approve]\n", `repos.yaml line 3: repos[0].plan_requirements[0]: unknown requirement "approve" (allowed: approved, mergeable, undiverged)`},
		{"apply_requirements value", "repos:\n  - id: /.*/\n    apply_requirements:\n      - mergeable\n      - policies\n", `repos.yaml line 5: repos[0].apply_requirements[1]: unknown requirement "policies" (allowed: approved, mergeable, undiverged)`},
		{"apply_requirements type", "repos:\n  - id: /.*/\n    apply_requirements: approved\n", `repos.yaml line 3: repos[0].apply_requirements: must be a list of strings, got the string "approved"`},
		{"import_requirements value", "repos:\n  - id: /.*/\n    import_requirements: [x]\n", `repos.yaml line 3: repos[0].import_requirements[0]: unknown requirement "x" (allowed: approved, mergeable, undiverged)`},
		{"allowed_overrides value", "repos:\n  - id: /.*/\n    allowed_overrides: [workflow, workflows]\n", `repos.yaml line 3: repos[0].allowed_overrides[1]: "workflows" is not one of plan_requirements, apply_requirements, import_requirements, workflow, delete_source_branch_on_merge, repo_locking, repo_locks, policy_check, custom_policy_check, silence_pr_comments`},
		{"allow_custom_workflows type", "repos:\n  - id: /.*/\n    allow_custom_workflows: \"true\"\n", `repos.yaml line 3: repos[0].allow_custom_workflows: must be a boolean (true or false), got the string "true"`},
		{"delete_source_branch_on_merge type", "repos:\n  - id: /.*/\n    delete_source_branch_on_merge: 1\n", "repos.yaml line 3: repos[0].delete_source_branch_on_merge: must be a boolean (true or false), got a number"},
		{"repo_locking type", "repos:\n  - id: /.*/\n    repo_locking: []\n", "repos.yaml line 3: repos[0].repo_locking: must be a boolean (true or false), got a list"},
		{"repo_locks mode", "repos:\n  - id: /.*/\n    repo_locks: {mode: always}\n", `repos.yaml line 3: repos[0].repo_locks.mode: "always" is not one of disabled, on_plan, on_apply`},
		{"repo_locks key", "repos:\n  - id: /.*/\n    repo_locks: {modes: on_plan}\n", `repos.yaml line 3: repos[0].repo_locks: unknown key "modes"`},
		{"policy_check type", "repos:\n  - id: /.*/\n    policy_check: maybe\n", `repos.yaml line 3: repos[0].policy_check: must be a boolean (true or false), got the string "maybe"`},
		{"custom_policy_check type", "repos:\n  - id: /.*/\n    custom_policy_check: {}\n", "repos.yaml line 3: repos[0].custom_policy_check: must be a boolean (true or false), got a mapping"},
		{"silence_pr_comments value", "repos:\n  - id: /.*/\n    silence_pr_comments: [plan, import]\n", `repos.yaml line 3: repos[0].silence_pr_comments[1]: "import" is not one of plan, apply`},
		{"autodiscover mode", "repos:\n  - id: /.*/\n    autodiscover: {mode: sometimes}\n", `repos.yaml line 3: repos[0].autodiscover.mode: "sometimes" is not one of auto, enabled, disabled`},
		{"hooks not a list", "repos:\n  - id: /.*/\n    pre_workflow_hooks: {run: x}\n", "repos.yaml line 3: repos[0].pre_workflow_hooks: must be a list of hooks, got a mapping"},
		{"hook unknown key", "repos:\n  - id: /.*/\n    post_workflow_hooks:\n      - run: x\n        command: y\n", `repos.yaml line 5: repos[0].post_workflow_hooks[0]: unknown key "command"`},
		{"hook without run", "repos:\n  - id: /.*/\n    pre_workflow_hooks:\n      - description: d\n", "repos.yaml line 4: repos[0].pre_workflow_hooks[0]: run is required (the command to run)"},
		{"hook run not a string", "repos:\n  - id: /.*/\n    pre_workflow_hooks:\n      - run: 1\n", "repos.yaml line 4: repos[0].pre_workflow_hooks[0].run: must be a string, got a number"},
		{"workflow unknown step", "workflows:\n  w:\n    plan:\n      steps: [fly]\n", "repos.yaml line 4: workflows.w.plan.steps[0]"},
		{"policies unknown key", "policies:\n  conftest: x\n", `repos.yaml line 2: policies: unknown key "conftest"`},
		{"metrics not a mapping", "metrics: [x]\n", "repos.yaml line 1: metrics: must be a mapping, got a list"},
		{"duplicate key", "repos:\n  - id: a\n    id: b\n", "repos.yaml line 3: repos[0].id: key is defined twice (first on line 2)"},
		{"invalid yaml", "repos: [\n", "repos.yaml line 1: invalid YAML"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := repocfg.ParseServerConfig("repos.yaml", []byte(tt.in))
			if err == nil {
				t.Fatal("no error")
			}
			if atoll.ErrorCode(err) != atoll.EINVALID || !strings.HasPrefix(atoll.ErrorMessage(err), tt.want) {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

// team_authz is Atlantis's external authorizer: command (required), args.
func TestParseServerTeamAuthz(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte("team_authz:\n  command: /scripts/authz.sh\n  args: [--env, prod]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.TeamAuthz == nil || sc.TeamAuthz.Command != "/scripts/authz.sh" || !reflect.DeepEqual(sc.TeamAuthz.Args, []string{"--env", "prod"}) {
		t.Fatalf("TeamAuthz = %+v", sc.TeamAuthz)
	}
	if len(sc.Warnings) != 0 {
		t.Fatalf("warnings %q: team_authz is acted on", sc.Warnings)
	}
	for _, tt := range []struct{ in, want string }{
		{"team_authz:\n  args: [x]\n", "repos.yaml line 2: team_authz.command: is required"},
		{"team_authz:\n  command: x\n  arg: [y]\n", `repos.yaml line 3: team_authz: unknown key "arg"`},
		{"team_authz:\n  command: x\n  args: y\n", "repos.yaml line 3: team_authz.args: must be a list of strings"},
		{"team_authz: /x\n", "repos.yaml line 1: team_authz: must be a mapping"},
	} {
		_, err := repocfg.ParseServerConfig("repos.yaml", []byte(tt.in))
		if err == nil || !strings.HasPrefix(atoll.ErrorMessage(err), tt.want) {
			t.Errorf("%q: got %v, want %s", tt.in, err, tt.want)
		}
	}
}
