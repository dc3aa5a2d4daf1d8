package executor_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
)

// A spec and a result are plain data: a remote worker receives the spec
// and sends back the result as JSON, and both arrive unchanged.
func TestSpecAndResultRoundTrip(t *testing.T) {
	yes, value := true, "v"
	spec := executor.Spec{
		Job: executor.Job{ID: 7, Kind: atoll.JobPlan, Repo: "acme/infra", Pull: 42, Project: "app", Dir: "stacks/app",
			Workspace: "staging", HeadSHA: "0123456789abcdef", User: "bob",
			Spec: atoll.JobSpec{ExtraArgs: []string{"-target=a"}, Verbose: true, Workflow: "custom", TerraformVersion: "1.9.8",
				TerraformDistribution: "opentofu", PlanSteps: []atoll.Step{{Name: "env", EnvName: "A", Value: &value}, {Name: "plan", ExtraArgs: []string{"-lock=false"}}},
				PolicySteps: []atoll.Step{{Name: "run", Command: "echo ok"}}, CustomPolicyCheck: &yes, PolicyCheck: &yes,
				PolicyArgs: []string{"--all-namespaces"}, Env: []string{"X=1"}, Group: 2, DependsOn: []string{"net"}, LockMode: "on_apply", Pool: "gpu-1"}},
		Checkout: executor.Checkout{RequestID: 3, VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra", Pull: 42,
			Workspace: "staging", HeadSHA: "0123456789abcdef", HeadRef: "feature", MergeBase: "main"},
		Terraform: executor.Terraform{Bin: "/opt/tf/terraform", Version: "1.9.8", Env: []string{"X=1"}, RunEnv: []string{"GIT_CONFIG_COUNT=1"}, Distribution: "terraform"},
		PullEnv:   []string{"PULL_NUM=42"}, PolicyCheck: true, CustomPolicyCheck: true,
	}
	roundTrip(t, spec)
	roundTrip(t, executor.Result{Output: "Plan: 1 to add", Summary: &atoll.Summary{Add: 1}, Plan: []byte{0, 1, 2}, ShowJSON: []byte(`{"a":1}`),
		Policies: []atoll.PolicyCheck{{PolicySet: "p", Passed: true, Output: "ok", ApproveCount: 1}}, BaseSHA: "fedcba9876543210"})
}

func roundTrip[T any](t *testing.T, v T) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var got T
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Errorf("round trip changed %T:\n got %+v\nwant %+v\njson %s", v, got, v, b)
	}
}
