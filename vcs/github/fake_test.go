package github_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	ghp "github.com/atollhq/atoll/vcs/github"
)

// call is one request the fake API received.
type call struct {
	Method string
	Path   string
	Query  string
	Auth   string
	Body   []byte
}

// fakeGitHub is a GitHub REST + GraphQL API for one repository,
// octocat/Hello-World, whose pull request 1347 is the fixture response. It
// speaks GitHub's wire format: JSON bodies, Link-header pagination, 404
// {"message":"Not Found"} for anything it does not know.
type fakeGitHub struct {
	t   *testing.T
	srv *httptest.Server

	mu        sync.Mutex
	calls     []call
	pull      []byte           // GET pulls/1347 response
	reviews   []map[string]any // pulls/1347/reviews
	files     []map[string]any // pulls/1347/files
	comments  []map[string]any // issues/1347/comments
	nextID    int64
	merge     func(w http.ResponseWriter, body map[string]any)
	graphql   func(w http.ResponseWriter, id string) // nil: minimize succeeds
	checkRuns []map[string]any                       // POST check-runs, as GitHub stores them
	// refs are the branches DELETE git/refs/heads/... may delete (true:
	// exists); reactions are the POSTed reactions with their comment id.
	refs      map[string]bool
	reactions []map[string]any
	// teams are the organization's teams (see fake_teams_test.go).
	teams []fakeTeam
	// intercept, when set, answers a request before the routes do (it is
	// still recorded); it reports whether it did.
	intercept func(w http.ResponseWriter, r *http.Request) bool
	// protection is the base branch's protection, rulesets, head commit
	// statuses and review decision (see fake_protection_test.go).
	protection fakeProtection
	// App endpoints.
	installationID int64
	instToken      string
}

const (
	owner    = "octocat"
	repoName = "Hello-World"
	pullNum  = 1347
)

var helloWorld = atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: owner, Name: repoName}

func newFake(t *testing.T) *fakeGitHub {
	t.Helper()
	f := &fakeGitHub{t: t, pull: readFixture(t, "github/api.pull_request.json"), nextID: 1000, installationID: 42, instToken: "ghs_installationtoken"}
	mux := http.NewServeMux()
	repo := "/repos/" + owner + "/" + repoName
	pull := repo + "/pulls/" + strconv.Itoa(pullNum)
	mux.HandleFunc("GET "+pull, func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(f.pull)
	})
	mux.HandleFunc("GET "+pull+"/reviews", func(w http.ResponseWriter, r *http.Request) { f.paginate(w, r, &f.reviews) })
	mux.HandleFunc("PUT "+pull+"/reviews/{id}/dismissals", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Message string }
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, rv := range f.reviews {
			if fmt.Sprint(rv["id"]) != r.PathValue("id") {
				continue
			}
			if in.Message == "" || (rv["state"] != "APPROVED" && rv["state"] != "CHANGES_REQUESTED") {
				writeJSON(w, 422, map[string]any{"message": "Can not dismiss a " + strings.ToLower(fmt.Sprint(rv["state"])) + " pull request review"})
				return
			}
			rv["state"] = "DISMISSED"
			writeJSON(w, 200, rv)
			return
		}
		notFound(w)
	})
	mux.HandleFunc("GET "+pull+"/files", func(w http.ResponseWriter, r *http.Request) { f.paginate(w, r, &f.files) })
	mux.HandleFunc("PUT "+pull+"/merge", func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		if f.merge != nil {
			f.merge(w, body)
			return
		}
		writeJSON(w, 200, map[string]any{"sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e", "merged": true, "message": "Pull Request successfully merged"})
	})
	mux.HandleFunc("GET "+repo+"/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("n") != strconv.Itoa(pullNum) {
			notFound(w)
			return
		}
		f.paginate(w, r, &f.comments)
	})
	mux.HandleFunc("POST "+repo+"/issues/{n}/comments", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("n") != strconv.Itoa(pullNum) {
			notFound(w)
			return
		}
		var in struct{ Body string }
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		c := f.newComment("atoll-bot", in.Body)
		f.mu.Unlock()
		writeJSON(w, 201, c)
	})
	mux.HandleFunc("PATCH "+repo+"/issues/comments/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Body string }
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, c := range f.comments {
			if fmt.Sprint(c["id"]) == r.PathValue("id") {
				c["body"] = in.Body
				writeJSON(w, 200, c)
				return
			}
		}
		notFound(w)
	})
	mux.HandleFunc("POST "+repo+"/statuses/{sha}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		in["id"] = 1
		in["url"] = "https://api.github.com/repos/octocat/Hello-World/statuses/" + r.PathValue("sha")
		writeJSON(w, 201, in)
	})
	// Check runs: created, patched in place, listed per commit.
	mux.HandleFunc("POST "+repo+"/check-runs", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		if in["name"] == nil || in["head_sha"] == nil {
			writeJSON(w, 422, map[string]any{"message": "Invalid request.", "status": "422"})
			return
		}
		f.mu.Lock()
		f.nextID++
		in["id"] = f.nextID
		in["app"] = map[string]any{"id": 99, "slug": "atoll-app"}
		if in["status"] == nil {
			in["status"] = "queued"
		}
		f.checkRuns = append(f.checkRuns, in)
		f.mu.Unlock()
		writeJSON(w, 201, in)
	})
	mux.HandleFunc("PATCH "+repo+"/check-runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		var in map[string]any
		json.NewDecoder(r.Body).Decode(&in)
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, cr := range f.checkRuns {
			if fmt.Sprint(cr["id"]) == r.PathValue("id") {
				for k, v := range in {
					cr[k] = v
				}
				if in["conclusion"] != nil {
					cr["status"] = "completed" // as GitHub does
				}
				writeJSON(w, 200, cr)
				return
			}
		}
		notFound(w)
	})
	mux.HandleFunc("GET "+repo+"/commits/{sha}/check-runs", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		f.mu.Lock()
		defer f.mu.Unlock()
		runs := []map[string]any{}
		for i := len(f.checkRuns) - 1; i >= 0; i-- { // newest first
			cr := f.checkRuns[i]
			if cr["head_sha"] != r.PathValue("sha") || (q.Get("check_name") != "" && cr["name"] != q.Get("check_name")) ||
				(q.Get("app_id") != "" && q.Get("app_id") != "99") {
				continue
			}
			runs = append(runs, cr)
		}
		writeJSON(w, 200, map[string]any{"total_count": len(runs), "check_runs": runs})
	})
	f.extraRoutes(mux, repo)
	f.protectionRoutes(mux, repo)
	mux.HandleFunc("POST /graphql", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Query     string
			Variables struct{ ID string }
		}
		body, _ := io.ReadAll(r.Body)
		json.Unmarshal(body, &in)
		if strings.Contains(in.Query, "reviewDecision") {
			f.reviewDecisionQuery(w)
			return
		}
		if strings.Contains(in.Query, "teams(") {
			f.teamsQuery(w, body)
			return
		}
		if f.graphql != nil {
			f.graphql(w, in.Variables.ID)
			return
		}
		writeJSON(w, 200, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{"minimizedComment": map[string]any{"isMinimized": true}}}})
	})
	mux.HandleFunc("GET /user", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"login": "atoll-bot", "id": 7, "type": "User"})
	})
	// GitHub App endpoints.
	mux.HandleFunc("GET "+repo+"/installation", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": f.installationID, "app_id": 99})
	})
	mux.HandleFunc("POST /app/installations/{id}/access_tokens", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 201, map[string]any{"token": f.instToken + "-" + r.PathValue("id"), "expires_at": "2099-01-01T00:00:00Z"})
	})
	mux.HandleFunc("GET /app", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, map[string]any{"id": 99, "slug": "atoll-app", "name": "Atoll"})
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { notFound(w) })

	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mu.Lock()
		f.calls = append(f.calls, call{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Auth: r.Header.Get("Authorization"), Body: body})
		intercept := f.intercept
		f.mu.Unlock()
		if intercept != nil && intercept(w, r) {
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// provider returns a token-authenticated Provider pointed at the fake.
func (f *fakeGitHub) provider(t *testing.T) *ghp.Provider {
	t.Helper()
	p, err := ghp.New(ghp.Config{APIURL: f.srv.URL + "/", User: "atoll-bot", Token: "ghp_secrettoken", WebhookSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// newComment appends a comment as GitHub would store it; f.mu must be held.
func (f *fakeGitHub) newComment(login, body string) map[string]any {
	f.nextID++
	c := map[string]any{
		"id":       f.nextID,
		"node_id":  fmt.Sprintf("IC_node%d", f.nextID),
		"body":     body,
		"user":     map[string]any{"login": login, "id": 1, "type": "User"},
		"html_url": fmt.Sprintf("https://github.com/octocat/Hello-World/pull/1347#issuecomment-%d", f.nextID),
	}
	f.comments = append(f.comments, c)
	return c
}

// paginate serves items GitHub-style: page and per_page query parameters
// (default 30), and a Link header with rel="next" and rel="last".
func (f *fakeGitHub) paginate(w http.ResponseWriter, r *http.Request, items *[]map[string]any) {
	f.mu.Lock()
	all := append([]map[string]any{}, *items...)
	f.mu.Unlock()
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if page < 1 {
		page = 1
	}
	if per < 1 {
		per = 30
	}
	last := max(1, (len(all)+per-1)/per)
	lo, hi := min((page-1)*per, len(all)), min(page*per, len(all))
	link := func(p int, rel string) string {
		return fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="%s"`, f.srv.URL, r.URL.Path, per, p, rel)
	}
	if page < last {
		w.Header().Set("Link", link(page+1, "next")+", "+link(last, "last"))
	}
	writeJSON(w, 200, all[lo:hi])
}

// callsTo returns the recorded calls with method and path.
func (f *fakeGitHub) callsTo(method, path string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.Method == method && c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

func (f *fakeGitHub) allCalls() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call{}, f.calls...)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

func notFound(w http.ResponseWriter) {
	writeJSON(w, 404, map[string]any{"message": "Not Found", "documentation_url": "https://docs.github.com/rest", "status": "404"})
}

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
