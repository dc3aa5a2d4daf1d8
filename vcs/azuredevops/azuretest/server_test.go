package azuretest_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

func do(t *testing.T, srv *azuretest.Server, method, path, accept, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(":tok")))
	req.Header.Set("X-TFS-FedAuthRedirect", "Suppress")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

// Requests as clients other than the Go SDK send them: numeric enums, the
// api-version in the query, and what Azure refuses.
func TestWireFormat(t *testing.T) {
	srv := azuretest.NewServer(t)
	srv.AcceptPAT("tok", "bot@x")
	srv.AddPull("o", "p", "r", azuretest.Pull{Number: 1, Author: "a@x", SourceRef: "f", TargetRef: "main",
		HeadSHA: strings.Repeat("a", 40), BaseSHA: strings.Repeat("b", 40)})
	const threads = "/o/p/_apis/git/repositories/r/pullRequests/1/threads"

	code, out := do(t, srv, "POST", threads+"?api-version=7.1", "application/json", `{"comments":[{"content":"hi","commentType":1}],"status":1}`)
	if code != 200 || out["status"] != "active" {
		t.Errorf("numeric enums: %d %v", code, out)
	}
	code, out = do(t, srv, "GET", threads, "application/json", "")
	if code != 400 || out["typeKey"] != "VssVersionNotSpecifiedException" {
		t.Errorf("no api-version: %d %v", code, out)
	}
	code, out = do(t, srv, "GET", "/o/p/_apis/git/repositories/nope/pullRequests/1", "application/json;api-version=7.1", "")
	if code != 404 || !strings.HasPrefix(out["message"].(string), "TF401019") {
		t.Errorf("unknown repository: %d %v", code, out)
	}
	code, out = do(t, srv, "POST", threads, "application/json;api-version=7.1", `{"comments":[]}`)
	if code != 400 {
		t.Errorf("empty thread: %d %v", code, out)
	}
	code, out = do(t, srv, "OPTIONS", "/o/_apis", "application/json", "")
	if code != 200 || out["count"].(float64) < 9 {
		t.Errorf("locations: %d %v", code, out)
	}
	th := srv.Threads("o", "p", "r", 1)
	if len(th) != 1 || th[0].Comments[0].Author != "bot@x" || th[0].Comments[0].CommentType != "text" {
		t.Errorf("threads = %+v", th)
	}
	// The repository's remoteUrl can point at a real git server.
	srv.SetRemoteURL("o", "p", "r", "file:///srv/git/r.git")
	_, out = do(t, srv, "GET", "/o/p/_apis/git/repositories/r/pullRequests/1", "application/json;api-version=7.1", "")
	if got := out["repository"].(map[string]any)["remoteUrl"]; got != "file:///srv/git/r.git" {
		t.Errorf("remoteUrl = %v", got)
	}
}

// Completing is asynchronous when CompletionPolls is set: the PATCH
// answers the pull request still active and queued, with a
// completionQueueTime, until enough GETs have looked at it.
func TestQueuedCompletion(t *testing.T) {
	srv := azuretest.NewServer(t)
	srv.AcceptPAT("tok", "bot@x")
	head := strings.Repeat("a", 40)
	srv.AddPull("o", "p", "r", azuretest.Pull{Number: 1, Author: "a@x", SourceRef: "f", TargetRef: "main",
		HeadSHA: head, BaseSHA: strings.Repeat("b", 40), CompletionPolls: 2})
	const pull = "/o/p/_apis/git/repositories/r/pullRequests/1"
	const v = "application/json;api-version=7.1"

	code, out := do(t, srv, "PATCH", pull, v, `{"status":"completed","lastMergeSourceCommit":{"commitId":"`+head+`"},"completionOptions":{"mergeStrategy":"squash"}}`)
	if code != 200 || out["status"] != "active" || out["mergeStatus"] != "queued" || out["completionQueueTime"] == nil {
		t.Fatalf("completing: %d status %v mergeStatus %v completionQueueTime %v; want active, queued, set", code, out["status"], out["mergeStatus"], out["completionQueueTime"])
	}
	if _, out = do(t, srv, "GET", pull, v, ""); out["status"] != "active" || out["mergeStatus"] != "queued" {
		t.Errorf("first look: status %v mergeStatus %v; want still queued", out["status"], out["mergeStatus"])
	}
	if _, out = do(t, srv, "GET", pull, v, ""); out["status"] != "completed" || out["completionQueueTime"] != nil || out["closedDate"] == nil {
		t.Errorf("second look: %v; want completed", out)
	}
	if got := srv.Pull("o", "p", "r", 1); got.Status != "completed" || got.MergeStrategy != "squash" || got.ClosedBy != "bot@x" {
		t.Errorf("pull = %+v", got)
	}

	// A queued completion that fails leaves the pull request active with
	// the failure.
	srv.AddPull("o", "p", "r", azuretest.Pull{Number: 2, Author: "a@x", SourceRef: "g", TargetRef: "main",
		HeadSHA: head, BaseSHA: strings.Repeat("b", 40), CompletionPolls: 1, MergeFailure: "TF401186: conflicts"})
	const pull2 = "/o/p/_apis/git/repositories/r/pullRequests/2"
	if _, out = do(t, srv, "PATCH", pull2, v, `{"status":"completed","lastMergeSourceCommit":{"commitId":"`+head+`"}}`); out["mergeStatus"] != "queued" || out["mergeFailureMessage"] != nil {
		t.Errorf("completing: %v; want queued without a failure yet", out)
	}
	if _, out = do(t, srv, "GET", pull2, v, ""); out["status"] != "active" || out["mergeStatus"] != "failure" || out["mergeFailureMessage"] != "TF401186: conflicts" {
		t.Errorf("after the queue: %v; want active, failure, the message", out)
	}
}
