// Package githubtest is a fake GitHub REST and GraphQL API for tests, in
// the manner of net/http/httptest: an HTTP server speaking GitHub's wire
// format (JSON bodies, Link-header pagination, GitHub's error bodies, 401
// "Bad credentials" for an unknown token) for the pull request, review,
// comment, status, check run, reaction, branch, protection, team and App
// resources the github provider uses, with state a test sets up and reads
// back.
//
// Point the provider's API URL at URL+"/". A node of an active/standby pair
// may call it through URL+"/via/<node>/" instead, so that the test can tell
// which node made each call (Writes) and hold a node's write (HoldWrite).
package githubtest

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Call is one request the server received.
type Call struct {
	Node   string // the node of /via/<node>/, "" without
	Method string
	Path   string // without /via/<node>
	Query  string
	Auth   string
	Body   []byte
	At     time.Time
}

// Server is a fake GitHub. It is safe for concurrent use.
type Server struct {
	// URL is the API's base URL, http://127.0.0.1:PORT.
	URL string

	t   testing.TB
	srv *httptest.Server
	mux *http.ServeMux

	mu              sync.Mutex
	tokens          map[string]bool // accepted tokens
	app             appState
	bot             string // the login of comments the API creates
	pulls           map[string]*Pull
	comments        []*Comment
	statuses        []Status
	checkRuns       []map[string]any
	merges          []Merge
	reactions       []Reaction
	branches        map[string]bool // repo + "\x00" + branch: exists
	protected       map[string]bool // repo + "\x00" + branch: cannot be deleted
	deleted         []string        // repo + ":" + branch, in order
	protect         map[string]Protection
	teams           map[string][]Team // by organization, lower case
	calls           []Call
	nextID          int64
	intercept       func(w http.ResponseWriter, r *http.Request) bool
	refuseReactions bool
	anyIssue        bool
	hold            *hold
}

type appState struct {
	id             int64
	slug           string
	installationID int64
	token          string // "": ghs_installationtoken-<installation id>
}

type hold struct {
	node          string
	held, release chan struct{}
}

// NewServer starts a server that is closed when the test ends. It accepts
// no token until AcceptToken, but those its App mints.
func NewServer(t testing.TB) *Server {
	s := &Server{t: t, tokens: map[string]bool{}, bot: "atoll-bot", pulls: map[string]*Pull{},
		branches: map[string]bool{}, protected: map[string]bool{}, protect: map[string]Protection{},
		teams: map[string][]Team{}, nextID: 1000,
		app: appState{id: 99, slug: "atoll-app", installationID: 42}}
	s.mux = http.NewServeMux()
	s.routes()
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client is an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// AcceptToken makes the server accept token, sent as "token X" or
// "Bearer X".
func (s *Server) AcceptToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = true
}

// SetApp sets the GitHub App the server knows (id 99, slug atoll-app by
// default) and its installation on every repository (42).
func (s *Server) SetApp(id int64, slug string, installationID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app.id, s.app.slug, s.app.installationID = id, slug, installationID
}

// SetInstallationToken makes the App's installation tokens token, whatever
// the installation, instead of ghs_installationtoken-<installation id>.
func (s *Server) SetInstallationToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.app.token = token
}

// SetBotLogin sets the login of the comments created through the API
// (atoll-bot by default).
func (s *Server) SetBotLogin(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bot = login
}

// Intercept makes fn see every request (after it is recorded and
// authenticated) before the routes do; it reports whether it answered.
// nil removes it.
func (s *Server) Intercept(fn func(w http.ResponseWriter, r *http.Request) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intercept = fn
}

// Refuse answers every request with method and path with status and body
// (JSON), in place of the route, until Intercept replaces it.
func (s *Server) Refuse(method, path string, status int, body string) {
	s.Intercept(func(w http.ResponseWriter, r *http.Request) bool {
		if r.Method != method || r.URL.Path != path {
			return false
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(body))
		return true
	})
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	node := ""
	if rest, ok := strings.CutPrefix(r.URL.Path, "/via/"); ok {
		node, rest, _ = strings.Cut(rest, "/")
		r.URL.Path, r.URL.RawPath = "/"+rest, ""
	}
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	s.mu.Lock()
	s.calls = append(s.calls, Call{Node: node, Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery,
		Auth: r.Header.Get("Authorization"), Body: body, At: time.Now()})
	ok := s.authorizedLocked(r)
	intercept := s.intercept
	var h *hold
	if ok && r.Method != http.MethodGet && s.hold != nil && s.hold.node == node {
		h, s.hold = s.hold, nil
	}
	s.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"message": "Bad credentials", "documentation_url": "https://docs.github.com/rest", "status": "401"})
		return
	}
	if h != nil {
		close(h.held)
		select {
		case <-h.release:
		case <-time.After(time.Minute):
		}
	}
	if intercept != nil && intercept(w, r) {
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorizedLocked reports whether r carries an accepted token or, on the
// endpoints GitHub takes it on (/app..., the installation lookup), an
// App's JWT (Bearer header.payload.signature).
func (s *Server) authorizedLocked(r *http.Request) bool {
	auth := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(auth, "Bearer ")
	if !ok {
		tok, ok = strings.CutPrefix(auth, "token ")
	}
	if !ok {
		return false
	}
	if s.tokens[tok] {
		return true
	}
	appPath := strings.HasPrefix(r.URL.Path, "/app") || strings.HasSuffix(r.URL.Path, "/installation")
	return appPath && strings.HasPrefix(auth, "Bearer ") && strings.Count(tok, ".") == 2
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// CallsTo returns the requests received with method and path.
func (s *Server) CallsTo(method, path string) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Method == method && c.Path == path {
			out = append(out, c)
		}
	}
	return out
}

// Writes returns the calls that change something (every method but GET)
// that node made at or after since.
func (s *Server) Writes(node string, since time.Time) []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Call
	for _, c := range s.calls {
		if c.Method != http.MethodGet && c.Node == node && !c.At.Before(since) {
			out = append(out, c)
		}
	}
	return out
}

// HoldWrite holds the answer to node's next write. It returns a channel
// closed once that write arrived and a function that lets the answer go
// (a minute at most).
func (s *Server) HoldWrite(node string) (held <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := &hold{node: node, held: make(chan struct{}), release: make(chan struct{})}
	s.hold = h
	var once sync.Once
	return h.held, func() { once.Do(func() { close(h.release) }) }
}

// newIDLocked returns the next id of a comment, check run or reaction.
func (s *Server) newIDLocked() int64 {
	s.nextID++
	return s.nextID
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

const docs = "https://docs.github.com/rest"

func notFound(w http.ResponseWriter) {
	writeJSON(w, http.StatusNotFound, map[string]any{"message": "Not Found", "documentation_url": docs, "status": "404"})
}

func unprocessable(w http.ResponseWriter, message, doc string) {
	writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": message, "documentation_url": doc, "status": "422"})
}

// paginate serves items GitHub-style: page and per_page query parameters
// (default 30), and a Link header with rel="next" and rel="last".
func (s *Server) paginate(w http.ResponseWriter, r *http.Request, all []map[string]any) {
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
		return fmt.Sprintf(`<%s%s?per_page=%d&page=%d>; rel="%s"`, s.URL, r.URL.Path, per, p, rel)
	}
	if page < last {
		w.Header().Set("Link", link(page+1, "next")+", "+link(last, "last"))
	}
	out := all[lo:hi]
	if out == nil {
		out = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, out)
}

// copyMap is a shallow copy of m.
func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

//go:embed testdata/api.pull_request.json
var pullFixture []byte

// PullFixture is GitHub's sample GET /repos/{owner}/{repo}/pulls/{n}
// response (octocat/Hello-World#1347), which the server's pull requests
// are rendered from.
func PullFixture() []byte { return slices.Clone(pullFixture) }
