package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/github/githubtest"
)

func TestReact(t *testing.T) {
	f := newFake(t)
	p := f.provider(t)
	ctx := context.Background()
	c := f.newComment("alice", "atlantis plan")
	id := strings.TrimSpace(jsonString(c["id"]))

	// Twice: GitHub answers the second with the existing reaction.
	for range 2 {
		if err := p.React(ctx, helloWorld, pullNum, id, "eyes"); err != nil {
			t.Fatal(err)
		}
	}
	calls := f.callsTo("POST", "/repos/octocat/Hello-World/issues/comments/"+id+"/reactions")
	if len(calls) != 2 || !strings.Contains(string(calls[0].Body), `"content":"eyes"`) {
		t.Fatalf("reaction calls = %+v", calls)
	}
	reactions := len(f.AllReactions())
	if reactions != 1 {
		t.Errorf("reactions = %d; want one", reactions)
	}

	if err := p.React(ctx, helloWorld, pullNum, id, "thumbsup"); err == nil {
		t.Error("an unknown reaction: no error")
	}
	if err := p.React(ctx, helloWorld, pullNum, "999999", "eyes"); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Errorf("a missing comment: err = %v; want ENOTFOUND", err)
	}
	if err := p.React(ctx, helloWorld, pullNum, "not-a-number", "eyes"); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("a bad id: err = %v; want EINVALID", err)
	}
}

func jsonString(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestMergeDeleteSourceBranch(t *testing.T) {
	const ref = "/repos/octocat/Hello-World/git/refs/heads/new-topic"
	cases := []struct {
		name       string
		opts       vcs.MergeOptions
		fork       bool
		exists     bool
		failDelete bool
		wantDelete int
		wantKept   bool
	}{
		{name: "deleted", opts: vcs.MergeOptions{DeleteSourceBranch: true}, exists: true, wantDelete: 1},
		{name: "not asked", opts: vcs.MergeOptions{}, exists: true},
		{name: "fork kept", opts: vcs.MergeOptions{DeleteSourceBranch: true}, fork: true, exists: true},
		{name: "already gone", opts: vcs.MergeOptions{DeleteSourceBranch: true}, wantDelete: 1},
		{name: "delete refused", opts: vcs.MergeOptions{DeleteSourceBranch: true}, exists: true, failDelete: true, wantDelete: 1, wantKept: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.SetBranch(fullName, "new-topic", tc.exists)
			if tc.fork {
				f.setHeadRepo(t, "hubot/Hello-World")
			}
			p := f.provider(t)
			if tc.failDelete {
				// A protected branch: GitHub refuses with 422 and another message.
				f.Refuse("DELETE", ref, 422, `{"message":"Cannot delete this protected branch"}`)
			}
			err := p.Merge(context.Background(), helloWorld, pullNum, tc.opts)
			if got := errors.Is(err, vcs.ErrSourceBranchKept); got != tc.wantKept || (err != nil && !tc.wantKept) {
				t.Fatalf("err = %v; want ErrSourceBranchKept %v", err, tc.wantKept)
			}
			if tc.wantKept && !strings.Contains(atoll.ErrorMessage(err), "protected branch") {
				t.Errorf("err = %v; want GitHub's reason", err)
			}
			if n := len(f.callsTo("PUT", "/repos/octocat/Hello-World/pulls/1347/merge")); n != 1 {
				t.Errorf("merge calls = %d", n)
			}
			if n := len(f.callsTo("DELETE", ref)); n != tc.wantDelete {
				t.Errorf("delete calls = %d; want %d", n, tc.wantDelete)
			}
			if tc.wantDelete == 1 && !tc.failDelete && f.BranchExists(fullName, "new-topic") {
				t.Error("branch still there")
			}
		})
	}
}

// A failed merge deletes nothing.
func TestMergeFailedKeepsBranch(t *testing.T) {
	f := newFake(t)
	f.SetBranch(fullName, "new-topic", true)
	f.answer("PUT", "/repos/octocat/Hello-World/pulls/1347/merge", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 405, map[string]any{"message": "Pull Request is not mergeable"})
	})
	err := f.provider(t).Merge(context.Background(), helloWorld, pullNum, vcs.MergeOptions{DeleteSourceBranch: true})
	if atoll.ErrorCode(err) != atoll.ECONFLICT || errors.Is(err, vcs.ErrSourceBranchKept) {
		t.Fatalf("err = %v; want ECONFLICT", err)
	}
	if n := len(f.callsTo("DELETE", "/repos/octocat/Hello-World/git/refs/heads/new-topic")); n != 0 {
		t.Errorf("delete calls = %d", n)
	}
}

func TestUserTeams(t *testing.T) {
	f := newFake(t)
	f.SetTeams(owner,
		githubtest.Team{Slug: "platform"},
		githubtest.Team{Slug: "sre", Parent: "platform", Members: []string{"alice"}},
		githubtest.Team{Slug: "oncall", Parent: "sre", Members: []string{"Alice", "bob"}},
		githubtest.Team{Slug: "dev", Members: []string{"bob"}},
		githubtest.Team{Slug: "docs", Members: []string{"alice"}},
	)
	p := f.provider(t)
	ctx := context.Background()
	// Three direct teams over two pages, plus the ancestors platform and sre.
	got, err := p.UserTeams(ctx, helloWorld, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"docs", "oncall", "platform", "sre"}; !slices.Equal(got, want) {
		t.Errorf("alice's teams = %v; want %v", got, want)
	}
	if n := len(f.callsTo("POST", "/graphql")); n != 2 {
		t.Errorf("graphql calls = %d; want 2 pages", n)
	}
	// Cached: no more calls for alice; bob is asked for.
	if _, err := p.UserTeams(ctx, helloWorld, "ALICE"); err != nil {
		t.Fatal(err)
	}
	got, err = p.UserTeams(ctx, helloWorld, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"dev", "oncall", "platform", "sre"}; !slices.Equal(got, want) {
		t.Errorf("bob's teams = %v; want %v", got, want)
	}
	if n := len(f.callsTo("POST", "/graphql")); n != 3 {
		t.Errorf("graphql calls = %d; want 3", n)
	}
	for _, c := range f.callsTo("POST", "/graphql") {
		if c.Auth != "Bearer ghp_secrettoken" && c.Auth != "token ghp_secrettoken" {
			t.Errorf("graphql auth = %q", c.Auth)
		}
	}
	// A user's repository has no teams.
	got, err = p.UserTeams(ctx, atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "someone", Name: "x"}, "alice")
	if err != nil || len(got) != 0 {
		t.Errorf("user-owned repository: teams %v, err %v; want none", got, err)
	}
	// Other GraphQL errors are errors (a token without read:org).
	f.Refuse("POST", "/graphql", 200,
		`{"data":{"organization":{"teams":null}},"errors":[{"type":"FORBIDDEN","message":"Resource not accessible by integration"}]}`)
	if _, err := p.UserTeams(ctx, helloWorld, "carol"); err == nil || !strings.Contains(err.Error(), "Resource not accessible") {
		t.Errorf("forbidden: err = %v", err)
	}
}
