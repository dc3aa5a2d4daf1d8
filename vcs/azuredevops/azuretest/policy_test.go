package azuretest_test

import (
	"net/url"
	"strings"
	"testing"

	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

const apiV = "application/json;api-version=7.1-preview.1"

// policyServer holds pull request 1 of o/p/r and returns the artifact id
// the Policy Evaluations API takes for it.
func policyServer(t *testing.T) (*azuretest.Server, string) {
	t.Helper()
	srv := azuretest.NewServer(t)
	srv.AcceptPAT("tok", "bot@x")
	srv.AddPull("o", "p", "r", azuretest.Pull{Number: 1, Author: "a@x", SourceRef: "f", TargetRef: "main",
		HeadSHA: strings.Repeat("a", 40), BaseSHA: strings.Repeat("b", 40)})
	_, pr := do(t, srv, "GET", "/o/p/_apis/git/repositories/r/pullRequests/1", apiV, "")
	projectID := pr["repository"].(map[string]any)["project"].(map[string]any)["id"].(string)
	return srv, "vstfs:///CodeReview/CodeReviewId/" + projectID + "/1"
}

func evaluations(t *testing.T, srv *azuretest.Server, query string) []map[string]any {
	t.Helper()
	code, out := do(t, srv, "GET", "/o/p/_apis/policy/evaluations?"+query, apiV, "")
	if code != 200 {
		t.Fatalf("evaluations?%s: %d %v", query, code, out)
	}
	var list []map[string]any
	for _, v := range out["value"].([]any) {
		list = append(list, v.(map[string]any))
	}
	return list
}

func postStatus(t *testing.T, srv *azuretest.Server, body string) {
	t.Helper()
	if code, out := do(t, srv, "POST", "/o/p/_apis/git/repositories/r/pullRequests/1/statuses", apiV, body); code != 200 {
		t.Fatalf("post status: %d %v", code, out)
	}
}

// The "status to check" box is split at its last "/": a status posted
// with genre atoll and name atlantis/apply (Atoll's old shape) never
// satisfies the policy "atoll/atlantis/apply", which wants genre
// atoll/atlantis and name apply.
func TestAzureStatusPolicyLastSlashSplit(t *testing.T) {
	for _, tc := range []struct{ in, genre, name string }{
		{"atoll/atlantis/apply", "atoll/atlantis", "apply"},
		{"Atlantis Bot/atlantis/apply", "Atlantis Bot/atlantis", "apply"},
		{"Atlantis Bot/atlantis/plan: dir/default", "Atlantis Bot/atlantis/plan: dir", "default"},
		{"apply", "", "apply"},
	} {
		if g, n := azuretest.SplitStatusToCheck(tc.in); g != tc.genre || n != tc.name {
			t.Errorf("SplitStatusToCheck(%q) = %q, %q; want %q, %q", tc.in, g, n, tc.genre, tc.name)
		}
	}
	srv, _ := policyServer(t)
	id := srv.AddPolicy("o", "p", "r", azuretest.Policy{Type: "status", StatusToCheck: "atoll/atlantis/apply"})
	if got := srv.PolicyEvaluation("o", "p", "r", 1, id); got != "queued" {
		t.Errorf("before any status: %s; want queued", got)
	}
	postStatus(t, srv, `{"state":"succeeded","context":{"genre":"atoll","name":"atlantis/apply"}}`)
	if got := srv.PolicyEvaluation("o", "p", "r", 1, id); got != "queued" {
		t.Errorf("genre atoll, name atlantis/apply: %s; want queued (no match)", got)
	}
	postStatus(t, srv, `{"state":"succeeded","context":{"genre":"atoll/atlantis","name":"apply"}}`)
	if got := srv.PolicyEvaluation("o", "p", "r", 1, id); got != "approved" {
		t.Errorf("genre atoll/atlantis, name apply: %s; want approved", got)
	}
}

// A status policy follows the latest matching status, and a status posted
// for an iteration a later push replaced no longer counts.
func TestAzureStatusPolicyEvaluation(t *testing.T) {
	srv, _ := policyServer(t)
	id := srv.AddPolicy("o", "p", "r", azuretest.Policy{Type: "status", StatusToCheck: "g/n"})
	for _, tc := range []struct{ state, want string }{
		{"pending", "running"}, {"failed", "rejected"}, {"error", "rejected"}, {"notApplicable", "notApplicable"}, {"succeeded", "approved"},
	} {
		postStatus(t, srv, `{"state":"`+tc.state+`","iterationId":1,"context":{"genre":"g","name":"n"}}`)
		if got := srv.PolicyEvaluation("o", "p", "r", 1, id); got != tc.want {
			t.Errorf("after %s: %s; want %s", tc.state, got, tc.want)
		}
	}
	srv.SetHead("o", "p", "r", 1, strings.Repeat("c", 40))
	if got := srv.PolicyEvaluation("o", "p", "r", 1, id); got != "queued" {
		t.Errorf("after a push: %s; want queued (the success was for iteration 1)", got)
	}
	only := srv.AddPolicy("o", "p", "r", azuretest.Policy{Type: "status", StatusToCheck: "other/x", OnlyWhenPosted: true})
	if got := srv.PolicyEvaluation("o", "p", "r", 1, only); got != "notApplicable" {
		t.Errorf("apply only when posted, nothing posted: %s; want notApplicable", got)
	}
}

// The list: records for the CodeReview artifact with the project's id;
// notApplicable ones only when asked; $top and $skip page; another form
// of the artifact id finds nothing, without an error.
func TestAzurePolicyEvaluationsList(t *testing.T) {
	srv, artifact := policyServer(t)
	srv.AddPolicy("o", "p", "r", azuretest.Policy{Type: "build", Evaluation: "rejected"})
	srv.AddPolicy("o", "p", "r", azuretest.Policy{Type: "comments", Evaluation: "notApplicable"})
	srv.AddPolicy("o", "p", "r", azuretest.Policy{Type: "minimumReviewers", Evaluation: "approved", Optional: true})
	a := "artifactId=" + url.QueryEscape(artifact)

	list := evaluations(t, srv, a)
	if len(list) != 2 || list[0]["status"] != "rejected" || list[1]["status"] != "approved" {
		t.Fatalf("evaluations = %v; want the build (rejected) and reviewers (approved), not the notApplicable one", list)
	}
	c := list[0]["configuration"].(map[string]any)
	if c["isBlocking"] != true || c["isEnabled"] != true || c["isDeleted"] != false || list[0]["artifactId"] != artifact {
		t.Errorf("build record = %v", list[0])
	}
	if c := list[1]["configuration"].(map[string]any); c["isBlocking"] != false {
		t.Errorf("optional policy isBlocking = %v", c["isBlocking"])
	}
	if list := evaluations(t, srv, a+"&includeNotApplicable=true"); len(list) != 3 {
		t.Errorf("includeNotApplicable: %d records; want 3", len(list))
	}
	if list := evaluations(t, srv, a+"&%24top=1&%24skip=1"); len(list) != 1 || list[0]["status"] != "approved" {
		t.Errorf("$top=1&$skip=1: %v", list)
	}
	for _, wrong := range []string{
		"vstfs:///CodeReview/CodeReviewId/p/1",                                       // the project's name
		"vstfs:///CodeReview/CodeReviewId/" + strings.Split(artifact, "/")[5] + "/2", // another pull request
		"vstfs:///Git/PullRequestId/x%2fy%2f1",                                       // the pull request's own artifact
	} {
		if list := evaluations(t, srv, "artifactId="+url.QueryEscape(wrong)); len(list) != 0 {
			t.Errorf("artifactId %s: %v; want none", wrong, list)
		}
	}
	if code, _ := do(t, srv, "GET", "/o/p/_apis/policy/evaluations", apiV, ""); code != 400 {
		t.Errorf("no artifactId: %d; want 400", code)
	}
}
