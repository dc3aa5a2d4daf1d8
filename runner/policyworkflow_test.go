package runner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
)

// A policy_check stage gives conftest its policy_check step's extra_args;
// show is accepted (Atoll writes the JSON itself); run, env and multienv
// steps are kept in order around the policy_check step.
func TestWorkflowPolicyCheckStage(t *testing.T) {
	for _, tc := range []struct {
		name      string
		steps     []repocfg.Step
		want      []string
		wantSteps []string
		wantErr   string
	}{
		{"extra_args", []repocfg.Step{{Name: "show"}, {Name: "policy_check", Args: map[string]any{"extra_args": []any{"--all-namespaces", "--trace"}}}},
			[]string{"--all-namespaces", "--trace"}, nil, ""},
		{"no stage", nil, nil, nil, ""},
		{"run, env and multienv steps", []repocfg.Step{
			{Name: "env", Args: map[string]any{"name": "STAGE", "value": "policy"}},
			{Name: "run", Args: map[string]any{"command": "echo before"}},
			{Name: "policy_check"},
			{Name: "multienv", Args: map[string]any{"command": "echo A=1"}},
			{Name: "run", Args: map[string]any{"command": "echo after", "output": "hide"}}},
			nil, []string{"env STAGE=policy", "run echo before", "policy_check", "multienv echo A=1", "run echo after (hide)"}, ""},
		{"run step without command", []repocfg.Step{{Name: "run"}}, nil, nil, "run step without a command"},
		{"plan step", []repocfg.Step{{Name: "plan"}}, nil, nil, "plan steps are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &repocfg.Config{Workflows: map[string]repocfg.Workflow{"w": {Name: "w", PolicyCheck: tc.steps}}}
			var spec atoll.JobSpec
			err := applyWorkflow(cfg, repocfg.Project{Dir: "app", Workflow: "w"}, &spec, command.Parser{})
			if tc.wantErr != "" {
				if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want EINVALID with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(spec.PolicyArgs, tc.want) {
				t.Fatalf("err = %v, policy args = %q, want %q", err, spec.PolicyArgs, tc.want)
			}
			var got []string
			for _, st := range spec.PolicySteps {
				d := strings.TrimSpace(st.Name + " " + st.Command)
				if st.Value != nil {
					d += " " + st.EnvName + "=" + *st.Value
				}
				if st.Output == "hide" {
					d += " (hide)"
				}
				got = append(got, d)
			}
			if !reflect.DeepEqual(got, tc.wantSteps) {
				t.Fatalf("policy steps = %q, want %q", got, tc.wantSteps)
			}
		})
	}
}
