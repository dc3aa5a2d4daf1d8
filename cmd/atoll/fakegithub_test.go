package main_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll/vcs/github/githubtest"
)

// fakeRepo is the repository of the e2e tests' pull requests.
const fakeRepo = "acme/infra"

// fakeGitHub is the shared fake GitHub (githubtest) as the e2e tests use
// it: every pull request is in acme/infra; the token (and the App's
// installation token, which git takes too) is gh-test-token; the App's
// slug is atoll-bot. A node of an HA pair calls it through its own prefix,
// /via/<node id>/ (see startNode).
type fakeGitHub struct {
	*githubtest.Server
	t testing.TB
}

// fakePull is a pull request of acme/infra as the e2e tests set it up.
type fakePull struct {
	HeadSHA, HeadRef, BaseSHA, BaseRef string
	Files                              []string
	Approved                           bool // reviewed: bob's approval, review 80
	Dismissals                         int  // approvals dismissed (read back only)
	State                              string
	ForkOwner                          string // head repository owner when it is a fork
	Labels                             []string
}

// fakeStatus is a commit status set on the fake.
type fakeStatus = githubtest.Status

type fakeWrite = githubtest.Call

type fakeMerge struct {
	Pull   int
	Method string
}

func newFakeGitHub(t testing.TB) *fakeGitHub {
	s := githubtest.NewServer(t)
	s.AcceptToken("gh-test-token")
	s.SetApp(99, "atoll-bot", 42)
	s.SetInstallationToken("gh-test-token")
	s.AnyIssue(true) // comment webhooks name pull requests never set up
	return &fakeGitHub{Server: s, t: t}
}

func (f *fakeGitHub) setPull(n int, p fakePull) {
	pull := githubtest.Pull{Repo: fakeRepo, Number: n, State: p.State, HeadSHA: p.HeadSHA, HeadRef: p.HeadRef,
		BaseSHA: p.BaseSHA, BaseRef: p.BaseRef, Labels: append([]string{}, p.Labels...), Files: githubtest.ModifiedFiles(p.Files...),
		Fields: map[string]any{"mergeable": true, "mergeable_state": "clean"}}
	if p.ForkOwner != "" {
		pull.HeadRepo = p.ForkOwner + "/infra"
	}
	if p.Approved {
		pull.Reviews = []map[string]any{{"id": 80, "user": map[string]any{"login": "bob"}, "state": "APPROVED"}}
	}
	f.SetPull(pull)
}

// setLabels sets the labels of pull request n.
func (f *fakeGitHub) setLabels(n int, labels []string) {
	f.UpdatePull(fakeRepo, n, func(p *githubtest.Pull) { p.Labels = append([]string{}, labels...) })
}

// pullState is a copy of pull request n as the fake holds it.
func (f *fakeGitHub) pullState(n int) (fakePull, bool) {
	p, ok := f.GetPull(fakeRepo, n)
	if !ok {
		return fakePull{}, false
	}
	out := fakePull{HeadSHA: p.HeadSHA, HeadRef: p.HeadRef, BaseSHA: p.BaseSHA, BaseRef: p.BaseRef, State: p.State, Labels: p.Labels}
	for _, file := range p.Files {
		out.Files = append(out.Files, fmt.Sprint(file["filename"]))
	}
	if owner, _, ok := strings.Cut(p.HeadRepo, "/"); ok {
		out.ForkOwner = owner
	}
	for _, rv := range p.Reviews {
		switch rv["state"] {
		case "APPROVED":
			out.Approved = true
		case "DISMISSED":
			out.Dismissals++
		}
	}
	return out, true
}

// holdFirstWrite makes the fake hold its answer to node's next write;
// it returns a channel closed once that write arrived and a function that
// lets the answer go.
func (f *fakeGitHub) holdFirstWrite(node string) (held <-chan struct{}, release func()) {
	return f.HoldWrite(node)
}

// writesBy are the writes node made at or after since.
func (f *fakeGitHub) writesBy(node string, since time.Time) []fakeWrite { return f.Writes(node, since) }

func (f *fakeGitHub) mergesOf(n int) []fakeMerge {
	var out []fakeMerge
	for _, m := range f.Merges(fakeRepo, n) {
		out = append(out, fakeMerge{Pull: m.Pull, Method: m.Method})
	}
	return out
}

// pullComments returns the bodies of Atoll's comments on pull n.
func (f *fakeGitHub) pullComments(n int) []string {
	var out []string
	for _, c := range f.Comments(fakeRepo, n) {
		if c.Author == "atoll-bot" {
			out = append(out, c.Body)
		}
	}
	return out
}

// status returns the latest state of context on sha.
func (f *fakeGitHub) status(sha, context string) string { return f.latestStatus(sha, context).State }

// statusHistory returns every state context was set to on sha, in order.
func (f *fakeGitHub) statusHistory(sha, context string) []fakeStatus {
	var out []fakeStatus
	for _, s := range f.Statuses(fakeRepo, sha) {
		if s.Context == context {
			out = append(out, s)
		}
	}
	return out
}

// latestStatus returns the last status of context on sha.
func (f *fakeGitHub) latestStatus(sha, context string) fakeStatus {
	h := f.statusHistory(sha, context)
	if len(h) == 0 {
		return fakeStatus{}
	}
	return h[len(h)-1]
}

// callCount counts the recorded calls "METHOD /path".
func (f *fakeGitHub) callCount(call string) int {
	n := 0
	for _, c := range f.Calls() {
		if c.Method+" "+c.Path == call {
			n++
		}
	}
	return n
}

// graphqlCalls counts the GraphQL calls whose body contains sub.
func (f *fakeGitHub) graphqlCalls(sub string) int {
	n := 0
	for _, c := range f.CallsTo(http.MethodPost, "/graphql") {
		if strings.Contains(string(c.Body), sub) {
			n++
		}
	}
	return n
}

func (f *fakeGitHub) minimizeCalls() int { return f.graphqlCalls("minimizeComment") }

func fixture(name string) string { return "../../vcs/github/testdata/github/" + name }

// ghExtras is the fake with what only some tests set up: the command
// comment the webhooks name (so that reactions to it land), branches,
// and the organization's teams.
type ghExtras struct {
	*fakeGitHub

	mu    sync.Mutex
	teams []githubtest.Team
}

// webhookCommentID is the id of the comment of the issue_comment webhook
// fixture.
const webhookCommentID = 396926483

func newGHExtras(t testing.TB, f *fakeGitHub) *ghExtras {
	f.AddComment(githubtest.Comment{ID: webhookCommentID, Repo: fakeRepo, Author: "runatlantis", Body: "atlantis plan"})
	return &ghExtras{fakeGitHub: f}
}

// setTeam creates or replaces a team of acme.
func (x *ghExtras) setTeam(slug, parent string, members ...string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	team := githubtest.Team{Slug: slug, Parent: parent, Members: members}
	for i, t := range x.teams {
		if t.Slug == slug {
			x.teams[i] = team
			x.SetTeams("acme", x.teams...)
			return
		}
	}
	x.teams = append(x.teams, team)
	x.SetTeams("acme", x.teams...)
}

func (x *ghExtras) reactionsOn(commentID string) []string {
	var out []string
	for _, re := range x.AllReactions() {
		if fmt.Sprint(re.CommentID) == commentID {
			out = append(out, re.Content)
		}
	}
	return out
}

func (x *ghExtras) deletedBranches() []string { return x.DeletedBranches(fakeRepo) }

// checkRun returns a copy of the latest check run named name on sha and
// how many runs of that name were created there.
func (f *fakeGitHub) checkRun(sha, name string) (run map[string]any, created int) {
	for _, cr := range f.CheckRuns(sha) {
		if cr["name"] == name {
			run, created = cr, created+1
		}
	}
	return run, created
}

// checkOutput returns a check run's output title and summary.
func checkOutput(run map[string]any) (title, summary string) {
	out, _ := run["output"].(map[string]any)
	title, _ = out["title"].(string)
	summary, _ = out["summary"].(string)
	return title, summary
}
