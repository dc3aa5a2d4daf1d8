package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeGitHub is a GitHub REST API stand-in speaking the real wire format
// (enough of it for go-github), recording what Atoll calls.
type fakeGitHub struct {
	*httptest.Server
	t testing.TB

	mu        sync.Mutex
	pulls     map[int]*fakePull
	comments  []fakeComment
	statuses  []fakeStatus
	minimized []string
	calls     []string
	merges    []fakeMerge
	checkRuns []map[string]any // check runs as GitHub stores them (see fakechecks_test.go)

	// writes are the calls that change something (every method but GET),
	// with the node that made them: a node of an HA pair calls the fake
	// through its own prefix, /via/<node id>/ (see startNode).
	writes []fakeWrite
	// hold, when set, holds the answer to the first write of node holdNode
	// until release is closed (or a minute passes); held is closed once
	// that write arrived.
	holdNode      string
	held, release chan struct{}
}

type fakeWrite struct {
	Node, Method, Path string
	At                 time.Time
}

type fakeMerge struct {
	Pull   int
	Method string
}

type fakePull struct {
	HeadSHA, HeadRef, BaseSHA, BaseRef string
	Files                              []string
	Approved                           bool
	Dismissals                         int // approvals dismissed (dismissReview)
	State                              string
	ForkOwner                          string // head repository owner when it is a fork
	Labels                             []string
}

type fakeComment struct {
	ID     int64
	Pull   int
	Body   string
	NodeID string
}

type fakeStatus struct {
	SHA, State, Context, Description string
}

func newFakeGitHub(t testing.TB) *fakeGitHub {
	f := &fakeGitHub{t: t, pulls: map[int]*fakePull{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}", f.getPull)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/files", f.listFiles)
	mux.HandleFunc("GET /repos/{owner}/{repo}/pulls/{n}/reviews", f.listReviews)
	mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/reviews/{id}/dismissals", f.dismissReview)
	mux.HandleFunc("GET /repos/{owner}/{repo}/issues/{n}/comments", f.listComments)
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/{n}/comments", f.createComment)
	mux.HandleFunc("POST /repos/{owner}/{repo}/statuses/{sha}", f.createStatus)
	mux.HandleFunc("POST /graphql", f.graphql)
	mux.HandleFunc("PUT /repos/{owner}/{repo}/pulls/{n}/merge", f.merge)
	f.checksRoutes(mux)
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		writeJSONResp(w, map[string]any{"login": "atoll-bot", "id": 1, "type": "User"})
	})
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		node := ""
		if rest, ok := strings.CutPrefix(r.URL.Path, "/via/"); ok {
			node, rest, _ = strings.Cut(rest, "/")
			r.URL.Path, r.URL.RawPath = "/"+rest, ""
		}
		if !f.authorized(w, r) {
			return
		}
		if r.Method != http.MethodGet {
			f.recordWrite(node, r)
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.Close)
	return f
}

// authorized answers 401 unless r carries the test token (or an App's
// JWT), as GitHub does, and records the call.
func (f *fakeGitHub) authorized(w http.ResponseWriter, r *http.Request) bool {
	if r.Header.Get("Authorization") != "Bearer gh-test-token" && r.Header.Get("Authorization") != "token gh-test-token" && !appJWT(r) {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return false
	}
	f.mu.Lock()
	f.calls = append(f.calls, r.Method+" "+r.URL.Path)
	f.mu.Unlock()
	return true
}

// recordWrite records a write and, if it is the one to hold, holds it.
func (f *fakeGitHub) recordWrite(node string, r *http.Request) {
	f.mu.Lock()
	f.writes = append(f.writes, fakeWrite{Node: node, Method: r.Method, Path: r.URL.Path, At: time.Now()})
	hold := f.holdNode != "" && node == f.holdNode
	var held, release chan struct{}
	if hold {
		f.holdNode = ""
		held, release = f.held, f.release
	}
	f.mu.Unlock()
	if hold {
		close(held)
		select {
		case <-release:
		case <-time.After(time.Minute):
		}
	}
}

// holdFirstWrite makes the fake hold its answer to node's next write;
// it returns a channel closed once that write arrived and a function that
// lets the answer go.
func (f *fakeGitHub) holdFirstWrite(node string) (held <-chan struct{}, release func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holdNode, f.held, f.release = node, make(chan struct{}), make(chan struct{})
	var once sync.Once
	r := f.release
	return f.held, func() { once.Do(func() { close(r) }) }
}

// writesBy are the writes node made at or after since.
func (f *fakeGitHub) writesBy(node string, since time.Time) []fakeWrite {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeWrite
	for _, w := range f.writes {
		if w.Node == node && !w.At.Before(since) {
			out = append(out, w)
		}
	}
	return out
}

func writeJSONResp(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(v)
}

func (f *fakeGitHub) pull(r *http.Request) (*fakePull, int, bool) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pulls[n]
	if !ok {
		return nil, n, false
	}
	cp := *p
	return &cp, n, true
}

func (f *fakeGitHub) setPull(n int, p fakePull) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.State == "" {
		p.State = "open"
	}
	f.pulls[n] = &p
}

// getPull answers with GitHub's own sample pull request, adjusted.
func (f *fakeGitHub) getPull(w http.ResponseWriter, r *http.Request) {
	p, n, ok := f.pull(r)
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	raw, err := os.ReadFile(fixture("api.pull_request.json"))
	if err != nil {
		f.t.Error(err)
		return
	}
	var body map[string]any
	json.Unmarshal(raw, &body)
	body["number"], body["state"], body["merged"] = n, p.State, false
	body["mergeable"], body["mergeable_state"] = true, "clean"
	body["head"].(map[string]any)["sha"] = p.HeadSHA
	body["head"].(map[string]any)["ref"] = p.HeadRef
	body["base"].(map[string]any)["sha"] = p.BaseSHA
	body["base"].(map[string]any)["ref"] = p.BaseRef
	headRepo := body["head"].(map[string]any)["repo"].(map[string]any)
	if p.ForkOwner != "" {
		headRepo["full_name"] = p.ForkOwner + "/infra"
	} else {
		headRepo["full_name"] = body["base"].(map[string]any)["repo"].(map[string]any)["full_name"]
	}
	labels := []any{}
	for _, l := range p.Labels {
		labels = append(labels, map[string]any{"name": l, "color": "ededed", "default": false})
	}
	body["labels"] = labels
	writeJSONResp(w, body)
}

func (f *fakeGitHub) listFiles(w http.ResponseWriter, r *http.Request) {
	p, _, ok := f.pull(r)
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	files := []map[string]any{}
	for _, name := range p.Files {
		files = append(files, map[string]any{"filename": name, "status": "modified", "additions": 1, "deletions": 1, "changes": 2})
	}
	writeJSONResp(w, files)
}

func (f *fakeGitHub) listReviews(w http.ResponseWriter, r *http.Request) {
	p, _, ok := f.pull(r)
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	reviews := []map[string]any{}
	if p.Approved {
		reviews = append(reviews, map[string]any{"id": 80, "user": map[string]any{"login": "bob"}, "state": "APPROVED"})
	}
	writeJSONResp(w, reviews)
}

// dismissReview dismisses the approval listReviews shows (id 80), as
// GitHub's dismissals endpoint does, and counts it.
func (f *fakeGitHub) dismissReview(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pulls[n]
	if !ok || r.PathValue("id") != "80" || !p.Approved {
		w.WriteHeader(http.StatusUnprocessableEntity)
		writeJSONResp(w, map[string]any{"message": "Can not dismiss a dismissed pull request review"})
		return
	}
	p.Approved = false
	p.Dismissals++
	writeJSONResp(w, map[string]any{"id": 80, "user": map[string]any{"login": "bob"}, "state": "DISMISSED"})
}

func (f *fakeGitHub) commentJSON(c fakeComment) map[string]any {
	return map[string]any{"id": c.ID, "node_id": c.NodeID, "body": c.Body, "user": map[string]any{"login": "atoll-bot"},
		"html_url": fmt.Sprintf("%s/acme/infra/pull/%d#issuecomment-%d", f.URL, c.Pull, c.ID)}
}

func (f *fakeGitHub) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	f.mu.Lock()
	out := []map[string]any{}
	for _, c := range f.comments {
		if c.Pull == n {
			out = append(out, f.commentJSON(c))
		}
	}
	f.mu.Unlock()
	writeJSONResp(w, out)
}

func (f *fakeGitHub) createComment(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	var in struct{ Body string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, `{"message":"Problems parsing JSON"}`, http.StatusBadRequest)
		return
	}
	if len(in.Body) > 65536 {
		http.Error(w, `{"message":"Validation Failed","errors":[{"message":"body is too long (maximum is 65536 characters)"}]}`, http.StatusUnprocessableEntity)
		return
	}
	f.mu.Lock()
	c := fakeComment{ID: int64(1000 + len(f.comments)), Pull: n, Body: in.Body}
	c.NodeID = fmt.Sprintf("IC_%d", c.ID)
	f.comments = append(f.comments, c)
	f.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	writeJSONResp(w, f.commentJSON(c))
}

func (f *fakeGitHub) createStatus(w http.ResponseWriter, r *http.Request) {
	var in struct{ State, Context, Description string }
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		http.Error(w, `{"message":"Problems parsing JSON"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.statuses = append(f.statuses, fakeStatus{SHA: r.PathValue("sha"), State: in.State, Context: in.Context, Description: in.Description})
	f.mu.Unlock()
	w.WriteHeader(http.StatusCreated)
	writeJSONResp(w, map[string]any{"id": 1, "state": in.State, "context": in.Context, "description": in.Description})
}

func (f *fakeGitHub) graphql(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var in struct {
		Variables map[string]any `json:"variables"`
		Query     string         `json:"query"`
	}
	json.Unmarshal(body, &in)
	f.mu.Lock()
	f.minimized = append(f.minimized, string(body))
	f.mu.Unlock()
	writeJSONResp(w, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{"minimizedComment": map[string]any{"isMinimized": true}}}})
}

// merge merges an open pull request, as GitHub's merge endpoint does.
func (f *fakeGitHub) merge(w http.ResponseWriter, r *http.Request) {
	p, n, ok := f.pull(r)
	if !ok {
		http.Error(w, `{"message":"Not Found"}`, http.StatusNotFound)
		return
	}
	var in struct {
		MergeMethod string `json:"merge_method"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	defer f.mu.Unlock()
	if p.State != "open" {
		w.WriteHeader(http.StatusMethodNotAllowed)
		writeJSONResp(w, map[string]any{"message": "Pull Request is not mergeable"})
		return
	}
	p.State = "closed"
	f.merges = append(f.merges, fakeMerge{Pull: n, Method: in.MergeMethod})
	writeJSONResp(w, map[string]any{"sha": p.HeadSHA, "merged": true, "message": "Pull Request successfully merged"})
}

func (f *fakeGitHub) mergesOf(n int) []fakeMerge {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []fakeMerge
	for _, m := range f.merges {
		if m.Pull == n {
			out = append(out, m)
		}
	}
	return out
}

// pullComments returns the bodies of the comments on pull n.
func (f *fakeGitHub) pullComments(n int) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.comments {
		if c.Pull == n {
			out = append(out, c.Body)
		}
	}
	return out
}

// status returns the latest state of context on sha.
func (f *fakeGitHub) status(sha, context string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	state := ""
	for _, s := range f.statuses {
		if s.SHA == sha && s.Context == context {
			state = s.State
		}
	}
	return state
}

func (f *fakeGitHub) minimizeCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, m := range f.minimized {
		if strings.Contains(m, "minimizeComment") {
			n++
		}
	}
	return n
}

func fixture(name string) string { return "../../vcs/github/testdata/github/" + name }

// ghExtras is a second front for a fakeGitHub with what only some tests
// need, in GitHub's wire format: comment reactions (201 with the reaction,
// 200 when it exists), git ref deletion (204; 422 "Reference does not
// exist" for a missing branch) and the organization teams GraphQL query
// (the teams with a member among userLogins, each with its ancestors).
// Anything else goes to the fake, which also authenticates and records
// every call. Point GHAPIURL at URL+"/".
type ghExtras struct {
	*httptest.Server
	gh *fakeGitHub

	mu          sync.Mutex
	reactions   []fakeReaction
	branches    map[string]bool     // existing branches of acme/infra
	deleted     []string            // branches deleted, in order
	teams       map[string][]string // team slug: direct members' logins
	parents     map[string]string   // team slug: parent team slug
	teamQueries int
	// refuseReactions answers reactions 403, as GitHub does a token that
	// may not write issues.
	refuseReactions bool
	// protected branches cannot be deleted (422, as GitHub answers).
	protected map[string]bool
}

type fakeReaction struct {
	CommentID, Content string
}

func newGHExtras(t testing.TB, f *fakeGitHub) *ghExtras {
	x := &ghExtras{gh: f, branches: map[string]bool{}, teams: map[string][]string{}, parents: map[string]string{}}
	inner := f.Server.Config.Handler
	mux := http.NewServeMux()
	mux.HandleFunc("POST /repos/{owner}/{repo}/issues/comments/{id}/reactions", x.react)
	mux.HandleFunc("DELETE /repos/{owner}/{repo}/git/refs/heads/{branch...}", x.deleteRef)
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		x.teamsQuery(w, body)
	})
	x.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		_, pattern := mux.Handler(r)
		if pattern == "" || (pattern == "POST /graphql" && !strings.Contains(string(body), "teams(")) {
			inner.ServeHTTP(w, r) // authenticated and recorded there
			return
		}
		if f.authorized(w, r) {
			mux.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(x.Close)
	return x
}

func (x *ghExtras) react(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Content string `json:"content"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	switch in.Content {
	case "+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes":
	default:
		w.WriteHeader(http.StatusUnprocessableEntity)
		writeJSONResp(w, map[string]any{"message": "Validation Failed", "errors": []map[string]any{{"resource": "Reaction", "code": "custom", "field": "content", "message": "content is not included in the list"}}})
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.refuseReactions {
		w.WriteHeader(http.StatusForbidden)
		writeJSONResp(w, map[string]any{"message": "Resource not accessible by integration", "status": "403"})
		return
	}
	reaction := map[string]any{"id": len(x.reactions) + 1, "node_id": "REA_1", "content": in.Content,
		"user": map[string]any{"login": "atoll-bot", "id": 1, "type": "User"}, "created_at": "2026-11-22T22:00:00Z"}
	for _, re := range x.reactions {
		if re.CommentID == r.PathValue("id") && re.Content == in.Content {
			writeJSONResp(w, reaction) // 200: already there
			return
		}
	}
	x.reactions = append(x.reactions, fakeReaction{CommentID: r.PathValue("id"), Content: in.Content})
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusCreated)
	json.NewEncoder(w).Encode(reaction)
}

func (x *ghExtras) deleteRef(w http.ResponseWriter, r *http.Request) {
	x.mu.Lock()
	defer x.mu.Unlock()
	b := r.PathValue("branch")
	if x.protected[b] {
		w.WriteHeader(http.StatusUnprocessableEntity)
		writeJSONResp(w, map[string]any{"message": "Cannot delete this protected branch", "documentation_url": "https://docs.github.com/rest/git/refs#delete-a-reference"})
		return
	}
	if !x.branches[b] {
		w.WriteHeader(http.StatusUnprocessableEntity)
		writeJSONResp(w, map[string]any{"message": "Reference does not exist", "documentation_url": "https://docs.github.com/rest/git/refs#delete-a-reference"})
		return
	}
	delete(x.branches, b)
	x.deleted = append(x.deleted, b)
	w.WriteHeader(http.StatusNoContent)
}

func (x *ghExtras) teamsQuery(w http.ResponseWriter, body []byte) {
	var in struct {
		Query     string `json:"query"`
		Variables struct {
			Org   string `json:"org"`
			Login string `json:"login"`
		} `json:"variables"`
	}
	json.Unmarshal(body, &in)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.teamQueries++
	if in.Variables.Org != "acme" {
		writeJSONResp(w, map[string]any{"data": map[string]any{"organization": nil}, "errors": []map[string]any{{"type": "NOT_FOUND", "path": []string{"organization"},
			"message": fmt.Sprintf("Could not resolve to an Organization with the login of '%s'.", in.Variables.Org)}}})
		return
	}
	nodes := []map[string]any{}
	for slug, members := range x.teams {
		member := false
		for _, m := range members {
			member = member || strings.EqualFold(m, in.Variables.Login)
		}
		if !member {
			continue
		}
		ancestors := []map[string]any{}
		for p := x.parents[slug]; p != ""; p = x.parents[p] {
			ancestors = append(ancestors, map[string]any{"slug": p})
		}
		nodes = append(nodes, map[string]any{"slug": slug, "ancestors": map[string]any{"nodes": ancestors}})
	}
	writeJSONResp(w, map[string]any{"data": map[string]any{"organization": map[string]any{"teams": map[string]any{
		"nodes": nodes, "pageInfo": map[string]any{"hasNextPage": false, "endCursor": "Y3Vyc29yOjE="}}}}})
}

func (x *ghExtras) reactionsOn(commentID string) []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	var out []string
	for _, re := range x.reactions {
		if re.CommentID == commentID {
			out = append(out, re.Content)
		}
	}
	return out
}

func (x *ghExtras) deletedBranches() []string {
	x.mu.Lock()
	defer x.mu.Unlock()
	return append([]string(nil), x.deleted...)
}

// pullState is a copy of pull request n as the fake holds it.
func (f *fakeGitHub) pullState(n int) (fakePull, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.pulls[n]
	if !ok {
		return fakePull{}, false
	}
	return *p, true
}
