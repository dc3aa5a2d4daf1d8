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
	// Starters are the pools whose every job attempt gets a claimant of
	// its own (Kubernetes Jobs), by pool; set before Start.
	Starters map[string]Starter

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
	// secret is the pinning secret of the attempt to start a claimant
	// for (a Starter's pool), until it is started.
	secret string
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
				// A standby's copy is not writable: nothing to do there,
				// and claimants are the active node's to remove.
				if err := d.Store.PruneDispatchResults(ctx); err != nil {
					if ctx.Err() == nil && atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
						d.logger().Warn("prune worker results", "err", err)
					}
					continue
				}
				d.sweep(ctx)
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
	var claimHash []byte
	if d.Starters[pool] != nil {
		w.secret, claimHash = PinnedSecret()
	}
	d.register(w)
	defer d.unregister(w)
	write := context.WithoutCancel(ctx)
	disp, err := d.Store.QueueDispatch(write, &atoll.Dispatch{JobID: w.jobID, Pool: pool, Spec: raw, PlanSHA256: sum, ClaimHash: claimHash})
	if err != nil {
		return executor.Result{}, err
	}
	if !pinnedTo(disp, claimHash) {
		w.secret = "" // queued before (by a node that stopped): not this secret's
	}
	if claimHash == nil && disp.State == atoll.DispatchQueued && disp.Attempt == 1 && disp.ClaimedAt == nil {
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
	st := d.Starters[w.pool]
	var f *follower
	defer func() { f.stop() }()
	// follow starts (or adopts) the claimant of disp's attempt.
	follow := func(disp *atoll.Dispatch) error {
		if f != nil && f.attempt != disp.Attempt && !f.ended {
			// The lost attempt's claimant is refused from now on; a hung
			// one would hold its node's resources until its deadline. One
			// that ended is kept (its log) until its TTL.
			if err := st.Stop(write, w.jobID, f.attempt); err != nil {
				d.logger().Warn("stop lost claimant", "job", w.jobID, "attempt", f.attempt, "err", err)
			}
		}
		f.stop()
		f = nil
		if st == nil {
			return nil
		}
		secret := w.secret
		w.secret = ""
		var err error
		f, err = d.claimant(ctx, w, st, disp, secret)
		return err
	}
	if err := follow(disp); err != nil {
		return executor.Result{}, err
	}
	told := ""
	for {
		switch disp.State {
		case atoll.DispatchDone:
			return decodeResult(disp)
		case atoll.DispatchCanceled:
			return executor.Result{}, atoll.Errorf(atoll.ECONFLICT, "The job's dispatch to pool %s was canceled.", w.pool)
		case atoll.DispatchQueued:
			if st == nil && told != "queued" && !d.hasWorker(w.pool) {
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
			if next.Attempt != disp.Attempt {
				if err := follow(next); err != nil {
					return executor.Result{}, err
				}
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
			if f != nil {
				stopCtx, cancel := context.WithTimeout(write, 30*time.Second)
				if err := st.Stop(stopCtx, w.jobID, f.attempt); err != nil {
					d.logger().Error("stop claimant", "job", w.jobID, "err", err)
				}
				cancel()
			}
			return executor.Result{}, ctx.Err()
		case ev, ok := <-f.events():
			if !ok {
				f.ch = nil // the lease decides from here
				continue
			}
			next, err := d.claimantEvent(ctx, w, f, ev)
			if err != nil {
				return executor.Result{}, err
			}
			if next == nil {
				continue
			}
			if next.Attempt != f.attempt {
				if err := follow(next); err != nil {
					return executor.Result{}, err
				}
			}
			disp = next
			continue
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

// lost handles a claim whose lease ran out (see lostClaim).
func (d *Dispatcher) lost(ctx context.Context, w *waiter, disp *atoll.Dispatch) (*atoll.Dispatch, error) {
	who := fmt.Sprintf("Worker %s (pool %s) stopped reporting and its lease ran out", disp.Worker, w.pool)
	if disp.State == atoll.DispatchLost {
		return nil, d.interrupted(w, disp, who)
	}
	return d.lostClaim(ctx, w, disp, who, func(requeue bool, hash []byte) (*atoll.Dispatch, error) {
		return d.Store.ExpireDispatch(ctx, w.jobID, requeue, hash)
	})
}

// lostClaim ends a claim whose worker is gone (who says how), with end:
// a plan (or import, state rm) that has not been dispatched maxAttempts
// times is queued again (pinned anew in a Starter's pool); anything else
// is interrupted. It returns the dispatch to follow next.
func (d *Dispatcher) lostClaim(ctx context.Context, w *waiter, disp *atoll.Dispatch, who string, end func(requeue bool, claimHash []byte) (*atoll.Dispatch, error)) (*atoll.Dispatch, error) {
	again := w.spec.Job.Kind == atoll.JobPlan && disp.Attempt < maxAttempts
	if again {
		w.events.Write(atoll.StreamAtoll, who+": planning again.")
		if err := w.events.Flush(); err != nil {
			return nil, err
		}
	}
	var hash []byte
	secret := ""
	if again && d.Starters[w.pool] != nil {
		secret, hash = PinnedSecret()
	}
	next, err := end(again, hash)
	if atoll.ErrorCode(err) == atoll.ECONFLICT {
		// Renewed meanwhile (a heartbeat raced the clock), or reported:
		// follow it.
		return d.Store.Dispatch(ctx, w.jobID)
	} else if err != nil {
		return nil, err
	}
	if again {
		w.secret = secret
		if hash == nil {
			d.notify(w.pool)
		}
		return next, nil
	}
	return nil, d.interrupted(w, disp, who)
}

// interrupted is the outcome of a job whose worker was lost for good.
func (d *Dispatcher) interrupted(w *waiter, disp *atoll.Dispatch, who string) error {
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
	return &executor.Interrupted{Message: msg}
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
