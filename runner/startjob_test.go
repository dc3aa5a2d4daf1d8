package runner_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/demo"
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
	ctx := context.Background()
	_, db, _, p := startDemoRunner(t, demo.Options{}, func(db atoll.RunnerStore) atoll.RunnerStore {
		return &startNotReplicated{RunnerStore: db}
	})
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
