package azuredevops_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs/azuredevops/azuretest"
)

func TestGetPullFields(t *testing.T) {
	srv := newFake(t)
	got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
	if err != nil {
		t.Fatal(err)
	}
	want := atoll.Pull{
		Repo: "contoso/Infra Live/terraform", Number: 7, Title: "Add VPC", Author: author,
		HeadSHA: headSHA, HeadRef: "feature/vpc", BaseSHA: baseSHA, BaseRef: "main", State: atoll.PullOpen,
		URL: srv.URL + "/contoso/Infra%20Live/_git/terraform/pullrequest/7",
	}
	gotPull := got.Pull
	if gotPull.CreatedAt.IsZero() {
		t.Error("CreatedAt is zero")
	}
	gotPull.CreatedAt, gotPull.UpdatedAt = want.CreatedAt, want.UpdatedAt
	if !reflect.DeepEqual(gotPull, want) {
		t.Errorf("GetPull =\n%+v\nwant\n%+v", gotPull, want)
	}
	if got.Approved || !got.Mergeable || got.Fork {
		t.Errorf("Approved, Mergeable, Fork = %v, %v, %v; want false, true, false", got.Approved, got.Mergeable, got.Fork)
	}
	for _, c := range srv.Calls() {
		if c.Auth != "Basic OnBhdHNlY3JldDAxMjM0NTY3ODk=" {
			t.Errorf("%s %s: Authorization = %q", c.Method, c.Path, c.Auth)
		}
	}
}

func TestGetPullApproved(t *testing.T) {
	cases := []struct {
		name      string
		reviewers []azuretest.Reviewer
		approved  bool
		mergeable bool
	}{
		{"no reviewers", nil, false, true},
		{"approved", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 10}}, true, true},
		{"approved with suggestions", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 5}}, true, true},
		{"author's own approval with suggestions", []azuretest.Reviewer{{UniqueName: author, Vote: 5}}, false, true},
		{"approved with suggestions but another rejects", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 5}, {UniqueName: "carol@contoso.com", Vote: -10}}, false, false},
		{"approved with suggestions but another waits for author", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 5}, {UniqueName: "carol@contoso.com", Vote: -5}}, false, false},
		{"author waits for themself", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 10}, {UniqueName: author, Vote: -5}}, false, false},
		{"no vote", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 0}}, false, true},
		{"waiting for author", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: -5}}, false, false},
		{"rejected", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: -10}}, false, false},
		{"author's own approval", []azuretest.Reviewer{{UniqueName: author, Vote: 10}}, false, true},
		{"author's own approval, other case", []azuretest.Reviewer{{UniqueName: strings.ToUpper(author), Vote: 10}}, false, true},
		{"approved but another rejects", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 10}, {UniqueName: "carol@contoso.com", Vote: -10}}, false, false},
		{"approved but another waits for author", []azuretest.Reviewer{{UniqueName: "bob@contoso.com", Vote: 10}, {UniqueName: "carol@contoso.com", Vote: -5}}, false, false},
		{"one approves, one has not voted", []azuretest.Reviewer{{UniqueName: "carol@contoso.com", Vote: 0}, {UniqueName: "bob@contoso.com", Vote: 10}}, true, true},
		{"a group's rolled-up vote does not count", []azuretest.Reviewer{{UniqueName: "[Infra]\\Reviewers", Vote: 10, IsContainer: true}}, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			pr := basePull()
			pr.Reviewers = tc.reviewers
			srv.AddPull(org, project, repoName, pr)
			got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
			if err != nil {
				t.Fatal(err)
			}
			if got.Approved != tc.approved || got.Mergeable != tc.mergeable {
				t.Errorf("Approved, Mergeable = %v, %v; want %v, %v", got.Approved, got.Mergeable, tc.approved, tc.mergeable)
			}
		})
	}
}

// A vote changed on the host shows on the next call: nothing is cached.
func TestGetPullVoteChanges(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	for _, step := range []struct {
		vote int
		want bool
	}{{0, false}, {10, true}, {-5, false}, {10, true}} {
		srv.SetVote(org, project, repoName, 7, "bob@contoso.com", step.vote)
		got, err := p.GetPull(context.Background(), repo, 7)
		if err != nil {
			t.Fatal(err)
		}
		if got.Approved != step.want {
			t.Errorf("vote %d: Approved = %v, want %v", step.vote, got.Approved, step.want)
		}
	}
}

func TestGetPullStateMergeableFork(t *testing.T) {
	cases := []struct {
		name      string
		edit      func(*azuretest.Pull)
		state     string
		mergeable bool
		fork      bool
	}{
		{"active", func(*azuretest.Pull) {}, atoll.PullOpen, true, false},
		{"completed", func(p *azuretest.Pull) { p.Status = "completed" }, atoll.PullMerged, true, false},
		{"abandoned", func(p *azuretest.Pull) { p.Status = "abandoned" }, atoll.PullClosed, true, false},
		{"conflicts", func(p *azuretest.Pull) { p.MergeStatus = "conflicts" }, atoll.PullOpen, false, false},
		{"merge queued", func(p *azuretest.Pull) { p.MergeStatus = "queued" }, atoll.PullOpen, false, false},
		{"rejected by policy", func(p *azuretest.Pull) { p.MergeStatus = "rejectedByPolicy" }, atoll.PullOpen, false, false},
		{"draft", func(p *azuretest.Pull) { p.Draft = true }, atoll.PullOpen, false, false},
		{"fork", func(p *azuretest.Pull) { p.Fork = true }, atoll.PullOpen, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			pr := basePull()
			tc.edit(&pr)
			srv.AddPull(org, project, repoName, pr)
			got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
			if err != nil {
				t.Fatal(err)
			}
			if got.State != tc.state || got.Mergeable != tc.mergeable || got.Fork != tc.fork {
				t.Errorf("State, Mergeable, Fork = %q, %v, %v; want %q, %v, %v", got.State, got.Mergeable, got.Fork, tc.state, tc.mergeable, tc.fork)
			}
		})
	}
}

func TestGetPullNotFound(t *testing.T) {
	srv := newFake(t)
	p := newProvider(t, srv)
	for _, r := range []atoll.Repo{repo, {Owner: org + "/" + project, Name: "nosuchrepo"}} {
		_, err := p.GetPull(context.Background(), r, 99)
		if atoll.ErrorCode(err) != atoll.ENOTFOUND {
			t.Errorf("%s#99: err = %v; want ENOTFOUND", r.FullName(), err)
		}
		if err != nil && !strings.Contains(err.Error(), "get pull "+r.FullName()+"#99") {
			t.Errorf("err = %v; want the call's context", err)
		}
	}
	if _, err := p.GetPull(context.Background(), atoll.Repo{Owner: "noproject", Name: "r"}, 1); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("owner without project: err = %v; want EINVALID", err)
	}
}

// Atlantis's PullIsApproved table, one reviewer other than the author (or
// the author) with each vote: approved (10) and approved with suggestions
// (5) approve, as Azure DevOps's minimum-reviewers policy counts them; no
// vote (0), waiting for author (-5) and rejected (-10) do not; the
// author's own approval does not.
func TestAzureApprovedWithSuggestionsCounts(t *testing.T) {
	cases := []struct {
		name     string
		reviewer string
		vote     int
		approved bool
	}{
		{"approved", "bob@contoso.com", 10, true},
		{"approved with suggestions", "bob@contoso.com", 5, true},
		{"no vote", "bob@contoso.com", 0, false},
		{"waiting for author", "bob@contoso.com", -5, false},
		{"rejected", "bob@contoso.com", -10, false},
		{"approved only by the author", author, 10, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			srv.SetVote(org, project, repoName, 7, tc.reviewer, tc.vote)
			got, err := newProvider(t, srv).GetPull(context.Background(), repo, 7)
			if err != nil {
				t.Fatal(err)
			}
			if got.Approved != tc.approved {
				t.Errorf("Approved = %v; want %v", got.Approved, tc.approved)
			}
		})
	}
}
