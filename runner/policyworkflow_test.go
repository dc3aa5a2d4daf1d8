package runner

import (
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/repocfg"
)

// A policy_check stage gives conftest its policy_check step's extra_args;
// show is accepted (Atoll writes the JSON itself), run is not supported.
func TestWorkflowPolicyCheckStage(t *testing.T) {
	for _, tc := range []struct {
		name    string
		steps   []repocfg.Step
		want    []string
		wantErr string
	}{
		{"extra_args", []repocfg.Step{{Name: "show"}, {Name: "policy_check", Args: map[string]any{"extra_args": []any{"--all-namespaces", "--trace"}}}},
			[]string{"--all-namespaces", "--trace"}, ""},
		{"no stage", nil, nil, ""},
		{"run step", []repocfg.Step{{Name: "run", Args: map[string]any{"command": "echo hi"}}}, nil, "run steps are not supported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &repocfg.Config{Workflows: map[string]repocfg.Workflow{"w": {Name: "w", PolicyCheck: tc.steps}}}
			var spec atoll.JobSpec
			err := applyWorkflow(cfg, repocfg.Project{Dir: "app", Workflow: "w"}, &spec)
			if tc.wantErr != "" {
				if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want EINVALID with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(spec.PolicyArgs, tc.want) {
				t.Fatalf("err = %v, policy args = %q, want %q", err, spec.PolicyArgs, tc.want)
			}
		})
	}
}
