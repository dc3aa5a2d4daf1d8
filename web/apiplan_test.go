package web_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/local"
	"github.com/atollhq/atoll/web"
)

// localPull makes a real git repository with a feature branch and records
// it as local repository acme/infra with open pull request 1.
func localPull(t *testing.T, db *store.DB) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "infra")
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(dir, 0o755)
	git("init", "--quiet", "--initial-branch=main")
	os.WriteFile(filepath.Join(dir, "main.tf"), []byte("# empty\n"), 0o644)
	git("add", "-A")
	git("commit", "--quiet", "-m", "initial")
	git("branch", "feature")
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSLocal, Host: "local", Owner: "acme", Name: "infra", CloneURL: "file://" + dir})
		if err != nil {
			return err
		}
		_, err = tx.UpsertPull(repoID, atoll.Pull{Number: 1, Title: "t", Author: "alice", HeadRef: "feature", BaseRef: "main", State: atoll.PullOpen})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// POST /api/v1/apply waits for its request longer than the server's read
// timeout (which would cancel it), and says when there was nothing to
// apply rather than answering a bare success.
func TestAPIApplyNothingToApplyPastReadTimeout(t *testing.T) {
	s := startLiveServer(t, func(s *web.Server) {
		s.ReadTimeout, s.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
		s.APISecret = "secret"
		s.Providers[atoll.VCSLocal] = &local.Provider{DB: s.DB.(*store.DB)}
		withRunner(s, &runner.Runner{
			DB:        s.DB.(*store.DB),
			Hub:       runner.NewHub(),
			Providers: map[string]vcs.Provider{atoll.VCSLocal: s.Providers[atoll.VCSLocal]},
			Parser:    command.Parser{ExecutableName: "atlantis"},
			Logger:    s.Logger,
			Config:    runner.Config{Allowlist: runner.ParseAllowlist("local/acme/*"), Parallelism: 1},
		})
	})
	localPull(t, s.DB)
	// The workers start only after the read and write timeouts have passed.
	go func() {
		time.Sleep(time.Second)
		if err := runnerOf(s.Server).Start(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(runnerOf(s.Server).Stop)
	req, _ := http.NewRequest("POST", s.URL+"/api/v1/apply", bytes.NewBufferString(`{"Repository":"ACME/Infra","PR":1}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Atlantis-Token", "secret")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Requests []atoll.Request
		Jobs     []atoll.Job
		Failed   bool
		Message  string
		Error    string
	}
	decodeBody(t, res, &out)
	if res.StatusCode != 200 || out.Failed || len(out.Jobs) != 0 || !strings.HasPrefix(out.Message, "Nothing to apply") {
		t.Fatalf("status %d %+v; want 200 with no jobs and a Nothing to apply message", res.StatusCode, out)
	}
	// The request is the token owner's: the API secret signs in as
	// "api-secret".
	if len(out.Requests) != 1 || out.Requests[0].User != "api-secret" {
		t.Errorf("requests = %+v; want one by api-secret", out.Requests)
	}
}
