package main_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// mountTmpfs mounts a small tmpfs for a test that needs a real full disk.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a full-disk test mounts a tmpfs, which needs root; run make test as root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("a full-disk test mounts a tmpfs, which this machine does not allow: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", "-l", dir).Run() })
	return dir
}

// fillDisk writes to dir's file system until it is full and returns what
// frees the space again.
func fillDisk(t *testing.T, dir string) (free func()) {
	t.Helper()
	name := filepath.Join(dir, "filler")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for _, n := range []int{64 << 10, 4096, 1} {
		for {
			if _, err := f.Write(buf[:n]); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill disk: %v", err)
				}
				break
			}
		}
	}
	f.Close()
	return func() {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
	}
}

const slowApplyProject = `resource "terraform_data" "app" {
  input = "x"
  provisioner "local-exec" {
    command = "sleep 2"
  }
}
`

// A database that cannot be written (its disk full) during a plan and
// during an apply: nothing is told until it is committed, /readyz says not
// ready meanwhile, the job's whole log is kept, each outcome is told once,
// and the pull request is not wedged once space returns.
func TestFullDiskDuringPlanAndApply(t *testing.T) {
	testEnv(t)
	dataDir := mountTmpfs(t, "16m")
	gh := newFakeGitHub(t)
	repo := newGitRepo(t, map[string]string{"app/main.tf": ""})
	base := repo.git("rev-parse", "main")
	cloneURL, _ := serveGit(t, repo, "gh-test-token")
	m := startMain(t, dataDir, func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.WorkDir = t.TempDir() // only the database is on the small disk
	})
	t.Cleanup(func() { m.Close() })
	ctx := context.Background()
	sha := repo.branch("app", map[string]string{"app/main.tf": slowApplyProject})
	gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "app", BaseSHA: base, BaseRef: "main", Files: []string{"app/main.tf"}})

	job := func(kind string) *atoll.Job {
		jobs, err := m.DB.Jobs(ctx, atoll.JobFilter{Kind: kind})
		if err != nil || len(jobs) == 0 {
			return nil
		}
		return jobs[0]
	}
	ready := func() int {
		resp, err := authClient.Get(m.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// whileFull fills the disk once start holds, checks that the job's end
	// is held back and nothing is told, then frees the space.
	whileFull := func(what string, start func() bool) {
		t.Helper()
		eventually(t, 60*time.Second, what+" running", start)
		comments, retries := len(gh.pullComments(1)), m.Runner.CommitRetries()
		free := fillDisk(t, dataDir)
		eventually(t, 60*time.Second, what+": a write held back by the full disk", func() bool { return m.Runner.CommitRetries() > retries })
		if code := ready(); code != http.StatusServiceUnavailable {
			t.Errorf("%s: /readyz = %d while the database cannot be written, want 503", what, code)
		}
		if n := len(gh.pullComments(1)); n != comments {
			t.Fatalf("%s: %d comments posted while nothing could be committed: %q", what, n-comments, gh.pullComments(1)[comments:])
		}
		free()
	}
	webhook(t, m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(cloneURL, 1, "opened", "app", sha, base))
	whileFull("plan", func() bool { j := job(atoll.JobPlan); return j != nil && j.State == atoll.JobRunning })
	mustContain(t, "plan comment", waitFor(t, gh, 1, 1), "Plan: 1 to add")
	eventually(t, 10*time.Second, "ready again", func() bool { return ready() == http.StatusOK })
	checkLog(t, m, job(atoll.JobPlan), atoll.JobSucceeded, "Plan: 1 to add")

	webhook(t, m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(cloneURL, 1, "atlantis apply"))
	whileFull("apply", func() bool {
		j := job(atoll.JobApply)
		if j == nil || j.State != atoll.JobRunning {
			return false
		}
		// Terraform has started and its provisioner sleeps: the job's end
		// is still to be written. The log arrives in batches, so the
		// command line need not be the last line stored.
		lines, _ := m.DB.Logs(ctx, j.ID, 0, 0)
		started, done := false, false
		for _, l := range lines {
			started = started || strings.Contains(l.Text, "terraform apply")
			done = done || strings.Contains(l.Text, "Creation complete")
		}
		return started && !done
	})
	mustContain(t, "apply comment", waitFor(t, gh, 1, 2), "Apply complete!")
	checkLog(t, m, job(atoll.JobApply), atoll.JobSucceeded, "Apply complete!")

	// Not wedged: the pull request's next command runs.
	webhook(t, m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(cloneURL, 1, "atlantis plan"))
	mustContain(t, "plan after apply", waitFor(t, gh, 1, 3), "Ran Plan for")
	if n := len(gh.pullComments(1)); n != 3 {
		t.Fatalf("comments = %d, want exactly plan, apply, plan", n)
	}
}

// checkLog checks that a job ended in state with its whole log stored:
// numbered without gaps, ending with what the job printed last.
func checkLog(t *testing.T, m *main.Main, j *atoll.Job, state, want string) {
	t.Helper()
	got, err := m.DB.Job(context.Background(), j.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != state {
		t.Fatalf("job %d (%s) is %s, want %s (%s)", j.ID, j.Kind, got.State, state, got.Error)
	}
	lines, err := m.DB.Logs(context.Background(), j.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for i, l := range lines {
		if l.Seq != int64(i+1) {
			t.Fatalf("job %d log: line %d has seq %d: lines were lost", j.ID, i+1, l.Seq)
		}
		text.WriteString(l.Text + "\n")
	}
	if !strings.Contains(text.String(), want) {
		t.Fatalf("job %d log lacks %q:\n%s", j.ID, want, text.String())
	}
}
