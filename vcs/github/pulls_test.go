package github_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	ghp "github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/github/githubtest"
	gogh "github.com/google/go-github/v88/github"
)

func review(login, state string) map[string]any {
	return map[string]any{"id": 1, "user": map[string]any{"login": login}, "state": state, "body": "", "commit_id": "6dcb09b5b57875f334f61aebed695e2e4193db5e"}
}

func TestGetPullFields(t *testing.T) {
	f := newFake(t)
	got, err := f.provider(t).GetPull(context.Background(), helloWorld, pullNum)
	if err != nil {
		t.Fatal(err)
	}
	want := &vcs.PullDetails{
		Pull: atoll.Pull{
			Repo: "octocat/Hello-World", Number: 1347, Title: "new-feature", Author: "octocat",
			HeadSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", HeadRef: "new-topic",
			BaseSHA: "6dcb09b5b57875f334f61aebed695e2e4193db5e", BaseRef: "main",
			// The fixture has merged_at set but merged false: still open.
			State: atoll.PullOpen, URL: "https://github.com/octocat/Hello-World/pull/1347",
			CreatedAt: ts("2011-01-26T19:01:12Z"), UpdatedAt: ts("2011-01-26T19:01:12Z"),
		},
		Approved:  false,
		Mergeable: true, // mergeable true, mergeable_state clean
		Labels:    []string{"bug"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("GetPull =\n%+v\nwant\n%+v", got, want)
	}
	for _, c := range f.allCalls() {
		if c.Auth != "Bearer ghp_secrettoken" {
			t.Errorf("%s %s: Authorization = %q", c.Method, c.Path, c.Auth)
		}
	}
	if n := len(f.callsTo("GET", "/repos/octocat/Hello-World/pulls/1347/reviews")); n != 1 {
		t.Errorf("review list calls = %d, want 1", n)
	}
}

func TestGetPullApproved(t *testing.T) {
	many := []map[string]any{review("alice", "APPROVED")}
	for i := 0; i < 130; i++ {
		many = append(many, review(fmt.Sprintf("user%d", i), "COMMENTED"))
	}
	manyThenChanges := append(append([]map[string]any{}, many...), review("alice", "CHANGES_REQUESTED"))

	cases := []struct {
		name    string
		reviews []map[string]any
		want    bool
	}{
		{"no reviews", nil, false},
		{"one approval", []map[string]any{review("alice", "APPROVED")}, true},
		{"approved then changes requested by same user", []map[string]any{review("alice", "APPROVED"), review("alice", "CHANGES_REQUESTED")}, false},
		{"changes requested then approved", []map[string]any{review("alice", "CHANGES_REQUESTED"), review("alice", "APPROVED")}, true},
		{"approved then commented keeps approval", []map[string]any{review("alice", "APPROVED"), review("alice", "COMMENTED")}, true},
		{"approved then dismissed", []map[string]any{review("alice", "APPROVED"), review("alice", "DISMISSED")}, false},
		{"reviewer login case differs", []map[string]any{review("alice", "APPROVED"), review("Alice", "CHANGES_REQUESTED")}, false},
		{"pending review", []map[string]any{review("alice", "PENDING")}, false},
		{"only commented", []map[string]any{review("alice", "COMMENTED")}, false},
		{"author approving own pull", []map[string]any{review("octocat", "APPROVED")}, false},
		{"one of two reviewers approves", []map[string]any{review("bob", "CHANGES_REQUESTED"), review("alice", "APPROVED")}, true},
		{"approval on page 1 stands across pages", many, true},
		{"approval on page 1 revoked on page 2", manyThenChanges, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			f.setReviews(tc.reviews)
			got, err := f.provider(t).GetPull(context.Background(), helloWorld, pullNum)
			if err != nil {
				t.Fatal(err)
			}
			if got.Approved != tc.want {
				t.Errorf("Approved = %v, want %v", got.Approved, tc.want)
			}
			if len(tc.reviews) > 100 {
				calls := f.callsTo("GET", "/repos/octocat/Hello-World/pulls/1347/reviews")
				if len(calls) != 2 || !strings.Contains(calls[0].Query, "per_page=100") || !strings.Contains(calls[1].Query, "page=2") {
					t.Errorf("review calls = %+v, want 2 pages of 100", calls)
				}
			}
		})
	}
}

func TestGetPullMergeable(t *testing.T) {
	cases := []struct {
		mergeable any
		state     string
		want      bool
	}{
		{true, "clean", true},
		{true, "unstable", true},
		{true, "has_hooks", true},
		{true, "blocked", false},
		{true, "dirty", false},
		{true, "draft", false},
		{false, "clean", false},
		{false, "dirty", false},
		{nil, "unknown", false}, // GitHub has not computed it yet
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%v/%s", tc.mergeable, tc.state), func(t *testing.T) {
			f := newFake(t)
			f.setPullFields(t, map[string]any{"mergeable": tc.mergeable, "mergeable_state": tc.state})
			got, err := f.provider(t).GetPull(context.Background(), helloWorld, pullNum)
			if err != nil {
				t.Fatal(err)
			}
			if got.Mergeable != tc.want {
				t.Errorf("Mergeable = %v, want %v", got.Mergeable, tc.want)
			}
		})
	}
}

func TestGetPullMergedState(t *testing.T) {
	f := newFake(t)
	f.setPullFields(t, map[string]any{"state": "closed", "merged": true, "mergeable": nil})
	got, err := f.provider(t).GetPull(context.Background(), helloWorld, pullNum)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != atoll.PullMerged || got.Mergeable {
		t.Errorf("State = %q, Mergeable = %v; want merged, false", got.State, got.Mergeable)
	}
}

func TestNotFound(t *testing.T) {
	f := newFake(t)
	p := f.provider(t)
	ctx := context.Background()
	other := atoll.Repo{Owner: "octocat", Name: "Nope"}
	checks := map[string]error{}
	_, checks["GetPull unknown number"] = p.GetPull(ctx, helloWorld, 1)
	_, checks["GetPull unknown repo"] = p.GetPull(ctx, other, pullNum)
	_, checks["ChangedFiles"] = p.ChangedFiles(ctx, other, pullNum)
	_, checks["CreateComment"] = p.CreateComment(ctx, helloWorld, 1, "hi")
	checks["UpdateComment"] = p.UpdateComment(ctx, helloWorld, pullNum, "424242", "hi")
	checks["HideComments"] = p.HideComments(ctx, helloWorld, 1, "plan")
	checks["SetStatus"] = p.SetStatus(ctx, other, "abc", vcs.Status{State: vcs.StatusPending, Context: "atlantis/plan"})
	checks["Merge"] = p.Merge(ctx, other, pullNum, vcs.MergeOptions{})
	for name, err := range checks {
		if atoll.ErrorCode(err) != atoll.ENOTFOUND {
			t.Errorf("%s: err = %v; want ENOTFOUND", name, err)
			continue
		}
		// The go-github error stays in the chain for logs.
		var er *gogh.ErrorResponse
		if !errors.As(err, &er) || er.Response.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %v does not wrap the 404 response", name, err)
		}
		if !strings.HasPrefix(err.Error(), "github: ") {
			t.Errorf("%s: error %q lacks context", name, err)
		}
	}
	if err := checks["GetPull unknown number"]; !strings.Contains(err.Error(), "octocat/Hello-World#1") {
		t.Errorf("error %q does not name the pull request", err)
	}
}

func TestChangedFilesPaginates(t *testing.T) {
	f := newFake(t)
	var want []string
	var files []map[string]any
	for i := 0; i < 250; i++ {
		file := map[string]any{"sha": "bbcd538c8e72b8c175046e27cc8f907076331401", "filename": fmt.Sprintf("dir%d/main.tf", i), "status": "modified", "additions": 1, "deletions": 0, "changes": 1}
		want = append(want, fmt.Sprintf("dir%d/main.tf", i))
		if i%100 == 7 {
			file["status"] = "renamed"
			file["previous_filename"] = fmt.Sprintf("old%d/main.tf", i)
			want = append(want, fmt.Sprintf("old%d/main.tf", i))
		}
		files = append(files, file)
	}
	f.updatePull(func(p *githubtest.Pull) { p.Files = files })
	got, err := f.provider(t).ChangedFiles(context.Background(), helloWorld, pullNum)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ChangedFiles returned %d paths, want %d; first diff at %d", len(got), len(want), firstDiff(got, want))
	}
	calls := f.callsTo("GET", "/repos/octocat/Hello-World/pulls/1347/files")
	if len(calls) != 3 {
		t.Fatalf("file list calls = %d, want 3", len(calls))
	}
	for i, c := range calls {
		if !strings.Contains(c.Query, "per_page=100") || (i > 0 && !strings.Contains(c.Query, fmt.Sprintf("page=%d", i+1))) {
			t.Errorf("call %d query = %q", i, c.Query)
		}
	}
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestMerge(t *testing.T) {
	for _, tc := range []struct{ method, want string }{{"", "merge"}, {"merge", "merge"}, {"squash", "squash"}, {"rebase", "rebase"}} {
		f := newFake(t)
		if err := f.provider(t).Merge(context.Background(), helloWorld, pullNum, vcs.MergeOptions{Method: tc.method}); err != nil {
			t.Fatalf("Merge(%q): %v", tc.method, err)
		}
		calls := f.callsTo("PUT", "/repos/octocat/Hello-World/pulls/1347/merge")
		if len(calls) != 1 {
			t.Fatalf("merge calls = %d", len(calls))
		}
		var body map[string]any
		json.Unmarshal(calls[0].Body, &body)
		if body["merge_method"] != tc.want {
			t.Errorf("Merge(%q) sent %s", tc.method, calls[0].Body)
		}
	}
}

func TestMergeFailures(t *testing.T) {
	f := newFake(t)
	p := f.provider(t)
	if err := p.Merge(context.Background(), helloWorld, pullNum, vcs.MergeOptions{Method: "fast-forward"}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("unknown method: err = %v; want EINVALID", err)
	}
	if n := len(f.allCalls()); n != 0 {
		t.Errorf("unknown method made %d calls", n)
	}

	f.answer("PUT", "/repos/octocat/Hello-World/pulls/1347/merge", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 405, map[string]any{"message": "Pull Request is not mergeable", "documentation_url": "https://docs.github.com/rest/pulls/pulls#merge-a-pull-request"})
	})
	if err := p.Merge(context.Background(), helloWorld, pullNum, vcs.MergeOptions{}); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Errorf("405: err = %v; want ECONFLICT", err)
	}

	f.answer("PUT", "/repos/octocat/Hello-World/pulls/1347/merge", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, map[string]any{"merged": false, "message": "Head branch was modified"})
	})
	err := p.Merge(context.Background(), helloWorld, pullNum, vcs.MergeOptions{})
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "Head branch was modified") {
		t.Errorf("merged=false: err = %v; want ECONFLICT with GitHub's message", err)
	}
}

// A 200 whose body is JSON null (a proxy or a misbehaving GitHub
// Enterprise, never github.com) decodes to a nil pull request. GetPull must
// say so as an error: a panic there would end the worker and the process.
func TestGetPullNullBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, "null")
	}))
	t.Cleanup(srv.Close)
	p, err := ghp.New(ghp.Config{APIURL: srv.URL + "/", User: "atoll-bot", Token: token, WebhookSecret: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.GetPull(context.Background(), helloWorld, pullNum)
	if err == nil || got != nil {
		t.Fatalf("GetPull = %+v, %v; want an error", got, err)
	}
	if atoll.ErrorCode(err) != atoll.EUNAVAILABLE || !strings.Contains(err.Error(), "octocat/Hello-World#1347") {
		t.Errorf("err = %v (code %s); want unavailable naming the pull request", err, atoll.ErrorCode(err))
	}
}
