package atoll_test

import (
	"testing"

	"github.com/atollhq/atoll"
)

// TestLinks pins the addresses: comments already posted on pull requests
// point at them, so a change breaks links in the wild.
func TestLinks(t *testing.T) {
	public := atoll.Links{Base: "https://atoll.example.com"}
	var paths atoll.Links
	for _, tt := range []struct{ got, want string }{
		{paths.Job(7), "/jobs/7"},
		{public.Job(7), "https://atoll.example.com/jobs/7"},
		{paths.JobLog(7), "/jobs/7/log.txt"},
		{paths.JobLine(7, 12), "/jobs/7#L12"},
		{paths.Pull("acme/infra", 3), "/repos/acme/infra/pulls/3"},
		// Azure DevOps: ORG/PROJECT is one segment.
		{public.Pull("org/proj/repo", 3), "https://atoll.example.com/repos/org%2Fproj/repo/pulls/3"},
		{paths.Pull("acme/a b", 3), "/repos/acme/a%20b/pulls/3"},
		// A drift target (negative number) links to its repository's drift.
		{paths.Pull("acme/infra", -1), "/drift?repo=acme%2Finfra"},
		{public.Pull("acme/infra", -2), "https://atoll.example.com/drift?repo=acme%2Finfra"},
		{paths.Drift("", ""), "/drift"},
		{paths.Drift("acme/infra", atoll.DriftDrifted), "/drift?repo=acme%2Finfra&state=drifted"},
		{paths.DriftHistory("acme/infra", 9, "release/1"), "/drift?repo=acme%2Finfra&project=9&branch=release%2F1"},
		{paths.DriftCheck(), "/drift/check"},
		{public.DriftReconcile(), "https://atoll.example.com/drift/reconcile"},
		{paths.DriftApply(), "/drift/apply"},
		{paths.PullCommands("acme/infra", 3), "/repos/acme/infra/pulls/3/commands"},
		{paths.PullComment("acme/infra", 3), "/repos/acme/infra/pulls/3/comment"},
		{paths.ProjectAnchor(9), "project-9"},
		{public.Project("acme/infra", 3, 9), "https://atoll.example.com/repos/acme/infra/pulls/3#project-9"},
		{paths.Plan(5), "/plans/5"},
		{paths.PlanDecision(5, atoll.DecisionApprove), "/plans/5/approve"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
