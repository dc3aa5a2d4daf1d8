package azuredevops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
)

func TestMergeStrategies(t *testing.T) {
	cases := map[string]string{
		"":             "noFastForward",
		"merge":        "noFastForward",
		"squash":       "squash",
		"rebase":       "rebase",
		"rebase-merge": "rebaseMerge",
	}
	for method, want := range cases {
		t.Run(method, func(t *testing.T) {
			srv := newFake(t)
			if err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: method, HeadSHA: headSHA}); err != nil {
				t.Fatal(err)
			}
			got := srv.Pull(org, project, repoName, 7)
			if got.Status != "completed" || got.MergeStrategy != want || got.DeleteSourceBranch || got.ClosedBy != bot {
				t.Errorf("pull = status %q strategy %q delete %v by %q; want completed %q", got.Status, got.MergeStrategy, got.DeleteSourceBranch, got.ClosedBy, want)
			}
			// The completion names the head Atoll saw.
			for _, c := range srv.Calls() {
				if c.Method != "PATCH" {
					continue
				}
				var body struct {
					LastMergeSourceCommit struct{ CommitID string } `json:"lastMergeSourceCommit"`
				}
				json.Unmarshal(c.Body, &body)
				if body.LastMergeSourceCommit.CommitID != headSHA {
					t.Errorf("completion body %s; want lastMergeSourceCommit %s", c.Body, headSHA)
				}
			}
		})
	}
}

func TestMergeBadMethod(t *testing.T) {
	srv := newFake(t)
	err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "fast-forward"})
	if atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("err = %v; want EINVALID", err)
	}
	if n := len(srv.Calls()); n != 0 {
		t.Errorf("%d calls made", n)
	}
	if got := srv.Pull(org, project, repoName, 7).Status; got != "active" {
		t.Errorf("status = %q", got)
	}
}

func TestMergeRefused(t *testing.T) {
	cases := []struct {
		name   string
		status string
		fail   string
		code   string
	}{
		{"merge failure", "active", "TF401186: merge conflicts", atoll.ECONFLICT},
		{"already completed", "completed", "", atoll.ECONFLICT},
		{"abandoned", "abandoned", "", atoll.ECONFLICT},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := newFake(t)
			pr := basePull()
			pr.Status, pr.MergeFailure = tc.status, tc.fail
			srv.AddPull(org, project, repoName, pr)
			err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "squash", HeadSHA: headSHA})
			if atoll.ErrorCode(err) != tc.code {
				t.Errorf("err = %v; want %s", err, tc.code)
			}
			if got := srv.Pull(org, project, repoName, 7).Status; got != tc.status {
				t.Errorf("status = %q, want %q", got, tc.status)
			}
			if tc.status != "active" && strings.Contains(err.Error(), "TF4") {
				t.Errorf("err = %v; want Atoll's own message for a pull request that is not active", err)
			}
		})
	}
}

// delete_source_branch_on_merge reaches Azure as the completion option
// deleteSourceBranch; Azure deletes the branch itself once completed.
func TestMergeDeleteSourceBranch(t *testing.T) {
	for _, del := range []bool{true, false} {
		srv := newFake(t)
		if err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "squash", DeleteSourceBranch: del, HeadSHA: headSHA}); err != nil {
			t.Fatal(err)
		}
		if got := srv.Pull(org, project, repoName, 7); got.Status != "completed" || got.DeleteSourceBranch != del {
			t.Errorf("DeleteSourceBranch %v: pull = status %q deleteSourceBranch %v", del, got.Status, got.DeleteSourceBranch)
		}
		for _, c := range srv.Calls() {
			if c.Method == "PATCH" && !strings.Contains(string(c.Body), fmt.Sprintf(`"deleteSourceBranch":%v`, del)) {
				t.Errorf("completion body %s; want deleteSourceBranch %v", c.Body, del)
			}
		}
	}
}

// The completion names the commit that was applied, never the head as a
// GET finds it: a push after the apply is not merged.
func TestMergeAppliedHead(t *testing.T) {
	srv := newFake(t)
	const pushed = "3333333333333333333333333333333333333333"
	srv.SetHead(org, project, repoName, 7, pushed) // after headSHA was applied
	err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "squash", HeadSHA: headSHA})
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), short(pushed)) {
		t.Errorf("err = %v; want ECONFLICT naming %s", err, short(pushed))
	}
	if got := srv.Pull(org, project, repoName, 7).Status; got != "active" {
		t.Errorf("status = %q; the pushed commit %s was merged unapplied", got, pushed)
	}
	for _, c := range srv.Calls() {
		if c.Method == "PATCH" && strings.Contains(string(c.Body), pushed) {
			t.Errorf("completion body %s names the pushed commit", c.Body)
		}
	}
}

func short(s string) string { return s[:8] }

func TestMergeNeedsAppliedHead(t *testing.T) {
	srv := newFake(t)
	err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{})
	if atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("err = %v; want EINVALID", err)
	}
	if got := srv.Pull(org, project, repoName, 7).Status; got != "active" {
		t.Errorf("status = %q", got)
	}
}

// sleepRecorder stands in for the wait between looks at a queued
// completion, recording each wait.
type sleepRecorder struct{ waits []time.Duration }

func (s *sleepRecorder) sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

func (s *sleepRecorder) total() (sum time.Duration) {
	for _, d := range s.waits {
		sum += d
	}
	return sum
}

// Azure queues a completion: Merge waits for it to end.
func TestMergeQueuedCompletes(t *testing.T) {
	srv := newFake(t)
	pr := basePull()
	pr.CompletionPolls = 3
	srv.AddPull(org, project, repoName, pr)
	p := newProvider(t, srv)
	var rec sleepRecorder
	azuredevops.SetSleep(p, rec.sleep)
	if err := p.Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "squash", HeadSHA: headSHA}); err != nil {
		t.Fatal(err)
	}
	if got := srv.Pull(org, project, repoName, 7); got.Status != "completed" || got.MergeStrategy != "squash" {
		t.Errorf("pull = status %q strategy %q; want completed squash", got.Status, got.MergeStrategy)
	}
	if len(rec.waits) != 3 || rec.waits[0] <= 0 || rec.waits[1] <= rec.waits[0] {
		t.Errorf("waits = %v; want 3, growing", rec.waits)
	}
}

// A completion still queued after the bounded wait is reported as queued,
// not as merged.
func TestMergeStillQueued(t *testing.T) {
	srv := newFake(t)
	pr := basePull()
	pr.CompletionPolls = 1000
	srv.AddPull(org, project, repoName, pr)
	p := newProvider(t, srv)
	var rec sleepRecorder
	azuredevops.SetSleep(p, rec.sleep)
	err := p.Merge(context.Background(), repo, 7, vcs.MergeOptions{HeadSHA: headSHA})
	if !errors.Is(err, vcs.ErrMergeQueued) {
		t.Fatalf("err = %v; want ErrMergeQueued", err)
	}
	if msg := atoll.ErrorMessage(err); !strings.Contains(msg, "queued") {
		t.Errorf("message %q does not say the completion is queued", msg)
	}
	if got := rec.total(); got != azuredevops.MergeWait {
		t.Errorf("waited %v in %d waits; want %v", got, len(rec.waits), azuredevops.MergeWait)
	}
	if got := srv.Pull(org, project, repoName, 7); got.Status != "active" || got.MergeStatus != "queued" {
		t.Errorf("pull = status %q mergeStatus %q; want active, queued", got.Status, got.MergeStatus)
	}
}

// A queued completion that fails is a failure, not a success.
func TestMergeQueuedFails(t *testing.T) {
	srv := newFake(t)
	pr := basePull()
	pr.CompletionPolls, pr.MergeFailure = 2, "TF401186: The merge of the pull request has conflicts."
	srv.AddPull(org, project, repoName, pr)
	p := newProvider(t, srv)
	var rec sleepRecorder
	azuredevops.SetSleep(p, rec.sleep)
	err := p.Merge(context.Background(), repo, 7, vcs.MergeOptions{HeadSHA: headSHA})
	if atoll.ErrorCode(err) != atoll.ECONFLICT || errors.Is(err, vcs.ErrMergeQueued) || !strings.Contains(atoll.ErrorMessage(err), "conflicts") {
		t.Errorf("err = %v; want ECONFLICT with Azure's message", err)
	}
	if got := srv.Pull(org, project, repoName, 7); got.Status != "active" {
		t.Errorf("status = %q", got.Status)
	}
}

// Waiting ends with the caller's context.
func TestMergeQueuedCanceled(t *testing.T) {
	srv := newFake(t)
	pr := basePull()
	pr.CompletionPolls = 1000
	srv.AddPull(org, project, repoName, pr)
	p := newProvider(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	azuredevops.SetSleep(p, func(context.Context, time.Duration) error { cancel(); return context.Canceled })
	if err := p.Merge(ctx, repo, 7, vcs.MergeOptions{HeadSHA: headSHA}); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v; want canceled", err)
	}
}
