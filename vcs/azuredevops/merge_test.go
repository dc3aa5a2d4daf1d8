package azuredevops_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
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
			if err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: method}); err != nil {
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
			err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "squash"})
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
		if err := newProvider(t, srv).Merge(context.Background(), repo, 7, vcs.MergeOptions{Method: "squash", DeleteSourceBranch: del}); err != nil {
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
