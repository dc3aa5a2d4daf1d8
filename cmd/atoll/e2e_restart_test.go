package main_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

const slowApply = `resource "terraform_data" "slow" {
  input = "x"
  provisioner "local-exec" {
    command = "sleep 60"
  }
}
`

// A stop interrupts what runs past the stop timeout (recorded, told, never
// retried) and leaves queued work queued; the next start runs it.
func TestStopInterruptsAndRestartResumes(t *testing.T) {
	testEnv(t)
	gh := newFakeGitHub(t)
	repo := newGitRepo(t, map[string]string{"slow/main.tf": "", "fast/main.tf": tfProject("fast", 1)})
	base := repo.git("rev-parse", "main")
	cloneURL, _ := serveGit(t, repo, "gh-test-token")
	dataDir := t.TempDir()
	start := func() *main.Main {
		m := startMain(t, dataDir, func(c *main.Config) {
			c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
			c.RepoAllowlist = "github.com/acme/*"
			c.Parallelism = 1 // so that the second pull request's work waits in the queue
			c.StopTimeout = 300 * time.Millisecond
		})
		t.Cleanup(func() { m.Close() })
		return m
	}
	m := start()
	slowSHA := repo.branch("slow", map[string]string{"slow/main.tf": slowApply})
	gh.setPull(1, fakePull{HeadSHA: slowSHA, HeadRef: "slow", BaseSHA: base, BaseRef: "main", Files: []string{"slow/main.tf"}})
	webhook(t, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, 1, "opened", "slow", slowSHA, base))
	eventually(t, 60*time.Second, "plan of #1", func() bool { return len(gh.pullComments(1)) == 1 })
	webhook(t, m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(cloneURL, 1, "atlantis apply"))
	eventually(t, 60*time.Second, "apply running", func() bool {
		var jobs []atoll.Job
		getJSON(t, m.URL+"/api/v1/jobs?kind=apply&state=running", &jobs)
		return len(jobs) == 1
	})
	fastSHA := repo.branch("fast", map[string]string{"fast/main.tf": tfProject("fast", 2)})
	gh.setPull(2, fakePull{HeadSHA: fastSHA, HeadRef: "fast", BaseSHA: base, BaseRef: "main", Files: []string{"fast/main.tf"}})
	if resp := webhook(t, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, 2, "opened", "fast", fastSHA, base)); resp.StatusCode != http.StatusOK {
		t.Fatalf("webhook: %d", resp.StatusCode)
	}

	stopped := time.Now()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(stopped); took > 20*time.Second {
		t.Fatalf("stop took %v", took)
	}
	interrupted := gh.pullComments(1)
	if len(interrupted) != 2 {
		t.Fatalf("comments on #1 after stop = %d, want plan and interrupted apply", len(interrupted))
	}
	mustContain(t, "interrupted apply comment", interrupted[1], "Interrupted", "not retried", "partly done")
	if n := len(gh.pullComments(2)); n != 0 {
		t.Fatalf("#2 has %d comments before restart; its autoplan should still be queued", n)
	}

	m = start()
	mustContain(t, "#2 autoplan after restart", waitFor(t, gh, 2, 1), "Plan: 2 to add")
	var applies []atoll.Job
	getJSON(t, m.URL+"/api/v1/jobs?kind=apply", &applies)
	if len(applies) != 1 || applies[0].State != atoll.JobInterrupted {
		t.Fatalf("apply jobs after restart = %+v; want the one interrupted job, not retried", applies)
	}
	// The resumed apply request tells nothing new: its one outcome was told.
	eventually(t, 30*time.Second, "resumed requests done", func() bool {
		n, err := m.DB.CountRequests(context.Background(), atoll.RequestQueued)
		r, err2 := m.DB.CountRequests(context.Background(), atoll.RequestRunning)
		return err == nil && err2 == nil && n+r == 0
	})
	if got := gh.pullComments(1); len(got) != 2 {
		t.Fatalf("comments on #1 after restart = %d, want still 2 (plan, interrupted apply): %q", len(got), got[2:])
	}
}

func waitFor(t *testing.T, gh *fakeGitHub, pull, n int) string {
	t.Helper()
	eventually(t, 90*time.Second, "comment", func() bool { return len(gh.pullComments(pull)) >= n })
	return gh.pullComments(pull)[n-1]
}
