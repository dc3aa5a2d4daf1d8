package runner

import (
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
)

// Terraform gets its flags, the step's extra_args, the comment's args after
// "--", then the addresses, each one argv entry; an address or ID that
// would read as a flag is refused.
func TestStateCommandArgs(t *testing.T) {
	cases := []struct {
		step                  string
		stepArgs, comment, in []string
		want                  []string
		wantErr               string
	}{
		{"import", []string{"-lock=false"}, []string{"-var", "a=b c"}, []string{"aws_instance.x", "i-1 2"},
			[]string{"import", "-lock=false", "-var", "a=b c", "-input=false", "-no-color", "aws_instance.x", "i-1 2"}, ""},
		{"state_rm", nil, nil, []string{"a.b", `c.d["x y"]`},
			[]string{"state", "rm", "-no-color", "a.b", `c.d["x y"]`}, ""},
		{"state_rm", []string{"-lock-timeout=1m"}, []string{"-dry-run"}, []string{"a.b"},
			[]string{"state", "rm", "-lock-timeout=1m", "-dry-run", "-no-color", "a.b"}, ""},
		{"import", nil, nil, []string{"a.b"}, nil, "ADDRESS and an ID"},
		{"import", nil, nil, []string{"a.b", "-chdir=/"}, nil, "read as a flag"},
		{"state_rm", nil, nil, nil, nil, "at least one ADDRESS"},
		{"state_rm", nil, nil, []string{"-dry-run"}, nil, "read as a flag"},
	}
	for _, c := range cases {
		got, err := stateCommandArgs(c.step, c.stepArgs, c.comment, c.in)
		if c.wantErr != "" {
			if err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s %q: err = %v, want one with %q", c.step, c.in, err, c.wantErr)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s %q: got %q, %v; want %q", c.step, c.in, got, err, c.want)
		}
	}
}

// An import runs in one project only, as in Atlantis; state rm and plan in
// any number.
func TestResolvedKind(t *testing.T) {
	for _, c := range []struct {
		cmd      string
		projects int
		want     string
		wantErr  bool
	}{
		{command.Import, 1, atoll.JobImport, false},
		{command.Import, 2, "", true},
		{command.State, 3, atoll.JobStateRm, false},
		{command.Plan, 3, atoll.JobPlan, false},
	} {
		got, err := resolvedKind(&command.Command{Name: c.cmd}, c.projects)
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("%s with %d projects: %q, %v", c.cmd, c.projects, got, err)
		}
	}
}

// The import and state_rm stages are stored with the job; their steps may
// not stray into other stages, nor plan steps into them.
func TestWorkflowImportStateRmStages(t *testing.T) {
	step := func(name string, args map[string]any) repocfg.Step { return repocfg.Step{Name: name, Args: args} }
	ok := repocfg.Workflow{Name: "w",
		Import:  []repocfg.Step{step("run", map[string]any{"command": "echo hi"}), step("import", map[string]any{"extra_args": []any{"-lock=false"}})},
		StateRm: []repocfg.Step{step("init", nil), step("env", map[string]any{"name": "A", "value": "b"}), step("state_rm", nil)}}
	var spec atoll.JobSpec
	if err := applyWorkflow(&repocfg.Config{Workflows: map[string]repocfg.Workflow{"w": ok}}, repocfg.Project{Dir: "app", Workflow: "w"}, &spec, command.Parser{}); err != nil {
		t.Fatal(err)
	}
	if len(spec.ImportSteps) != 2 || spec.ImportSteps[1].Name != "import" || !slices.Equal(spec.ImportSteps[1].ExtraArgs, []string{"-lock=false"}) ||
		len(spec.StateRmSteps) != 3 || spec.StateRmSteps[2].Name != "state_rm" || spec.PlanSteps != nil {
		t.Fatalf("import steps %+v, state_rm steps %+v, plan steps %+v", spec.ImportSteps, spec.StateRmSteps, spec.PlanSteps)
	}
	// A step in a stage where Atoll will not run it resolves (Atlantis
	// accepts the file); that stage alone is refused when it runs.
	for _, c := range []struct {
		wf    repocfg.Workflow
		stage string
	}{
		{repocfg.Workflow{Name: "w", Plan: []repocfg.Step{step("init", nil), step("import", nil)}}, atoll.JobPlan},
		{repocfg.Workflow{Name: "w", Plan: []repocfg.Step{step("apply", nil)}}, atoll.JobPlan},
		{repocfg.Workflow{Name: "w", Apply: []repocfg.Step{step("state_rm", nil)}}, atoll.JobApply},
		{repocfg.Workflow{Name: "w", Apply: []repocfg.Step{step("plan", nil), step("apply", nil)}}, atoll.JobApply},
		{repocfg.Workflow{Name: "w", Import: []repocfg.Step{step("state_rm", nil)}}, atoll.JobImport},
		{repocfg.Workflow{Name: "w", StateRm: []repocfg.Step{step("plan", nil)}}, atoll.JobStateRm},
		{repocfg.Workflow{Name: "w", Import: []repocfg.Step{step("apply", nil)}}, atoll.JobImport},
	} {
		var spec atoll.JobSpec
		if err := applyWorkflow(&repocfg.Config{Workflows: map[string]repocfg.Workflow{"w": c.wf}}, repocfg.Project{Dir: "app", Workflow: "w"}, &spec, command.Parser{}); err != nil {
			t.Errorf("workflow %+v: %v, want it resolved", c.wf, err)
			continue
		}
		for _, kind := range []string{atoll.JobPlan, atoll.JobApply, atoll.JobImport, atoll.JobStateRm} {
			err := checkStage(kind, spec)
			if refused := err != nil && atoll.ErrorCode(err) == atoll.EINVALID && strings.Contains(err.Error(), "has no place here: "); refused != (kind == c.stage) {
				t.Errorf("workflow %+v, %s stage: err = %v", c.wf, kind, err)
			}
		}
	}
	bad := repocfg.Workflow{Name: "w", Import: []repocfg.Step{step("init", map[string]any{"extra_args": []any{"-migrate-state"}}), step("import", nil)}}
	err := applyWorkflow(&repocfg.Config{Workflows: map[string]repocfg.Workflow{"w": bad}}, repocfg.Project{Dir: "app", Workflow: "w"}, &atoll.JobSpec{}, command.Parser{})
	if err == nil || atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("workflow %+v: err = %v, want it refused", bad, err)
	}
}
