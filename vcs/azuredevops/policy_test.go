package azuredevops_test

import (
	"context"
	"strings"
	"testing"

	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

// mergeStatus "succeeded" only says git can merge: branch policies that
// Azure DevOps enforces at completion still block, and Mergeable follows
// them as Atlantis's PullIsMergeable does (its table: merge conflicts,
// rejected, approved, pending, Atoll's own apply status rejected), plus
// which policies count: blocking and not approved; not optional,
// disabled, deleted or notApplicable ones, nor the status policy on
// Atoll's own apply status.
func TestAzureMergeableBranchPolicies(t *testing.T) {
	status := func(s string) azuretest.Policy { return azuretest.Policy{Type: "status", StatusToCheck: s} }
	other := func(state string) azuretest.Policy { return azuretest.Policy{Type: "build", Evaluation: state} }
	cases := []struct {
		name        string
		mergeStatus string
		draft       bool
		statusName  string // Config.StatusName
		policies    []azuretest.Policy
		post        []string // contexts posted as successful first
		mergeable   bool
	}{
		{name: "no policies", mergeable: true},
		{name: "draft", draft: true},
		{name: "merge conflicts, policy approved", mergeStatus: "conflicts", policies: []azuretest.Policy{other("approved")}},
		{name: "policy approved", policies: []azuretest.Policy{other("approved")}, mergeable: true},
		{name: "policy rejected", policies: []azuretest.Policy{other("rejected")}},
		{name: "policy running", policies: []azuretest.Policy{other("running")}},
		{name: "policy queued", policies: []azuretest.Policy{other("queued")}},
		{name: "policy broken", policies: []azuretest.Policy{other("broken")}},
		{name: "one of several rejected", policies: []azuretest.Policy{other("approved"), other("rejected"), other("approved")}},
		{name: "minimum reviewers not met", policies: []azuretest.Policy{{Type: "minimumReviewers", Evaluation: "rejected"}}},
		{name: "comments unresolved", policies: []azuretest.Policy{{Type: "comments", Evaluation: "rejected"}}},
		{name: "optional policy rejected", policies: []azuretest.Policy{{Type: "build", Evaluation: "rejected", Optional: true}}, mergeable: true},
		{name: "disabled policy rejected", policies: []azuretest.Policy{{Type: "build", Evaluation: "rejected", Disabled: true}}, mergeable: true},
		{name: "deleted policy rejected", policies: []azuretest.Policy{{Type: "build", Evaluation: "rejected", Deleted: true}}, mergeable: true},
		{name: "policy not applicable", policies: []azuretest.Policy{other("notApplicable")}, mergeable: true},
		{name: "own apply status not posted", policies: []azuretest.Policy{status("Atlantis Bot/atlantis/apply")}, mergeable: true},
		{name: "own per-project apply status not posted", policies: []azuretest.Policy{status("Atlantis Bot/atlantis/apply: live/default")}, mergeable: true},
		{name: "plan status not posted", policies: []azuretest.Policy{status("Atlantis Bot/atlantis/plan")}},
		{name: "plan status succeeded", policies: []azuretest.Policy{status("Atlantis Bot/atlantis/plan")}, post: []string{"atlantis/plan"}, mergeable: true},
		{name: "another tool's status named apply", policies: []azuretest.Policy{status("ci/apply")}},
		{name: "another instance's apply status", statusName: "infra-bot", policies: []azuretest.Policy{status("Atlantis Bot/atlantis/apply")}},
		{name: "own apply status, custom status name", statusName: "infra-bot", policies: []azuretest.Policy{status("Atlantis Bot/infra-bot/apply")}, mergeable: true},
		{name: "a policy on atoll/atlantis/apply never matches", policies: []azuretest.Policy{status("atoll/atlantis/apply")}},
		{name: "status policy applying only when posted", policies: []azuretest.Policy{{Type: "status", StatusToCheck: "ci/lint", OnlyWhenPosted: true}}, mergeable: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			pr := basePull()
			pr.MergeStatus, pr.Draft = tc.mergeStatus, tc.draft
			srv.AddPull(org, project, repoName, pr)
			for _, pol := range tc.policies {
				srv.AddPolicy(org, project, repoName, pol)
			}
			p := newProvider(t, srv, func(c *azuredevops.Config) { c.StatusName = tc.statusName })
			for _, c := range tc.post {
				if err := p.SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusSuccess, Context: c}); err != nil {
					t.Fatal(err)
				}
			}
			if got := srv.Pull(org, project, repoName, 7).MergeStatus; tc.mergeStatus == "" && got != "succeeded" {
				t.Fatalf("mergeStatus = %s", got)
			}
			got, err := p.GetPull(context.Background(), repo, 7)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mergeable != tc.mergeable {
				t.Errorf("Mergeable = %v; want %v", got.Mergeable, tc.mergeable)
			}
		})
	}
}

// The evaluations are asked for with the project's id in the artifact:
// with the name the service finds none, and a blocking policy would go
// unseen. They are read page by page: a blocking policy after the first
// page still blocks.
func TestAzureMergeablePolicyArtifactAndPages(t *testing.T) {
	srv := newFake(t)
	for range 150 {
		srv.AddPolicy(org, project, repoName, azuretest.Policy{Type: "build", Evaluation: "approved"})
	}
	srv.AddPolicy(org, project, repoName, azuretest.Policy{Type: "build", Evaluation: "rejected"})
	got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got.Mergeable {
		t.Error("Mergeable with the 151st policy rejected")
	}
	var evals []azuretest.Call
	for _, c := range srv.Calls() {
		if strings.HasSuffix(c.Path, "/_apis/policy/evaluations") {
			evals = append(evals, c)
		}
	}
	if len(evals) != 2 {
		t.Fatalf("%d evaluation calls; want 2 pages", len(evals))
	}
	if !strings.Contains(evals[0].Query, "CodeReviewId%2F"+srv.ProjectID(org, project)+"%2F7") {
		t.Errorf("artifact in %q does not name the project's id", evals[0].Query)
	}
}

// Not being able to read the evaluations leaves the pull request not
// mergeable rather than failing the whole lookup (Approved still counts).
func TestAzureMergeablePolicyLookupFails(t *testing.T) {
	srv := newFake(t)
	srv.SetVote(org, project, repoName, 7, "bob@contoso.com", 10)
	srv.FailPolicyEvaluations(500)
	got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got.Mergeable || !got.Approved {
		t.Errorf("Mergeable, Approved = %v, %v; want false, true", got.Mergeable, got.Approved)
	}
}
