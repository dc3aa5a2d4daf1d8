package runner

import (
	"context"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/vcs"
)

// executor is what runs jobs: as Start wired it, Executor when set, else
// this process (LocalExecutor).
func (r *Runner) executor() executor.Executor {
	if r.exec != nil {
		return r.exec
	}
	if r.Executor != nil {
		return r.Executor
	}
	return r.local() // not started: a test's runner
}

// Pools runs the jobs of worker pools: its Executor(pool) is the
// executor of every pool but local (package dispatch).
type Pools interface {
	Executor(pool string) executor.Executor
}

// executorFor is what runs job j: its pool's executor, or the runner's
// own for the local pool.
func (r *Runner) executorFor(j *atoll.Job) executor.Executor {
	if !remote(j) {
		return r.executor()
	}
	if r.Pools == nil {
		return noPools{}
	}
	return parked{r.Pools.Executor(j.Spec.Pool), &r.sched}
}

// parked runs a worker pool's job with its request's slot lent to the
// scheduler meanwhile (scheduler.park).
type parked struct {
	executor.Executor
	sched *scheduler
}

func (p parked) Run(ctx context.Context, spec executor.Spec, events executor.Events) (executor.Result, error) {
	unpark := p.sched.park()
	defer unpark()
	return p.Executor.Run(ctx, spec, events)
}

// remote reports whether j runs in a worker pool.
func remote(j *atoll.Job) bool { return j.Spec.Pool != "" && j.Spec.Pool != atoll.PoolLocal }

// noPools refuses the jobs of a pool when no dispatcher is configured.
type noPools struct{}

func (noPools) Run(ctx context.Context, spec executor.Spec, _ executor.Events) (executor.Result, error) {
	return executor.Result{}, atoll.Errorf(atoll.EINVALID, "This job's execution pool %q is served by workers, and this server dispatches to none.", spec.Job.Spec.Pool)
}

// events is what the executor of job j of w tells the runner through.
func (r *Runner) events(w *work, j *atoll.Job, sink *logSink, applying func(context.Context) error) jobEvents {
	return jobEvents{logSink: sink, applying: applying, waiting: func(ctx context.Context, desc string) {
		r.reporter().status(ctx, w, j.HeadSHA, j.Kind, projectLabel(j.Dir, j.Workspace, j.Project), vcs.StatusPending, desc, r.reporter().jobURL(j.ID))
	}}
}

// Mirror is the bare mirror of the repository of a request this runner
// works on, holding the checkout's commit: what the workers of its jobs
// fetch from (package dispatch), with this server's credentials.
func (r *Runner) Mirror(ctx context.Context, co executor.Checkout) (string, error) {
	v, ok := r.requests.Load(co.RequestID)
	if !ok {
		return "", atoll.Errorf(atoll.EUNAVAILABLE, "Request %d is not being worked on by this process: retry.", co.RequestID)
	}
	w := v.(*work)
	remote, err := cloneRemote(ctx, w)
	if err != nil {
		return "", err
	}
	dir, err := r.Workdirs.Mirror(ctx, git.Spec{Key: workdirKey(w.repo), Remote: remote, Pull: co.Pull, Workspace: co.Workspace,
		HeadSHA: co.HeadSHA, HeadRef: co.HeadRef, BaseRef: co.MergeBase, ExtraRefs: co.ExtraRefs})
	if err != nil {
		w.log.Error("mirror for a worker", "err", err)
		return "", atoll.Errorf(atoll.EINTERNAL, "Fetching %s at %s failed.", w.repo.FullName(), short(co.HeadSHA))
	}
	return dir, nil
}

// local is the in-process executor over the runner's Terraform, work dirs
// and policy checks.
func (r *Runner) local() *LocalExecutor {
	return &LocalExecutor{Terraform: r.Terraform, Checkouts: requestCheckouts{r}, Policies: r.Policies,
		Version: r.TerraformVersion, Path: r.terraformPath, Logger: r.Logger, DeferShow: true}
}

// execSpec is job j of w as an executor is given it. The job's binary is
// the one selected for it (selectTerraform), if any.
func (r *Runner) execSpec(w *work, j *atoll.Job) executor.Spec {
	reqID := j.RequestID
	if w.req != nil {
		reqID = w.req.ID
	}
	spec := executor.Spec{Job: specJob(j),
		Checkout: executor.Checkout{RequestID: reqID, VCS: w.repo.VCS, Host: w.repo.Host, Owner: w.repo.Owner, Name: w.repo.Name,
			Pull: w.pull.Number, Workspace: j.Workspace, HeadSHA: j.HeadSHA, HeadRef: w.pull.HeadRef},
		Terraform: executor.Terraform{Env: j.Spec.Env, RunEnv: w.credEnv, Distribution: r.distribution(j)},
		PullEnv:   pullEnv(w, j.HeadSHA, j.User, j.Spec.ExtraArgs),
	}
	if b, ok := w.terraformBinary(j.ID); ok {
		spec.Terraform.Bin = b.Path
		if b.Version != nil {
			spec.Terraform.Version = b.Version.String()
		}
	}
	if w.vcs != nil {
		spec.Checkout.ExtraRefs = w.vcs.PullRefs(w.pull.Number)
	}
	if r.Workdirs != nil && r.Workdirs.Strategy == git.StrategyMerge {
		spec.Checkout.MergeBase = w.pull.BaseRef
	}
	if j.Kind == atoll.JobPlan && r.policiesOn(w, j) {
		spec.PolicyCheck = true
	}
	spec.CustomPolicyCheck = r.ServerConfig != nil && r.ServerConfig.CustomPolicyCheckFor(serverRepoID(w.repo))
	if j.Spec.CustomPolicyCheck != nil {
		spec.CustomPolicyCheck = *j.Spec.CustomPolicyCheck
	}
	return spec
}

// execution is job j's in-process execution, as LocalExecutor would run
// it for w, with the binary selected for it (the steps' tests use it).
func (r *Runner) execution(w *work, j *atoll.Job, sink *logSink) *execution {
	x := r.local().execution(r.execSpec(w, j), j, sink)
	x.log = w.log
	return x
}

// requestCheckouts serves the in-process executor the checkouts of the
// requests this runner works on: a request's jobs share them.
type requestCheckouts struct{ r *Runner }

func (c requestCheckouts) Checkout(ctx context.Context, co executor.Checkout) (string, error) {
	w, ok := c.r.requests.Load(co.RequestID)
	if !ok {
		return "", atoll.Errorf(atoll.EINTERNAL, "Request %d is not being worked on by this process.", co.RequestID)
	}
	return c.r.checkout(ctx, w.(*work), co.Workspace, co.HeadSHA)
}

// jobEvents is what an executor tells the runner while a job runs: its log
// lines (the job's sink) and, for an apply, the moment before Terraform
// changes anything.
type jobEvents struct {
	*logSink
	applying func(context.Context) error
	waiting  func(ctx context.Context, desc string)
}

func (e jobEvents) Applying(ctx context.Context) error {
	if e.applying == nil {
		return nil
	}
	return e.applying(ctx)
}

// Waiting shows desc as the job's pending commit status.
func (e jobEvents) Waiting(ctx context.Context, desc string) {
	if e.waiting != nil {
		e.waiting(ctx, desc)
	}
}
