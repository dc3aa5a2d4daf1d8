package runner_test

import (
	"testing"

	"github.com/atollhq/atoll/runner"
)

func TestApprovalPolicy(t *testing.T) {
	type plan struct{ repo, project, dir string }
	prod := plan{"acme/infra", "production", "envs/prod"}
	staging := plan{"acme/infra", "staging", "envs/staging"}
	unnamed := plan{"acme/infra", "", "envs/prod"}
	other := plan{"acme/web", "", "."}
	for _, tc := range []struct {
		policy string
		yes    []plan
		no     []plan
	}{
		{"", nil, []plan{prod, staging, other}},
		{"*", []plan{prod, staging, unnamed, other}, nil},
		{"acme/infra", []plan{prod, staging, unnamed}, []plan{other}},
		{"acme/*", []plan{prod, other}, nil},
		{"acme/infra/*", []plan{prod, staging, unnamed}, []plan{other}},
		{"acme/infra/production", []plan{prod}, []plan{staging, unnamed, other}},
		{"acme/infra/envs/prod", []plan{prod, unnamed}, []plan{staging}},
		{"acme/infra/prod*", []plan{prod}, []plan{staging, unnamed}},
		{" acme/web , acme/infra/staging ", []plan{other, staging}, []plan{prod}},
	} {
		p, err := runner.ParseApprovalPolicy(tc.policy)
		if err != nil {
			t.Fatalf("%q: %v", tc.policy, err)
		}
		for _, x := range tc.yes {
			if !p.Requires(x.repo, x.project, x.dir) {
				t.Errorf("%q does not require %+v", tc.policy, x)
			}
		}
		for _, x := range tc.no {
			if p.Requires(x.repo, x.project, x.dir) {
				t.Errorf("%q requires %+v", tc.policy, x)
			}
		}
	}
	for _, bad := range []string{"acme", "/infra", "acme/", "acme/infra/", "acme/[x"} {
		if _, err := runner.ParseApprovalPolicy(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	var none *runner.ApprovalPolicy
	if none.Requires("acme/infra", "", ".") {
		t.Error("a nil policy requires approval")
	}
}
