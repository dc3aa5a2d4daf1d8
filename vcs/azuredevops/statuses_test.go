package azuredevops_test

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

func TestSetStatusStates(t *testing.T) {
	cases := map[string]string{
		vcs.StatusPending: "pending",
		vcs.StatusSuccess: "succeeded",
		vcs.StatusFailure: "failed",
		vcs.StatusError:   "error",
	}
	for state, want := range cases {
		t.Run(state, func(t *testing.T) {
			srv := newFake(t)
			st := vcs.Status{State: state, Context: "atlantis/plan: live/default", Description: "Plan succeeded", TargetURL: "https://atoll.example.com/jobs/1"}
			if err := newProvider(t, srv).SetStatus(context.Background(), repo, headSHA, st); err != nil {
				t.Fatal(err)
			}
			got := srv.PullStatuses(org, project, repoName, 7)
			if len(got) != 1 {
				t.Fatalf("pull statuses = %+v; want 1", got)
			}
			g := got[0]
			if g.State != want || g.Genre != "Atlantis Bot/atlantis/plan: live" || g.Name != "default" || g.Description != st.Description || g.TargetURL != st.TargetURL || g.IterationID != 1 {
				t.Errorf("status = %+v", g)
			}
			if cs := srv.CommitStatuses(org, project, repoName, headSHA); len(cs) != 0 {
				t.Errorf("commit statuses = %+v; want none", cs)
			}
		})
	}
}

func TestSetStatusBadState(t *testing.T) {
	srv := newFake(t)
	err := newProvider(t, srv).SetStatus(context.Background(), repo, headSHA, vcs.Status{State: "weird", Context: "c"})
	if atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("err = %v; want EINVALID", err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls made", n)
	}
}

// A status goes to every active pull request whose head is the commit, on
// the iteration that pushed it; a commit no active pull request has as its
// head gets a commit status.
func TestSetStatusTargets(t *testing.T) {
	const newHead = "3333333333333333333333333333333333333333"
	srv := newFake(t)
	srv.SetHead(org, project, repoName, 7, newHead)
	second := basePull()
	second.Number, second.HeadSHA = 8, newHead // the same branch into another target
	srv.AddPull(org, project, repoName, second)
	done := basePull()
	done.Number, done.HeadSHA, done.Status = 9, newHead, "completed"
	srv.AddPull(org, project, repoName, done)
	p := newProvider(t, srv)
	st := vcs.Status{State: vcs.StatusSuccess, Context: "atlantis/plan"}

	if err := p.SetStatus(context.Background(), repo, newHead, st); err != nil {
		t.Fatal(err)
	}
	if got := srv.PullStatuses(org, project, repoName, 7); len(got) != 1 || got[0].IterationID != 2 {
		t.Errorf("#7 statuses = %+v; want one on iteration 2", got)
	}
	if got := srv.PullStatuses(org, project, repoName, 8); len(got) != 1 || got[0].IterationID != 1 {
		t.Errorf("#8 statuses = %+v; want one on iteration 1", got)
	}
	if got := srv.PullStatuses(org, project, repoName, 9); len(got) != 0 {
		t.Errorf("completed #9 statuses = %+v; want none", got)
	}

	// The old head is no pull request's head any more.
	if err := p.SetStatus(context.Background(), repo, headSHA, st); err != nil {
		t.Fatal(err)
	}
	if got := srv.PullStatuses(org, project, repoName, 7); len(got) != 1 {
		t.Errorf("#7 statuses = %+v; the old head's status landed on the pull request", got)
	}
	got := srv.CommitStatuses(org, project, repoName, headSHA)
	if len(got) != 1 || got[0].State != "succeeded" || got[0].Genre != "Atlantis Bot/atlantis" || got[0].Name != "plan" {
		t.Errorf("commit statuses = %+v", got)
	}
}

// More active pull requests than one page holds are all searched.
func TestSetStatusManyPulls(t *testing.T) {
	srv := newFake(t)
	for n := 100; n < 250; n++ {
		pr := basePull()
		pr.Number, pr.HeadSHA = n, strings.Repeat("4", 40)
		srv.AddPull(org, project, repoName, pr)
	}
	// #7 is the oldest: Azure lists newest first, so it is on page 2.
	if err := newProvider(t, srv).SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusPending, Context: "c"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.PullStatuses(org, project, repoName, 7); len(got) != 1 {
		t.Errorf("#7 statuses = %+v; want 1", got)
	}
}

// With the pull request given, its status is posted without listing the
// repository's active pull requests (one call per status on a busy repo).
func TestSetStatusOfAKnownPull(t *testing.T) {
	srv := newFake(t)
	for n := 100; n < 150; n++ {
		pr := basePull()
		pr.Number, pr.HeadSHA = n, strings.Repeat("4", 40)
		srv.AddPull(org, project, repoName, pr)
	}
	before := len(srv.Calls())
	if err := newProvider(t, srv).SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusSuccess, Context: "c", Pull: 7}); err != nil {
		t.Fatal(err)
	}
	for _, c := range srv.Calls()[before:] {
		if c.Method == "GET" && strings.HasSuffix(strings.ToLower(c.Path), "/pullrequests") {
			t.Errorf("listed the pull requests: %s %s?%s", c.Method, c.Path, c.Query)
		}
	}
	got := srv.PullStatuses(org, project, repoName, 7)
	if len(got) != 1 || got[0].State != "succeeded" || got[0].IterationID == 0 {
		t.Errorf("#7 statuses = %+v; want one, succeeded, on an iteration", got)
	}
}

func TestSetStatusDescriptionTruncated(t *testing.T) {
	srv := newFake(t)
	desc := strings.Repeat("ü", 1000)
	if err := newProvider(t, srv).SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusFailure, Context: "c", Description: desc}); err != nil {
		t.Fatal(err)
	}
	got := srv.PullStatuses(org, project, repoName, 7)[0].Description
	if n := utf8.RuneCountInString(got); n != 256 || !utf8.ValidString(got) || !strings.HasSuffix(got, "...") {
		t.Errorf("description: %d runes, valid %v, %q...", n, utf8.ValidString(got), got[:10])
	}
}

// Statuses are posted as Atlantis posts them: the context split at its
// last "/", the first part under the genre "Atlantis Bot", so that the
// same context gets the same genre and name from both, and a branch
// policy's "status to check" (split at the last "/" by Azure DevOps) can
// name any of them. Cases as Atlantis's own table, and Atoll's contexts.
func TestAzureStatusGenreNameSplit(t *testing.T) {
	cases := []struct{ context, genre, name string }{
		{"atlantis/plan", "Atlantis Bot/atlantis", "plan"},
		{"atlantis/apply", "Atlantis Bot/atlantis", "apply"},
		{"atlantis/foo/bar/biz/baz", "Atlantis Bot/atlantis/foo/bar/biz", "baz"},
		{"foo", "Atlantis Bot", "foo"},
		{"atlantis/plan: live/default", "Atlantis Bot/atlantis/plan: live", "default"},
		{"atlantis/policy_check", "Atlantis Bot/atlantis", "policy_check"},
		{"infra-bot/apply", "Atlantis Bot/infra-bot", "apply"},
	}
	for _, tc := range cases {
		t.Run(tc.context, func(t *testing.T) {
			srv := newFake(t)
			p := newProvider(t, srv)
			// On the pull request, and as a commit status.
			if err := p.SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusSuccess, Context: tc.context}); err != nil {
				t.Fatal(err)
			}
			if err := p.SetStatus(context.Background(), repo, baseSHA, vcs.Status{State: vcs.StatusSuccess, Context: tc.context}); err != nil {
				t.Fatal(err)
			}
			for _, got := range append(srv.PullStatuses(org, project, repoName, 7), srv.CommitStatuses(org, project, repoName, baseSHA)...) {
				if got.Genre != tc.genre || got.Name != tc.name {
					t.Errorf("genre, name = %q, %q; want %q, %q", got.Genre, got.Name, tc.genre, tc.name)
				}
			}
		})
	}
}

// A branch policy an Atlantis user set up ("Atlantis Bot/atlantis/apply")
// is satisfied by Atoll's apply status unchanged; the string Atoll's docs
// used to give ("atoll/atlantis/apply") is not.
func TestAzureStatusPolicyFromAtlantisKeepsWorking(t *testing.T) {
	srv := newFake(t)
	atlantis := srv.AddPolicy(org, project, repoName, azuretest.Policy{Type: "status", StatusToCheck: "Atlantis Bot/atlantis/apply"})
	oldDoc := srv.AddPolicy(org, project, repoName, azuretest.Policy{Type: "status", StatusToCheck: "atoll/atlantis/apply"})
	if err := newProvider(t, srv).SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusSuccess, Context: "atlantis/apply"}); err != nil {
		t.Fatal(err)
	}
	if got := srv.PolicyEvaluation(org, project, repoName, 7, atlantis); got != "approved" {
		t.Errorf("Atlantis's policy: %s; want approved", got)
	}
	if got := srv.PolicyEvaluation(org, project, repoName, 7, oldDoc); got == "approved" {
		t.Errorf("a policy on atoll/atlantis/apply was approved by Atoll's status")
	}
}

// docStatusesToCheck reads the strings docs/vcs-setup.md tells users to
// type into the status policy dialog: `...` right after "status to check"
// or "Add" in the branch policies section.
func docStatusesToCheck(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../../docs/vcs-setup.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	i := strings.Index(doc, "### 4. Branch policies")
	if i < 0 {
		t.Fatal("docs/vcs-setup.md has no Branch policies section")
	}
	section := doc[i:]
	if j := strings.Index(section[4:], "\n#"); j >= 0 {
		section = section[:j+4]
	}
	var out []string
	for _, m := range regexp.MustCompile("(?i)(?:status to check|add) `([^`]+)`").FindAllStringSubmatch(section, -1) {
		out = append(out, m[1])
	}
	return out
}

// Every "status to check" docs/vcs-setup.md gives, split at its last "/"
// as Azure DevOps splits it, is exactly the genre and name of a status
// Atoll posts: the policy is approved once Atoll's statuses succeed, and
// the apply one is among them.
func TestAzureStatusPolicyFromDocs(t *testing.T) {
	strs := docStatusesToCheck(t)
	if !slices.ContainsFunc(strs, func(s string) bool { return strings.HasSuffix(s, "/apply") }) {
		t.Fatalf("docs/vcs-setup.md gives no apply status to check (found %q)", strs)
	}
	for _, s := range strs {
		t.Run(s, func(t *testing.T) {
			srv := newFake(t)
			id := srv.AddPolicy(org, project, repoName, azuretest.Policy{Type: "status", StatusToCheck: s})
			p := newProvider(t, srv)
			for _, c := range []string{"atlantis/plan", "atlantis/apply", "atlantis/policy_check"} {
				if err := p.SetStatus(context.Background(), repo, headSHA, vcs.Status{State: vcs.StatusSuccess, Context: c}); err != nil {
					t.Fatal(err)
				}
			}
			if got := srv.PolicyEvaluation(org, project, repoName, 7, id); got != "approved" {
				genre, name := azuretest.SplitStatusToCheck(s)
				t.Errorf("policy %q (genre %q, name %q) is %s after Atoll's statuses succeeded: %+v", s, genre, name, got,
					srv.PullStatuses(org, project, repoName, 7))
			}
		})
	}
}
