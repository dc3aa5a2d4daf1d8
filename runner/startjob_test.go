package runner_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/local"
)

// startNotReplicated is the store of a node of a pair whose replication
// barrier fails on the first job start: the start is committed on its disk
// (a later sync uploads it), the caller is told EUNAVAILABLE.
type startNotReplicated struct {
	atoll.RunnerStore
	failed atomic.Bool
}

func (s *startNotReplicated) StartJob(ctx context.Context, id int64) error {
	err := s.RunnerStore.StartJob(ctx, id)
	if err == nil && s.failed.CompareAndSwap(false, true) {
		return atoll.Errorf(atoll.EUNAVAILABLE, "The write was not replicated.")
	}
	return err
}

// A job whose start was told "not replicated" (committed all the same) is
// reported "Not started" and recorded as not run, its lock given back: before, its row stayed running
// under the live active node, shown running on every page until the next
// start of a node called it interrupted.
func TestJobStartNotReplicatedIsNotLeftRunning(t *testing.T) {
	tf := testTerraform(t)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	ctx := context.Background()
	dir := t.TempDir()
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
	opt := demo.Options{}
	if _, err := demo.SeedWith(ctx, db, dir, "http://atoll.example", opt); err != nil { // queues autoplan request 1
		t.Fatal(err)
	}
	p := &threaded{Provider: &local.Provider{DB: db}}
	r := &runner.Runner{
		DB:        &startNotReplicated{RunnerStore: db},
		Providers: map[string]vcs.Provider{atoll.VCSLocal: p},
		Workdirs:  &git.Workdirs{Root: filepath.Join(dir, "work")},
		Terraform: terraform.Runner{Bin: tf},
		Parser:    command.Parser{ExecutableName: "atlantis"},
		Markdown:  markdown.Renderer{Executable: "atlantis"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config:    runner.Config{ServerConfig: demo.ServerConfig(), Allowlist: runner.ParseAllowlist(opt.Allowlist()), PublicURL: "http://atoll.example"},
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	waitRequest(t, db, 1)
	jobs, err := db.RequestJobs(ctx, 1)
	if err != nil || len(jobs) == 0 {
		t.Fatalf("jobs of the autoplan: %d, %v; want the demo project's plan", len(jobs), err)
	}
	var notStarted int
	for _, j := range jobs {
		switch {
		case j.State == atoll.JobRunning || j.State == atoll.JobQueued:
			t.Errorf("job %d (%s) left %s after its request ended", j.ID, j.Dir, j.State)
		case j.State == atoll.JobCanceled && strings.HasPrefix(j.Error, "Not started: "):
			notStarted++
		}
	}
	if notStarted != 1 {
		t.Errorf("%d jobs recorded not started, want 1: %+v", notStarted, jobs)
	}
	// The plan that never ran gives back the lock its request took.
	if locks, err := db.Locks(ctx); err != nil || len(locks) != 0 {
		t.Errorf("locks after the plan that did not start: %+v, %v; want none", locks, err)
	}
	var told bool
	for _, post := range p.since(0) {
		told = told || strings.Contains(post.body, "Not started: The write was not replicated.")
	}
	if !told {
		t.Errorf("the pull request was not told which job did not start: %+v", p.since(0))
	}
}
