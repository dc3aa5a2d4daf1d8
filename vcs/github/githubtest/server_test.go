package githubtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll/vcs/github/githubtest"
)

func do(t *testing.T, s *githubtest.Server, method, path, auth, body string) (int, any) {
	t.Helper()
	req, _ := http.NewRequest(method, s.URL+path, strings.NewReader(body))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out any
	json.Unmarshal(raw, &out)
	return resp.StatusCode, out
}

func message(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["message"].(string)
	return s
}

// What GitHub refuses, as it refuses it, for clients other than the
// provider.
func TestWireFormat(t *testing.T) {
	s := githubtest.NewServer(t)
	s.AcceptToken("tok")
	s.SetPull(githubtest.Pull{Repo: "acme/infra", Number: 1, HeadSHA: "abc", HeadRef: "topic", BaseRef: "main"})
	const auth = "token tok"

	// Credentials: the token, or the App's JWT where GitHub takes it.
	const jwt = "Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiI5OSJ9.c2ln"
	if code, out := do(t, s, "GET", "/repos/acme/infra/pulls/1", "token wrong", ""); code != 401 || message(out) != "Bad credentials" {
		t.Errorf("wrong token: %d %v", code, out)
	}
	if code, _ := do(t, s, "GET", "/repos/acme/infra/pulls/1", jwt, ""); code != 401 {
		t.Errorf("an App JWT on a repository endpoint: %d", code)
	}
	code, out := do(t, s, "POST", "/app/installations/42/access_tokens", jwt, "")
	tok, _ := out.(map[string]any)["token"].(string)
	if code != 201 || tok != "ghs_installationtoken-42" {
		t.Fatalf("installation token: %d %v", code, out)
	}
	if code, _ := do(t, s, "GET", "/repos/acme/infra/pulls/1", "token "+tok, ""); code != 200 {
		t.Errorf("the minted installation token: %d", code)
	}

	// The pull request, rendered from GitHub's sample.
	code, out = do(t, s, "GET", "/repos/acme/infra/pulls/1", auth, "")
	pr, _ := out.(map[string]any)
	if code != 200 || pr["number"] != 1.0 || pr["state"] != "open" || pr["head"].(map[string]any)["sha"] != "abc" ||
		pr["base"].(map[string]any)["repo"].(map[string]any)["full_name"] != "acme/infra" {
		t.Errorf("pull request: %d %v", code, pr)
	}
	if code, out := do(t, s, "GET", "/repos/acme/infra/pulls/2", auth, ""); code != 404 || message(out) != "Not Found" {
		t.Errorf("unknown pull request: %d %v", code, out)
	}
	if code, _ := do(t, s, "POST", "/repos/acme/nope/statuses/abc", auth, `{"state":"success","context":"x"}`); code != 404 {
		t.Errorf("status on an unknown repository: %d", code)
	}

	// Comments: at most 65,536 characters.
	long, _ := json.Marshal(map[string]string{"body": strings.Repeat("é", githubtest.MaxCommentBody+1)})
	if code, _ := do(t, s, "POST", "/repos/acme/infra/issues/1/comments", auth, string(long)); code != 422 {
		t.Errorf("over-long comment: %d", code)
	}
	fits, _ := json.Marshal(map[string]string{"body": strings.Repeat("é", githubtest.MaxCommentBody)})
	if code, _ := do(t, s, "POST", "/repos/acme/infra/issues/1/comments", auth, string(fits)); code != 201 {
		t.Errorf("longest comment: %d", code)
	}
	if c := s.Comments("acme/infra", 1); len(c) != 1 || c[0].Author != "atoll-bot" {
		t.Errorf("comments = %+v", c)
	}

	// Merging closes the pull request; merging it again is 405.
	if code, _ := do(t, s, "PUT", "/repos/acme/infra/pulls/1/merge", auth, `{"merge_method":"squash"}`); code != 200 {
		t.Errorf("merge: %d", code)
	}
	if code, out := do(t, s, "PUT", "/repos/acme/infra/pulls/1/merge", auth, `{}`); code != 405 || message(out) != "Pull Request is not mergeable" {
		t.Errorf("merge of a closed pull request: %d %v", code, out)
	}
	if m := s.Merges("acme/infra", 1); len(m) != 1 || m[0].Method != "squash" {
		t.Errorf("merges = %+v", m)
	}
	if p, _ := s.GetPull("acme/infra", 1); p.State != "closed" || !p.Merged {
		t.Errorf("merged pull request = %+v", p)
	}

	// Branches: a protected one and a missing one are 422.
	s.SetBranch("acme/infra", "topic", true)
	s.SetBranch("acme/infra", "keep", true)
	s.ProtectBranch("acme/infra", "keep")
	for branch, want := range map[string]string{"keep": "Cannot delete this protected branch", "gone": "Reference does not exist"} {
		if code, out := do(t, s, "DELETE", "/repos/acme/infra/git/refs/heads/"+branch, auth, ""); code != 422 || message(out) != want {
			t.Errorf("delete %s: %d %v", branch, code, out)
		}
	}
	if code, _ := do(t, s, "DELETE", "/repos/acme/infra/git/refs/heads/topic", auth, ""); code != 204 {
		t.Errorf("delete topic: %d", code)
	}
	if d := s.DeletedBranches("acme/infra"); len(d) != 1 || d[0] != "topic" {
		t.Errorf("deleted = %v", d)
	}
}

// Reactions: 201, then 200 for the same one; 403 when refused; 404 for a
// comment the server does not have.
func TestReactions(t *testing.T) {
	s := githubtest.NewServer(t)
	s.AcceptToken("tok")
	s.SetPull(githubtest.Pull{Repo: "acme/infra", Number: 1})
	c := s.AddComment(githubtest.Comment{ID: 396926483, Repo: "acme/infra", Pull: 1, Author: "alice", Body: "atlantis plan"})
	path := "/repos/acme/infra/issues/comments/396926483/reactions"
	for _, want := range []int{201, 200} {
		if code, _ := do(t, s, "POST", path, "token tok", `{"content":"eyes"}`); code != want {
			t.Errorf("reaction: %d, want %d", code, want)
		}
	}
	if code, _ := do(t, s, "POST", path, "token tok", `{"content":"thumbsup"}`); code != 422 {
		t.Errorf("unknown content: %d", code)
	}
	if code, _ := do(t, s, "POST", "/repos/acme/infra/issues/comments/1/reactions", "token tok", `{"content":"eyes"}`); code != 404 {
		t.Errorf("unknown comment: %d", code)
	}
	s.RefuseReactions(true)
	if code, _ := do(t, s, "POST", path, "token tok", `{"content":"rocket"}`); code != 403 {
		t.Errorf("refused: %d", code)
	}
	if r := s.Reactions(c.ID); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("reactions = %+v", r)
	}
}

// A node of a pair calls through /via/<node>/: its writes are told apart,
// and one can be held.
func TestViaNodeAndHeldWrite(t *testing.T) {
	s := githubtest.NewServer(t)
	s.AcceptToken("tok")
	s.SetPull(githubtest.Pull{Repo: "acme/infra", Number: 1})
	since := time.Now()
	held, release := s.HoldWrite("a")
	done := make(chan int)
	go func() {
		code, _ := do(t, s, "POST", "/via/a/repos/acme/infra/issues/1/comments", "token tok", `{"body":"from a"}`)
		done <- code
	}()
	select {
	case <-held:
	case <-time.After(10 * time.Second):
		t.Fatal("the write never arrived")
	}
	select {
	case <-done:
		t.Fatal("the held write was answered")
	case <-time.After(50 * time.Millisecond):
	}
	release()
	if code := <-done; code != 201 {
		t.Errorf("held write: %d", code)
	}
	if code, _ := do(t, s, "GET", "/via/b/repos/acme/infra/issues/1/comments", "token tok", ""); code != 200 {
		t.Errorf("read via b: %d", code)
	}
	if w := s.Writes("a", since); len(w) != 1 || w[0].Path != "/repos/acme/infra/issues/1/comments" {
		t.Errorf("writes of a = %+v", w)
	}
	if w := s.Writes("b", since); len(w) != 0 {
		t.Errorf("writes of b = %+v (a GET is no write)", w)
	}
}

// Comments on an issue the server does not know are 404, unless AnyIssue.
func TestAnyIssue(t *testing.T) {
	s := githubtest.NewServer(t)
	s.AcceptToken("tok")
	if code, _ := do(t, s, "POST", "/repos/acme/infra/issues/5/comments", "token tok", `{"body":"hi"}`); code != 404 {
		t.Errorf("comment on an unknown issue: %d", code)
	}
	s.AnyIssue(true)
	if code, _ := do(t, s, "POST", "/repos/acme/infra/issues/5/comments", "token tok", `{"body":"hi"}`); code != 201 {
		t.Errorf("comment on any issue: %d", code)
	}
	if code, out := do(t, s, "GET", "/repos/acme/infra/issues/5/comments", "token tok", ""); code != 200 || len(out.([]any)) != 1 {
		t.Errorf("comments of any issue: %d %v", code, out)
	}
}
