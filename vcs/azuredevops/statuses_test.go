package azuredevops_test

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
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
			if g.State != want || g.Genre != "atoll" || g.Name != st.Context || g.Description != st.Description || g.TargetURL != st.TargetURL || g.IterationID != 1 {
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
	if len(got) != 1 || got[0].State != "succeeded" || got[0].Genre != "atoll" || got[0].Name != "atlantis/plan" {
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
