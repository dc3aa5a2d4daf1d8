package runner

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/repocfg"
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
		err := applyWorkflow(cfg, repocfg.Project{Dir: "app", Workflow: "w"}, &spec)
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
