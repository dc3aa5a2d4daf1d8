package runner

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
)

// Checkouts are shared by projects with the same dir, so init must never be
// asked to migrate state; anything else in init extra_args is passed on.
func TestWorkflowInitArgs(t *testing.T) {
	cases := []struct {
		args    []any
		wantErr string
	}{
		{[]any{"-backend-config=path=stg.tfstate", "-upgrade"}, ""},
		{[]any{"-migrate-state"}, "-migrate-state"},
		{[]any{"--force-copy"}, "-force-copy"},
		{[]any{"-migrate-state=true"}, "-migrate-state"},
	}
	for _, c := range cases {
		cfg := &repocfg.Config{Workflows: map[string]repocfg.Workflow{"w": {Name: "w", Plan: []repocfg.Step{
			{Name: "init", Args: map[string]any{"extra_args": c.args}}, {Name: "plan"}}}}}
		var spec atoll.JobSpec
		err := applyWorkflow(cfg, repocfg.Project{Dir: "app", Workflow: "w"}, &spec, command.Parser{})
		if c.wantErr == "" {
			if err != nil || len(spec.PlanSteps) != 2 || len(spec.PlanSteps[0].ExtraArgs) != len(c.args) {
				t.Errorf("%v: err = %v, plan steps = %+v", c.args, err, spec.PlanSteps)
			}
			continue
		}
		if err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("%v: err = %v, want an invalid-config error naming %s", c.args, err, c.wantErr)
		}
	}
}

// Version 2 files run their run commands re-joined from shell words, as
// Atlantis does; version 3 runs them as written.
func TestWorkflowLegacyRunCommands(t *testing.T) {
	for _, c := range []struct {
		version int
		command string
		want    string
	}{
		{3, `echo "a  b" 'c' # note`, `echo "a  b" 'c' # note`},
		{2, `echo "a  b" 'c' # note`, `echo a  b c`},
		{2, `printf %s\ x "q\"t"`, `printf %s x q"t`},
		{2, "a\tb\n#c\nd", "a b d"},
	} {
		cfg := &repocfg.Config{Version: c.version, Workflows: map[string]repocfg.Workflow{"w": {Name: "w", Plan: []repocfg.Step{
			{Name: "run", Args: map[string]any{"command": c.command}}, {Name: "plan"}}}}}
		var spec atoll.JobSpec
		if err := applyWorkflow(cfg, repocfg.Project{Dir: "app", Workflow: "w"}, &spec, command.Parser{}); err != nil {
			t.Fatal(err)
		}
		if got := spec.PlanSteps[0].Command; got != c.want {
			t.Errorf("version %d, %q: command %q, want %q", c.version, c.command, got, c.want)
		}
	}
}

// A workflow named "default" replaces the built-in steps for projects that
// name no workflow, as Atlantis does; without one, the built-in steps run.
func TestWorkflowRedefinedDefault(t *testing.T) {
	cfg := &repocfg.Config{Workflows: map[string]repocfg.Workflow{repocfg.DefaultWorkflow: {Name: repocfg.DefaultWorkflow, Plan: []repocfg.Step{
		{Name: "run", Args: map[string]any{"command": "echo server default"}}, {Name: "init"}, {Name: "plan"}}}}}
	for _, workflow := range []string{"", repocfg.DefaultWorkflow} {
		var spec atoll.JobSpec
		if err := applyWorkflow(cfg, repocfg.Project{Dir: "app", Workflow: workflow}, &spec, command.Parser{}); err != nil {
			t.Fatal(err)
		}
		if len(spec.PlanSteps) != 3 || spec.PlanSteps[0].Name != "run" || spec.ApplySteps != nil {
			t.Errorf("workflow %q: plan steps %+v, apply steps %+v; want the redefined default's plan stage", workflow, spec.PlanSteps, spec.ApplySteps)
		}
	}
	var spec atoll.JobSpec
	if err := applyWorkflow(&repocfg.Config{}, repocfg.Project{Dir: "app"}, &spec, command.Parser{}); err != nil || spec.PlanSteps != nil {
		t.Errorf("no default defined: err %v, plan steps %+v; want the built-in steps", err, spec.PlanSteps)
	}
}

// A workflow from the repository's own atlantis.yaml (allowed by
// allow_custom_workflows) is held to the comment rule for Terraform
// arguments: whoever changes the file in a pull request must not redirect
// the plan file or the state. The same steps from the server are trusted.
func TestSecurityRepoWorkflowExtraArgs(t *testing.T) {
	server, err := repocfg.ParseServerConfig("repos.yaml", []byte(`
repos:
  - id: /.*/
    allowed_overrides: [workflow]
    allow_custom_workflows: true
workflows:
  trusted:
    apply:
      steps:
        - apply: {extra_args: ["-state-out=/srv/state/app.tfstate"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		steps, want string
	}{
		{`[init, {plan: {extra_args: ["-out=/tmp/x"]}}]`, "plan extra_args: Atoll sets -out itself"},
		{`[init, {plan: {extra_args: ["--out", "/tmp/x"]}}]`, "plan extra_args: Atoll sets -out itself"},
		{`[{init: {extra_args: ["-plugin-dir=/tmp/p"]}}, plan]`, "init extra_args: -plugin-dir"},
		{`[{init: {extra_args: ["-backend-config=/etc/atoll/secret.hcl"]}}, plan]`, "is not allowed"},
		{`[init, {plan: {extra_args: ["-var-file=prod.tfvars", "-refresh=false"]}}]`, ""},
		{`[{init: {extra_args: ["-backend-config=key=app", "-upgrade"]}}, plan]`, ""},
	} {
		file := "version: 3\nprojects:\n  - dir: app\n    workflow: custom\nworkflows:\n  custom:\n    plan:\n      steps: " + tc.steps + "\n"
		cfg, err := repocfg.Parse([]byte(file))
		if err != nil {
			t.Fatalf("%s: %v", tc.steps, err)
		}
		merged, err := server.Merge("github.com/o/r", cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.steps, err)
		}
		var spec atoll.JobSpec
		err = applyWorkflow(merged, merged.Projects[0], &spec, command.Parser{})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s refused: %v", tc.steps, err)
		case tc.want != "" && (err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: err = %v, want EINVALID containing %q", tc.steps, err, tc.want)
		}
	}
	merged, err := server.Merge("github.com/o/r", &repocfg.Config{Version: 3, Projects: []repocfg.Project{{Dir: "app", Workflow: "trusted"}}})
	if err != nil {
		t.Fatal(err)
	}
	var spec atoll.JobSpec
	if err := applyWorkflow(merged, merged.Projects[0], &spec, command.Parser{}); err != nil {
		t.Errorf("the server's workflow was held to the repository rule: %v", err)
	}
}
