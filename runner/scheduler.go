package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/runner/executor"
)

// scheduler decides when requests run. Parallelism workers claim queued
// requests from the store, oldest first (the store keeps a pull request's
// requests in order), yielding briefly while webhooks are being received,
// and hand each to run, which works it to its end; within a request, it
// orders the jobs (runOrdered: groups, dependencies, parallelism, one job
// per dir and workspace at a time). It knows which requests
// this process holds, so that a sweep requeues only orphans (orphans.go),
// and each running request's cancel function, so that a cancel comment
// can interrupt a plan (cancel.go). It stops (waiting for running requests
// up to stopTimeout) and kills the work. It depends on the store's claim
// and requeue alone; what a request does is run's (the runner's).
type scheduler struct {
	db          schedulerStore
	node        string
	parallelism int
	stopTimeout time.Duration
	procs       *procs.Registry // killed by Kill; nil kills none
	logger      *slog.Logger
	run         func(*atoll.Request)

	running running // requests being worked on, so cancel can interrupt a plan (cancel.go)
	wake    chan struct{}
	stop    chan struct{}
	workers sync.WaitGroup
	// jobCtx is cancelled when Stop's grace period ends; running Terraform
	// processes then get SIGINT and their jobs are recorded interrupted.
	jobCtx    context.Context
	cancelJob context.CancelFunc
	stopOnce  sync.Once
	receiving atomic.Int64 // webhooks being received right now

	// claimMu orders claims (read-locked: they run at once) with the
	// orphan sweep (locked) (orphans.go): a request is in live from the
	// moment its claim returns until its worker let it go, so the sweep
	// never requeues a request a worker holds.
	claimMu sync.RWMutex
	liveMu  sync.Mutex
	live    map[int64]bool
	// orphans says a write whose outcome is unknown (a failed claim or
	// finish) may have left a request running under this node with no
	// worker: the next worker to look sweeps.
	orphans atomic.Bool
}

// schedulerStore is what the scheduler asks of the store.
type schedulerStore interface {
	ClaimRequest(ctx context.Context, node string) (*atoll.Request, error)
	RequeueOrphans(ctx context.Context, node string, live []int64) (int, error)
}

// receive marks a webhook as being received until the returned function
// is called.
func (s *scheduler) receive() func() {
	s.receiving.Add(1)
	return func() { s.receiving.Add(-1) }
}

// yieldToIntake waits, at most maxYield, while webhooks are being received.
func (s *scheduler) yieldToIntake() {
	for deadline := time.Now().Add(maxYield); s.receiving.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

const maxYield = 50 * time.Millisecond

// init makes the channels and the jobs' context; start starts the workers.
func (s *scheduler) init() {
	if s.parallelism <= 0 {
		s.parallelism = 2
	}
	s.wake = make(chan struct{}, 1)
	s.stop = make(chan struct{})
	jobCtx, cancel := context.WithCancelCause(context.Background())
	// The cause tells an executor whose runs live on elsewhere (a worker
	// pool) to leave them to the next active rather than cancel them.
	s.jobCtx, s.cancelJob = jobCtx, func() { cancel(executor.ErrStopping) }
}

func (s *scheduler) start() {
	for i := 0; i < s.parallelism; i++ {
		s.workers.Add(1)
		go s.work()
	}
}

// Wake tells an idle worker that a request was queued.
func (s *scheduler) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Stop stops taking work, waits up to stopTimeout for running requests,
// then interrupts what is left.
func (s *scheduler) Stop() {
	s.stopOnce.Do(func() {
		if s.stop == nil {
			return // never started: a start-up error
		}
		close(s.stop)
		done := make(chan struct{})
		go func() { s.workers.Wait(); close(done) }()
		timeout := s.stopTimeout
		if timeout <= 0 {
			timeout = time.Minute
		}
		select {
		case <-done:
		case <-time.After(timeout):
			s.logger.Warn("stop timeout: interrupting running jobs")
			s.cancelJob()
			<-done
		}
		s.cancelJob()
	})
}

// Kill stops the work at once: running Terraform is interrupted and every
// process group Terraform and git started is killed.
func (s *scheduler) Kill() {
	if s.stop == nil {
		return
	}
	s.cancelJob()
	if s.procs != nil {
		if _, err := s.procs.KillAll(); err != nil {
			s.logger.Error("kill running processes", "err", err)
		}
	}
	s.Stop()
}

func (s *scheduler) stopping() bool {
	select {
	case <-s.stop:
		return true
	default:
		return false
	}
}

func (s *scheduler) work() { s.workUntil(nil) }

// park lends the slot of a request whose job waits on a worker pool (for
// a worker, then for its result): one more worker claims requests until
// unpark, so that jobs on pools do not hold --parallelism, and a pool
// with no worker does not stop the other repositories' work. The
// borrowed worker ends after the request it holds at unpark.
func (s *scheduler) park() (unpark func()) {
	if s.stop == nil {
		return func() {} // not started: a test's runner
	}
	done := make(chan struct{})
	s.workers.Add(1)
	go s.workUntil(done)
	var once sync.Once
	return func() { once.Do(func() { close(done) }) }
}

// workUntil claims and runs requests until the work stops or done (nil:
// never) is closed.
func (s *scheduler) workUntil(done <-chan struct{}) {
	defer s.workers.Done()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	for !s.stopping() && !closed(done) {
		s.yieldToIntake()
		if s.orphans.Load() {
			s.requeueOrphans()
		}
		req, err := s.claim()
		if err != nil {
			s.logger.Error("claim request", "err", err)
		}
		if req == nil {
			select {
			case <-s.wake:
			case <-poll.C:
			case <-s.stop:
			case <-done:
			}
			continue
		}
		// Another request may be waiting behind this one; let a peer look.
		s.Wake()
		s.run(req)
	}
}

// runOrdered runs a request's queued jobs in their order (see runJobs):
// group by group (execution_order_group, lowest first); in a group, at most
// parallelism at once when their spec allows; a job after the jobs it
// depends on, and not when one of them failed; after a group with a
// failure, with abort_on_execution_order_fail, not the later groups'. Jobs
// of one dir and workspace never run at once. run runs job i, skip records
// it not run for reason; both leave how it went in outcomes[i], which the
// order reads. A job that cannot start because the work is stopping (or its
// request was canceled) is left queued, marked notStarted.
func (s *scheduler) runOrdered(ctx context.Context, jobs []*atoll.Job, outcomes []outcome, run func(i int), skip func(i int, reason string)) {
	done := make([]chan struct{}, len(jobs))
	byName := map[string]int{}
	// Jobs of one dir and workspace share a checkout and its .terraform
	// (the backend an init configured): two projects there, with their own
	// backends, must never run at once even under parallel_plan.
	dirLocks := map[string]*sync.Mutex{}
	for i, j := range jobs {
		dirLocks[j.Dir+"\x00"+j.Workspace] = new(sync.Mutex)
		if j.Project != "" {
			byName[j.Project] = i
		}
		done[i] = make(chan struct{})
		if !runnable(j) {
			close(done[i])
		}
	}
	abort := ""
	for _, group := range orderGroups(jobs) {
		sem := make(chan struct{}, max(s.parallelism, 1))
		var wg sync.WaitGroup
		for _, i := range group {
			j, o := jobs[i], &outcomes[i]
			if !runnable(j) {
				continue
			}
			runOne := func() {
				defer close(done[i])
				if abort != "" && ctx.Err() == nil {
					skip(i, abort)
					return
				}
				// Dependencies first: a job holds no dir lock or
				// slot another one it waits for needs.
				reason, stopping := blockedBy(j, jobs, outcomes, done, byName)
				if reason != "" && ctx.Err() == nil {
					skip(i, reason)
					return
				}
				dirLock := dirLocks[j.Dir+"\x00"+j.Workspace]
				dirLock.Lock()
				defer dirLock.Unlock()
				if stopping || ctx.Err() != nil {
					o.notStarted = true
					o.res.Error = "Not started: Atoll is stopping. This job runs when Atoll starts again."
					if _, ok := canceledCause(ctx); ok && s.jobCtx.Err() == nil {
						o.res.Error = "Not started: canceled by a cancel comment."
					}
					return
				}
				run(i)
			}
			if !j.Spec.Parallel || abort != "" {
				runOne()
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func() { defer wg.Done(); defer func() { <-sem }(); runOne() }()
		}
		wg.Wait()
		if abort == "" && jobs[group[0]].Spec.AbortOnOrderFail {
			for _, i := range group {
				if outcomes[i].failed() {
					abort = fmt.Sprintf("Not run: a project of execution_order_group %d failed, and abort_on_execution_order_fail is set.", jobs[i].Spec.Group)
					break
				}
			}
		}
	}
}

// runnable reports whether a request's job is to be run: queued, or
// running under a worker of a pool that kept it across a restart or a
// failover (store.RequeueRunning leaves only those running), whose report
// the runner follows again.
func runnable(j *atoll.Job) bool {
	return j.State == atoll.JobQueued || j.State == atoll.JobRunning
}

// closed reports whether ch is closed (a nil ch never is).
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
