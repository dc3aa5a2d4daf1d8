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
