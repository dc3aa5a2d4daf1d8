package runner_test

import (
	"testing"

	"github.com/atollhq/atoll/runner"
)

type approvalPlan struct{ repo, project, dir string }

func checkApprovalPolicy(t *testing.T, policy string, yes, no []approvalPlan) {
	t.Helper()
	p, err := runner.ParseApprovalPolicy(policy)
	if err != nil {
		t.Fatalf("%q: %v", policy, err)
	}
	for _, x := range yes {
		if !p.Requires(x.repo, x.project, x.dir) {
			t.Errorf("%q does not require %+v", policy, x)
		}
	}
	for _, x := range no {
		if p.Requires(x.repo, x.project, x.dir) {
			t.Errorf("%q requires %+v", policy, x)
		}
	}
}

func TestApprovalPolicy(t *testing.T) {
	type plan = approvalPlan
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
		checkApprovalPolicy(t, tc.policy, tc.yes, tc.no)
	}
	for _, bad := range []string{"acme", "/infra", "acme/", "acme/infra/", "acme//infra", "acme/[x"} {
		if _, err := runner.ParseApprovalPolicy(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
	var none *runner.ApprovalPolicy
	if none.Requires("acme/infra", "", ".") {
		t.Error("a nil policy requires approval")
	}
}

// An Azure DevOps repository's full name is org/project/repo: a pattern of
// three parts names the repository, a fourth (and on) its project; a GitHub
// repository beside it reads the same pattern with its two-part name.
func TestApprovalPolicyAzureDevOps(t *testing.T) {
	type plan = approvalPlan
	prod := plan{"org/proj/infra", "production", "envs/prod"}
	staging := plan{"org/proj/infra", "staging", "envs/staging"}
	unnamed := plan{"org/proj/infra", "", "envs/prod"}
	web := plan{"org/proj/web", "", "."}
	otherProj := plan{"org/other/infra", "production", "envs/prod"}
	// GitHub repositories whose names look like the start of an Azure one.
	ghProj := plan{"org/proj", "infra", "infra"}
	ghOrg := plan{"org/infra", "", "."}
	for _, tc := range []struct {
		policy string
		yes    []plan
		no     []plan
	}{
		{"*", []plan{prod, web, otherProj, ghProj}, nil},
		{"org/proj/infra", []plan{prod, staging, unnamed, ghProj}, []plan{web, otherProj, ghOrg}},
		{"org/proj/infra/*", []plan{prod, staging, unnamed}, []plan{web, otherProj, ghProj}},
		{"org/proj/infra/production", []plan{prod}, []plan{staging, unnamed, web, otherProj, ghProj}},
		{"org/proj/infra/envs/prod", []plan{prod, unnamed}, []plan{staging, web, otherProj}},
		{"org/proj/infra/prod*", []plan{prod}, []plan{staging, unnamed}},
		{"org/*/infra", []plan{prod, otherProj, ghProj}, []plan{web, ghOrg}}, // ghProj: its project infra
		{"org/proj/*", []plan{prod, staging, web, ghProj}, []plan{otherProj}},
		{"org/*/*", []plan{prod, web, otherProj}, nil},
		// Two parts never name an Azure repository: too few to be its full name.
		{"org/proj", []plan{ghProj}, []plan{prod, staging, web}},
		{"org/*", []plan{ghProj, ghOrg}, []plan{prod, web, otherProj}},
	} {
		checkApprovalPolicy(t, tc.policy, tc.yes, tc.no)
	}
	p, err := runner.ParseApprovalPolicy("org/proj/infra/production, acme/infra")
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "org/proj/infra/production,acme/infra" {
		t.Errorf("String() = %q", got)
	}
}
