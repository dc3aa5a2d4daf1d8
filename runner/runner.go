// Package runner does Atoll's work: it turns webhooks and comments into
// durable requests, and its workers turn requests into plan and apply jobs
// that run git and Terraform, store plans and logs, and report back to the
// pull request.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/gitcred"
	"github.com/atollhq/atoll/metrics"
	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/runner/notify"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/tfinstall"
	"github.com/atollhq/atoll/vcs"
)

// DefaultStatusName prefixes commit status contexts, as Atlantis's default
// does, so branch protection rules written for Atlantis keep working.
const DefaultStatusName = "atlantis"

// Runner owns the queue and the workers. Its settings are Config; the
// other exported fields are what it works with.
type Runner struct {
	Config
	DB        atoll.RunnerStore
	Providers map[string]vcs.Provider // by atoll.VCS* kind
	Workdirs  *git.Workdirs
	Terraform terraform.Runner
	Parser    command.Parser
	Markdown  markdown.Renderer
	Hub       *Hub
	// Metrics, if set, counts jobs and commands under Atlantis's metric
	// names (this process's only).
	Metrics *metrics.Atlantis
	Logger  *slog.Logger
	// Procs is where Terraform and git record their process groups (the
	// registry of Terraform.Procs and Workdirs.Procs). Start kills what an
	// earlier process left running.
	Procs *procs.Registry
	// Credentials serves the host's git credentials to Terraform's runs
	// (private module sources over https); nil serves none.
	Credentials *gitcred.Server
	// TFInstall holds the Terraform and OpenTofu versions projects ask for
	// with terraform_version (--tf-bin-dir, --tf-download); nil runs
	// Terraform.Bin for every project (see tfversion.go).
	TFInstall *tfinstall.Installer
	// Policies runs conftest policy checks after plans
	// (--enable-policy-checks); nil runs none.
	Policies *PolicyChecks
	// Notifications sends apply notifications (--webhooks-config) from the
	// store's outbox while the runner runs; nil sends none.
	Notifications *notify.Outbox
	// Executor runs plan jobs (see package executor); nil runs them in
	// this process (LocalExecutor).
	Executor executor.Executor

	// requests holds the *work of each request being worked on, by id:
	// the in-process executor's checkouts are the request's (exec.go).
	requests sync.Map
	running  running // requests being worked on, so cancel can interrupt a plan (cancel.go)
	wake     chan struct{}
	// notifyWake wakes the notification sender (notifications.go).
	notifyWake chan struct{}
	stop       chan struct{}
	workers    sync.WaitGroup
	// jobCtx is cancelled when Stop's grace period ends; running Terraform
	// processes then get SIGINT and their jobs are recorded interrupted.
	jobCtx    context.Context
	cancelJob context.CancelFunc
	stopOnce  sync.Once
	intake    atomic.Int64 // webhooks being received right now

	commitRetries atomic.Int64

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

	tfMu      sync.Mutex
	tfVersion *version.Version // cached once read; errors are not
}

// Receiving marks a webhook as being received until the returned function
// is called. Workers hold off claiming new work meanwhile (briefly): a
// webhook's sender is waiting for the answer, the queue is not.
func (r *Runner) Receiving() func() {
	r.intake.Add(1)
	return func() { r.intake.Add(-1) }
}

// yieldToIntake waits, at most maxYield, while webhooks are being received.
func (r *Runner) yieldToIntake() {
	for deadline := time.Now().Add(maxYield); r.intake.Load() > 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

const maxYield = 50 * time.Millisecond

// Start recovers from a previous process (kills the Terraform and git
// processes it left running, requeues its requests, marks its running jobs
// interrupted and tells their pull requests) and starts the workers.
func (r *Runner) Start(ctx context.Context) error {
	if r.Parallelism <= 0 {
		r.Parallelism = 2
	}
	if r.Logger == nil {
		r.Logger = slog.Default()
	}
	if r.Hub == nil {
		r.Hub = NewHub()
	}
	r.wake = make(chan struct{}, 1)
	r.stop = make(chan struct{})
	r.jobCtx, r.cancelJob = context.WithCancel(context.Background())

	// Before any checkout is reused: an orphan of a crashed process would
	// run beside the new jobs in the same directory.
	killed, err := r.Procs.KillAll()
	if err != nil {
		return fmt.Errorf("processes left by an earlier run: %w", err)
	}
	if killed > 0 {
		r.Logger.Warn("killed process groups left running by an earlier run", "groups", killed)
	}
	interrupted, err := r.DB.RequeueRunning(ctx)
	if err != nil {
		return err
	}
	for _, j := range interrupted {
		r.Logger.Warn("job interrupted by a restart", "job", j.ID, "kind", j.Kind, "repo", j.Repo, "pull", j.Pull)
		r.reportInterrupted(ctx, j)
	}
	for i := 0; i < r.Parallelism; i++ {
		r.workers.Add(1)
		go r.work()
	}
	r.startNotifications()
	r.Wake()
	return nil
}

// Wake tells an idle worker that a request was queued.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Stop stops taking work, waits up to StopTimeout for running requests, then
// interrupts what is left. Queued requests stay queued for the next start.
func (r *Runner) Stop() {
	r.stopOnce.Do(func() {
		if r.stop == nil {
			return // never started: a start-up error
		}
		close(r.stop)
		done := make(chan struct{})
		go func() { r.workers.Wait(); close(done) }()
		timeout := r.StopTimeout
		if timeout <= 0 {
			timeout = time.Minute
		}
		select {
		case <-done:
		case <-time.After(timeout):
			r.Logger.Warn("stop timeout: interrupting running jobs")
			r.cancelJob()
			<-done
		}
		r.cancelJob()
	})
}

// Kill stops the work at once, for a node that lost its lease: no new work
// is claimed, running Terraform is interrupted and every process group
// Terraform and git started is killed, whatever the stop timeout. Nothing
// more is written: the node's database writes are already refused.
func (r *Runner) Kill() {
	if r.stop == nil {
		return
	}
	r.cancelJob()
	if r.Procs != nil {
		if _, err := r.Procs.KillAll(); err != nil {
			r.Logger.Error("kill running processes", "err", err)
		}
	}
	r.Stop()
}

func (r *Runner) stopping() bool {
	select {
	case <-r.stop:
		return true
	default:
		return false
	}
}

func (r *Runner) work() {
	defer r.workers.Done()
	poll := time.NewTicker(time.Second)
	defer poll.Stop()
	for !r.stopping() {
		r.yieldToIntake()
		if r.orphans.Load() {
			r.requeueOrphans()
		}
		req, err := r.claim()
		if err != nil {
			r.Logger.Error("claim request", "err", err)
		}
		if req == nil {
			select {
			case <-r.wake:
			case <-poll.C:
			case <-r.stop:
			}
			continue
		}
		// Another request may be waiting behind this one; let a peer look.
		r.Wake()
		r.process(req)
	}
}

func (r *Runner) provider(kind string) (vcs.Provider, error) {
	p, ok := r.Providers[kind]
	if !ok {
		return nil, atoll.Errorf(atoll.EINVALID, "No VCS provider for %q is configured.", kind)
	}
	return p, nil
}
