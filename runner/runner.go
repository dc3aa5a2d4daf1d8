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
	// Pools runs the jobs of worker pools (execution_pool); nil: a job of
	// a pool other than local fails, saying so.
	Pools Pools

	// requests holds the *work of each request being worked on, by id:
	// the in-process executor's checkouts are the request's (exec.go).
	requests sync.Map
	// sched claims requests and runs them on its workers (scheduler.go);
	// Start wires it.
	sched scheduler
	// exec runs jobs: Executor, or the in-process LocalExecutor; Start
	// wires it.
	exec executor.Executor
	// notifyWake wakes the notification sender (notifications.go).
	notifyWake chan struct{}

	commitRetries atomic.Int64

	tfMu      sync.Mutex
	tfVersion *version.Version // cached once read; errors are not
}

// Receiving marks a webhook as being received until the returned function
// is called. Workers hold off claiming new work meanwhile (briefly): a
// webhook's sender is waiting for the answer, the queue is not.
func (r *Runner) Receiving() func() { return r.sched.receive() }

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
	r.sched.db, r.sched.node, r.sched.logger, r.sched.procs = r.DB, r.Node, r.Logger, r.Procs
	r.sched.parallelism, r.sched.stopTimeout, r.sched.run = r.Parallelism, r.StopTimeout, r.process
	r.sched.init()
	r.exec = r.Executor
	if r.exec == nil {
		r.exec = r.local()
	}

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
	r.sched.start()
	r.startNotifications()
	r.startDriftSchedules()
	r.Wake()
	return nil
}

// Wake tells an idle worker that a request was queued.
func (r *Runner) Wake() { r.sched.Wake() }

// Stop stops taking work, waits up to StopTimeout for running requests, then
// interrupts what is left. Queued requests stay queued for the next start.
func (r *Runner) Stop() { r.sched.Stop() }

// Kill stops the work at once, for a node that lost its lease: no new work
// is claimed, running Terraform is interrupted and every process group
// Terraform and git started is killed, whatever the stop timeout. Nothing
// more is written: the node's database writes are already refused.
func (r *Runner) Kill() { r.sched.Kill() }

func (r *Runner) provider(kind string) (vcs.Provider, error) {
	p, ok := r.Providers[kind]
	if !ok {
		return nil, atoll.Errorf(atoll.EINVALID, "No VCS provider for %q is configured.", kind)
	}
	return p, nil
}
