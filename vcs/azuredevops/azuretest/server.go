// Package azuretest is a fake Azure DevOps REST API for tests, in the
// manner of net/http/httptest: an HTTP server speaking Azure DevOps' wire
// format (resource-location discovery by OPTIONS, JSON collections, Azure's
// error bodies and 401 pages) for the pull request, iteration, thread,
// comment and status resources the azuredevops provider uses, with state a
// test sets up and reads back.
//
// Organizations (collections) live directly under the server's URL, or
// under a virtual directory (WithVirtualDirectory("/tfs")) as on Azure
// DevOps Server: Server.URL is what Config.Hostname takes.
//
// The SDK caches the resource locations of an organization URL for the
// life of the process, so a test that counts discovery requests should use
// an organization name no other test in the binary uses.
package azuretest

import (
	"cmp"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a fake Azure DevOps host. It is safe for concurrent use.
type Server struct {
	// URL is the base URL organizations live under, with the virtual
	// directory if any: http://127.0.0.1:PORT[/tfs].
	URL string

	t          testing.TB
	srv        *httptest.Server
	vdir       string // "" or "/tfs"
	maxVersion string

	mu      sync.Mutex
	creds   map[string]string // accepted Authorization value → the identity's uniqueName
	repos   map[string]*repoState
	gitDirs map[string]string // ServeGit: repoKey → directory
	fetches map[string]int
	calls   []Call
	nextID  int
	started time.Time

	policyFailure int // FailPolicyEvaluations
}

// Call is one request the server received.
type Call struct {
	Method string
	Path   string // as sent, with the virtual directory
	Query  string
	Accept string
	Auth   string
	Body   []byte
}

// Option configures a Server.
type Option func(*Server)

// WithVirtualDirectory serves organizations under dir ("/tfs"), as Azure
// DevOps Server does.
func WithVirtualDirectory(dir string) Option {
	return func(s *Server) { s.vdir = "/" + strings.Trim(dir, "/") }
}

// WithAPIVersion sets the highest API version the resource locations
// advertise: "7.2" (Azure DevOps Services, the default) or "7.0" (Azure
// DevOps Server 2022), which the SDK negotiates down to.
func WithAPIVersion(v string) Option { return func(s *Server) { s.maxVersion = v } }

// NewServer starts a server that is closed when the test ends.
func NewServer(t testing.TB, opts ...Option) *Server {
	s := &Server{t: t, maxVersion: "7.2", creds: map[string]string{}, repos: map[string]*repoState{}, nextID: 1, started: time.Now().UTC()}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + s.vdir
	t.Cleanup(s.Close)
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Client is an HTTP client for the server.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// AcceptPAT makes the server accept a personal access token, sent as
// Basic base64(":"+token) (any user name), as the identity uniqueName.
func (s *Server) AcceptPAT(token, uniqueName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creds["Basic "+base64.StdEncoding.EncodeToString([]byte(":"+token))] = uniqueName
	s.creds["pat:"+token] = uniqueName
}

// AcceptBearer makes the server accept an Entra ID access token (Bearer)
// as the identity uniqueName.
func (s *Server) AcceptBearer(token, uniqueName string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.creds["Bearer "+token] = uniqueName
}

// Revoke stops accepting a token given to AcceptPAT or AcceptBearer, as
// when it expires or is revoked.
func (s *Server) Revoke(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.creds, "Basic "+base64.StdEncoding.EncodeToString([]byte(":"+token)))
	delete(s.creds, "pat:"+token)
	delete(s.creds, "Bearer "+token)
}

// identity is who an Authorization value authenticates, "" for nobody.
func (s *Server) identity(auth string) string {
	if id, ok := s.creds[auth]; ok {
		return id
	}
	// A PAT may come with any user name in Basic auth, and so may an
	// Entra ID token, which Azure Repos takes as a password too.
	if rest, ok := strings.CutPrefix(auth, "Basic "); ok {
		if raw, err := base64.StdEncoding.DecodeString(rest); err == nil {
			if _, tok, ok := strings.Cut(string(raw), ":"); ok {
				return cmp.Or(s.creds["pat:"+tok], s.creds["Bearer "+tok])
			}
		}
	}
	return ""
}

// Calls returns the requests received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Pull is a pull request as a test sets it up and reads it back.
type Pull struct {
	Number      int
	Title       string
	Author      string // the creator's uniqueName
	SourceRef   string // "feature" or "refs/heads/feature"
	TargetRef   string
	HeadSHA     string // lastMergeSourceCommit
	BaseSHA     string // lastMergeTargetCommit
	Status      string // active (default), completed, abandoned
	MergeStatus string // succeeded (default), conflicts, queued, ...
	Draft       bool
	Fork        bool // the source branch is in a fork (forkSource is set)
	Reviewers   []Reviewer
	// Labels are the pull request's tags (labels) by name, all active.
	Labels []string
	// Changes are the pull request's changes against the common commit,
	// served for every iteration.
	Changes []Change
	// Iterations default to one, from HeadSHA and BaseSHA; SetHead adds one.
	Iterations []Iteration
	// MergeFailure, when set, is the mergeFailureMessage completing answers.
	MergeFailure string
	// CompletionPolls makes completing asynchronous, as it is on Azure
	// DevOps: when > 0, the PATCH that completes answers the pull request
	// still active, with mergeStatus queued and a completionQueueTime, and
	// it stays so for that many GETs of it. Then it is completed or, with
	// MergeFailure set, stays active with mergeStatus failure and the
	// failure message. Zero completes at once.
	CompletionPolls int

	// Set when the pull request is completed through the API.
	MergeStrategy      string
	DeleteSourceBranch bool
	ClosedBy           string
}

// Reviewer is a reviewer and their vote (10, 5, 0, -5, -10).
type Reviewer struct {
	UniqueName  string
	Vote        int
	IsContainer bool // a group or team
}

// Change is a changed path, with its leading slash or without.
type Change struct {
	Path         string
	ChangeType   string // add, edit (default), delete, rename, "edit, rename"
	OriginalPath string // for renames: originalPath
	// SourceServerItem is the item's path before the change, when the
	// server reports it that way.
	SourceServerItem string
	Folder           bool
}

// Iteration is one push to the pull request.
type Iteration struct {
	ID        int
	SourceSHA string
	TargetSHA string
}

// Thread is a comment thread.
type Thread struct {
	ID       int
	Status   string // active, fixed, closed, ...
	Deleted  bool
	Comments []Comment
}

// Comment is one comment of a thread.
type Comment struct {
	ID          int
	ParentID    int
	Author      string // uniqueName
	Content     string
	CommentType string // text (default), system
	Deleted     bool
}

// Status is a pull request or commit status.
type Status struct {
	ID          int
	State       string
	Genre       string
	Name        string
	Description string
	TargetURL   string
	IterationID int // pull request statuses only; 0 for none
	Author      string
}

type repoState struct {
	org, project, name string
	id, projectID      string
	remoteURL          string
	pulls              map[int]*pullState
	statuses           map[string][]Status // by lower-case sha
	policies           []*policyState      // branch policies (policy.go)
}

type pullState struct {
	Pull
	// queued is when a completion was queued (CompletionPolls), zero
	// when none is; the completion's options wait in Pull.
	queued   time.Time
	created  time.Time
	closed   time.Time
	threads  []*Thread
	statuses []Status
}

func repoKey(org, project, name string) string {
	return strings.ToLower(org + "/" + project + "/" + name)
}

// AddRepo adds a repository; AddPull adds its repository as needed.
func (s *Server) AddRepo(org, project, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(org, project, name)
}

func (s *Server) repo(org, project, name string) *repoState {
	k := repoKey(org, project, name)
	r := s.repos[k]
	if r == nil {
		r = &repoState{org: org, project: project, name: name, id: fakeUUID("repo:" + k), projectID: s.ProjectID(org, project),
			pulls: map[int]*pullState{}, statuses: map[string][]Status{}}
		s.repos[k] = r
	}
	return r
}

// SetRemoteURL sets the remoteUrl the repository reports (a local git
// server or file URL for end-to-end tests). It defaults to the web URL.
func (s *Server) SetRemoteURL(org, project, name, remoteURL string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.repo(org, project, name).remoteURL = remoteURL
}

// AddPull adds (or replaces) a pull request.
func (s *Server) AddPull(org, project, repo string, pr Pull) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if pr.Status == "" {
		pr.Status = "active"
	}
	if pr.MergeStatus == "" {
		pr.MergeStatus = "succeeded"
	}
	for _, ref := range []*string{&pr.SourceRef, &pr.TargetRef} {
		if !strings.HasPrefix(*ref, "refs/") {
			*ref = "refs/heads/" + *ref
		}
	}
	if len(pr.Iterations) == 0 {
		pr.Iterations = []Iteration{{ID: 1, SourceSHA: pr.HeadSHA, TargetSHA: pr.BaseSHA}}
	}
	pr.Reviewers = slices.Clone(pr.Reviewers)
	pr.Labels = slices.Clone(pr.Labels)
	pr.Changes = slices.Clone(pr.Changes)
	pr.Iterations = slices.Clone(pr.Iterations)
	s.repo(org, project, repo).pulls[pr.Number] = &pullState{Pull: pr, created: s.started}
}

func (s *Server) pull(org, project, repo string, number int) *pullState {
	r := s.repos[repoKey(org, project, repo)]
	if r == nil || r.pulls[number] == nil {
		s.t.Fatalf("azuretest: no pull request %s/%s/%s#%d", org, project, repo, number)
	}
	return r.pulls[number]
}

// SetVote sets (or adds) a reviewer's vote.
func (s *Server) SetVote(org, project, repo string, number int, uniqueName string, vote int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(org, project, repo, number)
	for i, r := range p.Reviewers {
		if strings.EqualFold(r.UniqueName, uniqueName) {
			p.Reviewers[i].Vote = vote
			return
		}
	}
	p.Reviewers = append(p.Reviewers, Reviewer{UniqueName: uniqueName, Vote: vote})
}

// SetCompletionPolls sets a pull request's CompletionPolls: how many GETs
// a completion stays queued for.
func (s *Server) SetCompletionPolls(org, project, repo string, number, polls int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pull(org, project, repo, number).CompletionPolls = polls
}

// SetHead records a push: the pull request's head becomes sha, in a new
// iteration.
func (s *Server) SetHead(org, project, repo string, number int, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(org, project, repo, number)
	p.HeadSHA = sha
	p.Iterations = append(p.Iterations, Iteration{ID: len(p.Iterations) + 1, SourceSHA: sha, TargetSHA: p.BaseSHA})
}

// AddThread adds a thread (someone else's comments, a system thread) and
// returns its id. Comment ids default to 1, 2, ...
func (s *Server) AddThread(org, project, repo string, number int, th Thread) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(org, project, repo, number)
	th.ID = s.nextID
	s.nextID++
	if th.Status == "" {
		th.Status = "active"
	}
	th.Comments = slices.Clone(th.Comments)
	for i := range th.Comments {
		if th.Comments[i].ID == 0 {
			th.Comments[i].ID = i + 1
		}
		if th.Comments[i].CommentType == "" {
			th.Comments[i].CommentType = "text"
		}
	}
	p.threads = append(p.threads, &th)
	return th.ID
}

// Pull returns a pull request's current state.
func (s *Server) Pull(org, project, repo string, number int) Pull {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pull(org, project, repo, number).Pull
	p.Reviewers, p.Changes, p.Iterations = slices.Clone(p.Reviewers), slices.Clone(p.Changes), slices.Clone(p.Iterations)
	p.Labels = slices.Clone(p.Labels)
	return p
}

// Threads returns a pull request's threads, oldest first.
func (s *Server) Threads(org, project, repo string, number int) []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Thread
	for _, th := range s.pull(org, project, repo, number).threads {
		c := *th
		c.Comments = slices.Clone(th.Comments)
		out = append(out, c)
	}
	return out
}

// PullStatuses returns the statuses posted on a pull request, oldest first.
func (s *Server) PullStatuses(org, project, repo string, number int) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.pull(org, project, repo, number).statuses)
}

// CommitStatuses returns the statuses posted on a commit, oldest first.
func (s *Server) CommitStatuses(org, project, repo, sha string) []Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repos[repoKey(org, project, repo)]
	if r == nil {
		return nil
	}
	return slices.Clone(r.statuses[strings.ToLower(sha)])
}
