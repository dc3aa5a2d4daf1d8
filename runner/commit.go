package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// commit runs fn in a write transaction and, while the store fails for a
// reason that may pass (a full disk, an I/O error), retries with backoff
// until it commits or the runner is stopped. Nobody is told what a job did
// before it is committed, so a storage failure delays a report instead of
// making it wrong, and a job or request never stays "running" because one
// write failed. Coded errors (a lock lost, a plan already applied) are
// decisions, not failures, and return at once. fn may run more than once.
func (r *Runner) commit(what string, fn func(*store.Tx) error) error {
	return retry(r, what, func() error { return r.update(context.Background(), fn) })
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
		case <-r.jobCtx.Done():
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

// txStore is the store's transaction entry point. Only the writes not yet
// moved into one store method behind a root interface use it.
type txStore interface {
	Update(ctx context.Context, fn func(*store.Tx) error) error
}

// update runs fn in one write transaction of the store.
func (r *Runner) update(ctx context.Context, fn func(*store.Tx) error) error {
	u, ok := r.DB.(txStore)
	if !ok {
		return fmt.Errorf("runner: store %T has no transactions", r.DB)
	}
	return u.Update(ctx, fn)
}
