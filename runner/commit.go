package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
)

// commit runs op (one store write) and, while the store fails for a
// reason that may pass (a full disk, an I/O error), retries with backoff
// until it commits or the runner is stopped. Nobody is told what a job did
// before it is committed, so a storage failure delays a report instead of
// making it wrong, and a job or request never stays "running" because one
// write failed. Coded errors (a lock lost, a plan already applied) are
// decisions, not failures, and return at once. op may run more than once.
func (r *Runner) commit(what string, op func(ctx context.Context) error) error {
	return retry(r, what, func() error { return op(context.Background()) })
}

// retry runs op until it succeeds, fails with a coded error, or the runner
// is stopped, backing off between attempts.
func retry(r *Runner, what string, op func() error) error {
	backoff := commitBackoff
	for {
		err := op()
		if err == nil || !retryable(err) {
			return err
		}
		r.commitRetries.Add(1)
		r.Logger.Warn("store write failed: retrying", "what", what, "err", err, "retry_in", backoff)
		select {
		case <-time.After(backoff):
		case <-r.sched.jobCtx.Done():
			return fmt.Errorf("%s: %w (not retried: Atoll is stopping)", what, err)
		}
		backoff = min(backoff*2, maxCommitBackoff)
	}
}

const (
	commitBackoff    = 50 * time.Millisecond
	maxCommitBackoff = 5 * time.Second
)

func retryable(err error) bool {
	var ae *atoll.Error
	return !errors.As(err, &ae) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// CommitRetries counts store writes the runner had to retry (a metric, and
// how tests see that a write is being held back).
func (r *Runner) CommitRetries() int64 { return r.commitRetries.Load() }
