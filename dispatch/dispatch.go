// Package dispatch hands jobs to pull-based worker pools: it is the
// executor.Executor of every pool but local, and the control plane's side
// of the worker protocol (atoll.WorkerService) and of its administration
// (atoll.WorkerAdmin).
//
// A job's Run queues a dispatch row (committed and replicated) and waits;
// a worker of the pool claims it under a lease, renews the lease with
// heartbeats, streams its log lines (acknowledged once stored), asks
// before an apply changes anything, and reports its result, which is
// stored before it is acknowledged. Everything a worker is told is in the
// database first, so a node that takes over finds the claim, accepts the
// worker's calls while the lease runs, and its resumed request picks the
// result up (docs/workers.md). A claim whose lease ran out is lost: a
// plan is dispatched once more, an apply is interrupted and never run
// again.
package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
)

// Store is what the dispatcher asks of the database.
type Store interface {
	atoll.DispatchService
	LastLogSeq(ctx context.Context, jobID int64) (int64, error)
}

// Mirrors gives the path of a bare git repository that holds a job's
// commits, fetched with the control plane's own credentials: workers
// fetch the job's repository from it, and from nothing else.
type Mirrors interface {
	Mirror(ctx context.Context, co executor.Checkout) (dir string, err error)
}

// UploadPacker serves git's upload-pack of a repository (package git).
type UploadPacker func(ctx context.Context, dir string, advertise bool, gitProtocol string, in io.Reader, out io.Writer) error

// DefaultLease is how long a claim lasts without a heartbeat: long enough
// for a failover of the control plane (RTO ~5 s) and a worker's retries,
// short enough that a dead worker's plan runs again soon.
const DefaultLease = 30 * time.Second

// maxAttempts is how many times a plan is dispatched: once more after its
// worker was lost.
const maxAttempts = 2

// Dispatcher dispatches the jobs of worker pools.
type Dispatcher struct {
	Store   Store
	Mirrors Mirrors
	// ServeGit serves the mirrors to workers' git (git.UploadPack).
	ServeGit UploadPacker
	// Lease is a claim's lease (zero: DefaultLease).
	Lease  time.Duration
	Logger *slog.Logger
	// Version is this build's version, shown to workers refused for
	// speaking another protocol.
	Version string

	mu      sync.Mutex
	waiters map[int64]*waiter
	wake    map[string]chan struct{} // by pool: closed when a dispatch is queued (or a token revoked)
	seen    map[seenKey]*atoll.WorkerSeen
	polling map[string]int // by pool: claims waiting now
}

type seenKey struct {
	token int64
	name  string
}

// waiter is a job whose Run waits in this process: the worker's calls
// reach the runner's events through it.
type waiter struct {
	jobID  int64
	pool   string
	spec   executor.Spec // without the plan
	plan   []byte        // an apply's plan file
	events executor.Events
	done   chan struct{} // closed once the result is stored
	once   sync.Once
	logMu  sync.Mutex // one batch of lines at a time
	// waited is set once the pull request was told the job waits for a
	// worker: its claim then says the job runs.
	waited atomic.Bool
}

func (w *waiter) finished() { w.once.Do(func() { close(w.done) }) }

func (d *Dispatcher) lease() time.Duration {
	if d.Lease > 0 {
		return d.Lease
	}
	return DefaultLease
}

func (d *Dispatcher) logger() *slog.Logger {
	if d.Logger == nil {
		return slog.Default()
	}
	return d.Logger
}

// Executor is the executor of pool.
func (d *Dispatcher) Executor(pool string) executor.Executor { return poolExecutor{d, pool} }

type poolExecutor struct {
	d    *Dispatcher
	pool string
}

func (p poolExecutor) Run(ctx context.Context, spec executor.Spec, events executor.Events) (executor.Result, error) {
	return p.d.run(ctx, p.pool, spec, events)
}

// Start prunes, while ctx lasts, the results kept for jobs that ended.
func (d *Dispatcher) Start(ctx context.Context) {
	go func() {
		t := time.NewTicker(time.Minute)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				// A standby's copy is not writable: nothing to do there.
				if err := d.Store.PruneDispatchResults(ctx); err != nil && ctx.Err() == nil && atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
					d.logger().Warn("prune worker results", "err", err)
				}
			}
		}
	}()
}

func (d *Dispatcher) register(w *waiter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiters == nil {
		d.waiters = map[int64]*waiter{}
	}
	d.waiters[w.jobID] = w
}

func (d *Dispatcher) unregister(w *waiter) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.waiters[w.jobID] == w {
		delete(d.waiters, w.jobID)
	}
}

func (d *Dispatcher) waiter(jobID int64) (*waiter, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if w, ok := d.waiters[jobID]; ok {
		return w, nil
	}
	// After a failover the job's request is resumed shortly: the worker
	// retries.
	return nil, atoll.Errorf(atoll.EUNAVAILABLE, "Job %d is not being followed on this node yet: retry.", jobID)
}

// wakeup returns the channel closed at pool's next dispatch.
func (d *Dispatcher) wakeup(pool string) <-chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.wake == nil {
		d.wake = map[string]chan struct{}{}
	}
	ch, ok := d.wake[pool]
	if !ok {
		ch = make(chan struct{})
		d.wake[pool] = ch
	}
	return ch
}

// notify wakes the claims waiting on pool ("" wakes every pool's).
func (d *Dispatcher) notify(pool string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for p, ch := range d.wake {
		if pool == "" || p == pool {
			close(ch)
			delete(d.wake, p)
		}
	}
}

// hash is the stored form of a secret (atoll.HashSecret).
func hash(secret string) []byte { return atoll.HashSecret(secret) }

// newSecret is a random secret (atoll.NewSecret) with prefix: the prefix
// tells what a secret found in a log or a paste is (a worker token, a job
// token, a pinning secret), and is hashed with it.
func newSecret(prefix string) string {
	s, _ := atoll.NewSecret()
	return prefix + s
}

// run dispatches one job to pool and waits for its result.
func (d *Dispatcher) run(ctx context.Context, pool string, spec executor.Spec, events executor.Events) (executor.Result, error) {
	w := &waiter{jobID: spec.Job.ID, pool: pool, plan: spec.Plan, events: events, done: make(chan struct{})}
	spec.Plan = nil
	// This node's credential helper grant (its socket and nonce) means
	// nothing elsewhere, and is not to be stored or sent: a worker gets
	// its checkouts through the job's token.
	spec.Terraform.RunEnv = nil
	w.spec = spec
	raw, err := json.Marshal(spec)
	if err != nil {
		return executor.Result{}, fmt.Errorf("dispatch job %d: %w", w.jobID, err)
	}
	sum := ""
	if len(w.plan) > 0 {
		sum = atoll.PlanSHA256(w.plan)
	}
	d.register(w)
	defer d.unregister(w)
	write := context.WithoutCancel(ctx)
	disp, err := d.Store.QueueDispatch(write, &atoll.Dispatch{JobID: w.jobID, Pool: pool, Spec: raw, PlanSHA256: sum})
	if err != nil {
		return executor.Result{}, err
	}
	if disp.State == atoll.DispatchQueued && disp.Attempt == 1 && disp.ClaimedAt == nil {
		d.notify(pool)
	}
	return d.wait(ctx, w, disp)
}

// wait follows w's dispatch until it ends: a result, a cancel, or a lost
// worker (a plan is dispatched once more, an apply is interrupted).
func (d *Dispatcher) wait(ctx context.Context, w *waiter, disp *atoll.Dispatch) (executor.Result, error) {
	tick := time.NewTicker(min(d.lease()/10, time.Second))
	defer tick.Stop()
	write := context.WithoutCancel(ctx)
	told := ""
	for {
		switch disp.State {
		case atoll.DispatchDone:
			return decodeResult(disp)
		case atoll.DispatchCanceled:
			return executor.Result{}, atoll.Errorf(atoll.ECONFLICT, "The job's dispatch to pool %s was canceled.", w.pool)
		case atoll.DispatchQueued:
			if told != "queued" && !d.hasWorker(w.pool) {
				told = "queued"
				msg := fmt.Sprintf("Waiting for a worker in pool %s: none is connected.", w.pool)
				w.events.Write(atoll.StreamAtoll, msg)
				w.events.Waiting(ctx, "Waiting for a worker in pool "+w.pool+".")
				w.waited.Store(true)
			}
		case atoll.DispatchClaimed:
			if disp.Live(time.Now()) {
				break
			}
			fallthrough
		case atoll.DispatchLost:
			next, err := d.lost(write, w, disp)
			if err != nil {
				return executor.Result{}, err
			}
			disp, told = next, ""
			continue
		}
		select {
		case <-ctx.Done():
			if errors.Is(context.Cause(ctx), executor.ErrStopping) {
				// The worker goes on; the next active follows it.
				return executor.Result{}, fmt.Errorf("job %d left to worker %s: %w", w.jobID, disp.Worker, executor.ErrDetached)
			}
			if err := d.Store.CancelDispatch(write, w.jobID); err != nil {
				d.logger().Error("cancel dispatch", "job", w.jobID, "err", err)
			}
			return executor.Result{}, ctx.Err()
		case <-w.done:
		case <-tick.C:
		}
		next, err := d.Store.Dispatch(write, w.jobID)
		if err != nil {
			d.logger().Warn("read dispatch", "job", w.jobID, "err", err)
			continue
		}
		disp = next
	}
}

// lost handles a claim whose lease ran out: a plan (or import, state rm)
// that has not been dispatched maxAttempts times is queued again; anything
// else is interrupted. It returns the dispatch queued again.
func (d *Dispatcher) lost(ctx context.Context, w *waiter, disp *atoll.Dispatch) (*atoll.Dispatch, error) {
	again := w.spec.Job.Kind == atoll.JobPlan && disp.Attempt < maxAttempts
	who := fmt.Sprintf("Worker %s (pool %s) stopped reporting and its lease ran out", disp.Worker, w.pool)
	if disp.State == atoll.DispatchLost {
		again = false
	}
	if again {
		w.events.Write(atoll.StreamAtoll, who+": planning again.")
		if err := w.events.Flush(); err != nil {
			return nil, err
		}
	}
	if disp.State == atoll.DispatchClaimed {
		next, err := d.Store.ExpireDispatch(ctx, w.jobID, again)
		if atoll.ErrorCode(err) == atoll.ECONFLICT {
			// Renewed meanwhile (a heartbeat raced the clock): follow it.
			return d.Store.Dispatch(ctx, w.jobID)
		} else if err != nil {
			return nil, err
		}
		if again {
			d.notify(w.pool)
			return next, nil
		}
	}
	d.logger().Warn("worker lost", "job", w.jobID, "worker", disp.Worker, "pool", w.pool, "kind", w.spec.Job.Kind)
	msg := who + "."
	switch {
	case w.spec.Job.Kind == atoll.JobPlan:
		msg += " It was planned twice without a result: not planned again. Run plan again."
	case disp.Applying:
		msg += " The " + w.spec.Job.Kind + " may have been partly done and is not retried: check the state, then plan again."
	default:
		msg += " Nothing was changed yet, and it is not retried: run it again."
	}
	return nil, &executor.Interrupted{Message: msg}
}

// decodeResult is the job's result as its worker reported it.
func decodeResult(disp *atoll.Dispatch) (executor.Result, error) {
	var wr atoll.WorkerResult
	if err := json.Unmarshal(disp.Result, &wr); err != nil {
		return executor.Result{}, fmt.Errorf("decode result of job %d: %w", disp.JobID, err)
	}
	var res executor.Result
	if len(wr.Result) > 0 && string(wr.Result) != "null" {
		if err := json.Unmarshal(wr.Result, &res); err != nil {
			return executor.Result{}, fmt.Errorf("decode result of job %d: %w", disp.JobID, err)
		}
	}
	if wr.Error != nil {
		return res, wr.Error
	}
	return res, nil
}
