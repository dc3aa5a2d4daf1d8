package github_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/atollhq/atoll"
	ghp "github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/github/githubtest"
)

// fakeGitHub is the shared fake GitHub (githubtest) with one repository,
// octocat/Hello-World, whose pull request 1347 is GitHub's sample one, and
// this package's shorthands for it.
type fakeGitHub struct {
	*githubtest.Server
	t *testing.T
}

const (
	owner    = "octocat"
	repoName = "Hello-World"
	pullNum  = 1347
	fullName = owner + "/" + repoName
	token    = "ghp_secrettoken"
)

var helloWorld = atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: owner, Name: repoName}

func newFake(t *testing.T) *fakeGitHub {
	t.Helper()
	s := githubtest.NewServer(t)
	s.AcceptToken(token)
	s.SetPull(githubtest.Pull{Repo: fullName, Number: pullNum})
	return &fakeGitHub{Server: s, t: t}
}

// provider returns a token-authenticated Provider pointed at the fake.
func (f *fakeGitHub) provider(t *testing.T) *ghp.Provider {
	t.Helper()
	p, err := ghp.New(ghp.Config{APIURL: f.URL + "/", User: "atoll-bot", Token: token, WebhookSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newComment posts a comment by login on the pull request, as GitHub
// would answer it.
func (f *fakeGitHub) newComment(login, body string) map[string]any {
	c := f.AddComment(githubtest.Comment{Repo: fullName, Pull: pullNum, Author: login, Body: body})
	return map[string]any{"id": c.ID, "node_id": c.NodeID, "body": c.Body}
}

// updatePull changes the pull request.
func (f *fakeGitHub) updatePull(fn func(*githubtest.Pull)) {
	if !f.UpdatePull(fullName, pullNum, fn) {
		f.t.Fatal("no pull request")
	}
}

// setPullFields sets top-level fields of the pull request's answer.
func (f *fakeGitHub) setPullFields(t *testing.T, fields map[string]any) {
	f.updatePull(func(p *githubtest.Pull) {
		if p.Fields == nil {
			p.Fields = map[string]any{}
		}
		for k, v := range fields {
			p.Fields[k] = v
		}
	})
}

// setHeadRepo makes the pull request's head live in fullName.
func (f *fakeGitHub) setHeadRepo(t *testing.T, fullName string) {
	f.updatePull(func(p *githubtest.Pull) { p.HeadRepo = fullName })
}

// setReviews sets the pull request's reviews.
func (f *fakeGitHub) setReviews(reviews []map[string]any) {
	f.updatePull(func(p *githubtest.Pull) { p.Reviews = reviews })
}

func (f *fakeGitHub) callsTo(method, path string) []githubtest.Call { return f.CallsTo(method, path) }

func (f *fakeGitHub) allCalls() []githubtest.Call { return f.Calls() }

// answer makes the fake answer method and path with fn instead.
func (f *fakeGitHub) answer(method, path string, fn func(w http.ResponseWriter, r *http.Request)) {
	f.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || r.URL.Path != path {
			return false
		}
		fn(w, r)
		return true
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// answerGraphQL makes the fake answer GraphQL requests with fn, given the
// request's variable id.
func (f *fakeGitHub) answerGraphQL(fn func(w http.ResponseWriter, id string)) {
	f.answer("POST", "/graphql", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Variables struct{ ID string } }
		json.NewDecoder(r.Body).Decode(&in)
		fn(w, in.Variables.ID)
	})
}
