package runner

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/vcs"
)

// jobFunc does one job's work. On success it must itself record the job as
// succeeded (in the same commit as what the job produced, after flushing the
// job's log); on error runJob records the failure.
type jobFunc func(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *atoll.ProjectResult) error

// outcome is one job's part of a request's report.
type outcome struct {
	job *atoll.Job
	res atoll.ProjectResult
	// final is set once the job's final state is committed: only then may
	// the pull request be told how it ended.
	final bool
	// notStarted marks a job left queued because Atoll is stopping.
	notStarted bool
	// resumed marks a job that ended before this run of its request (on an
	// earlier process or the previous active node) and was not told: its
	// project's commit status may never have been sent either.
	resumed bool
}

// runJobs runs a request's queued jobs, in the scheduler's order
// (runOrdered), and returns one outcome per job in order. Jobs run group
// by group (execution_order_group, lowest first); in
// a group, in parallel when their spec allows, and a job waits for the
// request's jobs it depends on and is not run when one of them failed.
// After a group with a failure, abort_on_execution_order_fail leaves the
// later groups' jobs not run. Jobs that already ended (a resumed request)
// are reported from the store and not run again; their states count as
// before, so a resumed request keeps the order.
func (r *Runner) runJobs(ctx context.Context, w *work, jobs []*atoll.Job, fn jobFunc) []outcome {
	revoke := r.grantCredentials(ctx, w)
	defer revoke()
	outcomes := make([]outcome, len(jobs))
	for i, j := range jobs {
		outcomes[i] = storedOutcome(ctx, r, j)
		outcomes[i].res.LockURL = r.reporter().lockURL(w, j)
	}
	r.sched.runOrdered(ctx, jobs, outcomes,
		func(i int) { r.runJob(ctx, w, jobs[i], fn, &outcomes[i]) },
		func(i int, reason string) { r.skipJob(ctx, w, jobs[i], &outcomes[i], reason) })
	return outcomes
}

// storedOutcome is a job's outcome as far as the store knows: for a job
// that ended in an earlier run of its request, how it ended (told already,
// unless the report was lost).
func storedOutcome(ctx context.Context, r *Runner, j *atoll.Job) outcome {
	o := outcome{job: j, res: atoll.ProjectResult{Dir: j.Dir, Workspace: j.Workspace, Project: j.Project, Command: j.Kind, JobURL: r.reporter().jobURL(j.ID)}}
	if j.State == atoll.JobQueued {
		return o
	}
	o.final = j.Final()
	o.resumed = o.final && !j.Reported
	o.res.Error, o.res.Summary = j.Error, j.Summary
	if j.State == atoll.JobSucceeded {
		o.res.Error = ""
	} else if o.res.Error == "" {
		o.res.Error = title(j.Kind) + " " + j.State + "."
	}
	if j.Kind == atoll.JobPlan && j.State == atoll.JobSucceeded {
		// The resumed request's comment tells the plan's policy results
		// as the first run would have: a failed set is never left out.
		checks, err := r.DB.JobPolicyChecks(context.WithoutCancel(ctx), j.ID)
		if err != nil {
			o.res.Error = "Planned, but its policy check results could not be read: " + atoll.ErrorMessage(err)
		}
		o.res.Policies = checks
	}
	return o
}

// runJob runs one job and records how it ended. The job's commit status and
// report follow only what is committed: when the final state cannot be
// stored before Atoll stops, nothing is told, and the next start reports the
// job interrupted.
func (r *Runner) runJob(ctx context.Context, w *work, j *atoll.Job, fn jobFunc, o *outcome) {
	res := &o.res
	log := w.log.With("job", j.ID, "job_kind", j.Kind, "dir", j.Dir, "workspace", j.Workspace)
	if j.State == atoll.JobRunning {
		// Held by a worker across a restart or failover: its run goes on
		// there, and this one follows it (no second start).
		log.Info("following a job a worker holds")
	} else if err := r.commit("start job", func(ctx context.Context) error { return r.DB.StartJob(ctx, j.ID) }); err != nil {
		log.Error("start job", "err", err)
		o.notStarted = true
		res.Error = "Not started: " + atoll.ErrorMessage(err)
		if atoll.ErrorCode(err) == atoll.EUNAVAILABLE {
			// Committed on this disk but not replicated: the row may say
			// running while nothing runs it, and would until the next
			// start of a node. It is recorded as not run instead (a plan
			// gives back its lock), told and counted as such. Any other
			// error left the job queued (a stop: the next start runs it)
			// or is not this worker's (a conflict).
			o.notStarted = false
			r.skipJob(ctx, w, j, o, res.Error)
		}
		return
	}
	label := projectLabel(j.Dir, j.Workspace, j.Project)
	r.reporter().status(ctx, w, j.HeadSHA, j.Kind, label, vcs.StatusPending, title(j.Kind)+" in progress...", r.reporter().jobURL(j.ID))
	sink, err := r.newLogSink(j, log)
	if err != nil {
		log.Error("start job log", "err", err)
		return // left running: the next start records it interrupted
	}
	log.Info("job started")
	started := time.Now()
	err = fn(ctx, w, j, sink, res)
	if errors.Is(err, executor.ErrDetached) {
		// Its worker goes on: the job stays running for the node that
		// follows it next (this one after a restart, or the next active).
		log.Warn("job left running on its worker", "err", err)
		if cerr := sink.Close(); cerr != nil {
			log.Error("store job log", "err", cerr)
		}
		o.notStarted = true
		res.Error = "Still running on its worker: Atoll stopped following it, and reports it once it follows it again."
		return
	}
	if j.Spec.Verbose {
		res.Output = sink.Text()
	}
	state, desc := atoll.JobSucceeded, title(j.Kind)+" succeeded."
	if err != nil {
		state, desc = atoll.JobFailed, title(j.Kind)+" failed."
		res.Error = r.userError(err)
		var lost *executor.Interrupted
		if errors.As(err, &lost) {
			state, desc = atoll.JobInterrupted, title(j.Kind)+" interrupted: its worker was lost."
			res.Error = "Interrupted: " + lost.Message
		} else if _, ok := canceledCause(ctx); ok && r.sched.jobCtx.Err() == nil {
			state, desc = atoll.JobCanceled, title(j.Kind)+" canceled."
			res.Error = "Canceled by a cancel comment: this " + j.Kind + " did not finish."
		} else if ctx.Err() != nil {
			state, desc = atoll.JobInterrupted, title(j.Kind)+" interrupted by a server stop."
			res.Error = "Interrupted: Atoll was stopping and this job did not finish in time. It is not retried automatically."
			if j.Kind != atoll.JobPlan {
				res.Error += " The " + commandText(j.Kind) + " may have been partly done: check the state, then plan again."
			}
		}
		sink.Write(atoll.StreamAtoll, "Error: "+res.Error)
	} else if res.Summary != nil {
		desc = summaryText(j.Kind, *res.Summary)
	}
	// The whole log is stored before the job is seen finished.
	if cerr := sink.Close(); cerr != nil {
		log.Error("store job log", "err", cerr)
		return
	}
	if err != nil {
		notified := j.Kind == atoll.JobApply && w.appliedJob(j.ID)
		var notes []atoll.Notification
		if notified { // a failed apply notifies too, as Atlantis's
			var nerr error
			if notes, nerr = r.notifications(w, j, false); nerr != nil {
				log.Error("finish job", "err", nerr)
				return
			}
		}
		ferr := r.commit("finish job", func(ctx context.Context) error {
			return r.DB.FinishJob(ctx, j.ID, state, res.Error, res.Summary, notes)
		})
		if ferr != nil {
			log.Error("finish job", "err", ferr)
			return
		}
		if notified {
			r.wakeNotifications()
		}
	}
	o.final = true
	log.Info("job finished", "state", state)
	r.recordJob(j, state, err, time.Since(started))
	st := vcs.StatusSuccess
	if state != atoll.JobSucceeded {
		st = vcs.StatusFailure
	}
	r.reporter().jobStatus(context.WithoutCancel(ctx), w, j, st, desc, *res)
}

// userError is what a user is shown for err: coded messages as they are,
// Terraform failures with their diagnostics, internal details hidden.
func (r *Runner) userError(err error) string {
	var exit *terraform.ExitError
	if errors.As(err, &exit) {
		return redactPaths(exit.Error()+"\n\n"+strings.TrimSpace(exit.Stderr), r.Workdirs.Root)
	}
	if atoll.ErrorCode(err) == atoll.EINTERNAL {
		return "Internal error: " + redactPaths(err.Error(), r.Workdirs.Root)
	}
	return atoll.ErrorMessage(err)
}

func summaryText(kind string, s atoll.Summary) string {
	switch {
	case s.NoChanges():
		return "No changes."
	case kind == atoll.JobApply:
		return itoa(s.Add) + " added, " + itoa(s.Change) + " changed, " + itoa(s.Destroy) + " destroyed."
	}
	return itoa(s.Add) + " to add, " + itoa(s.Change) + " to change, " + itoa(s.Destroy) + " to destroy."
}

// commandLine is how the log shows a terraform command Atoll runs: its
// argument vector as given to terraform, the plan file by its base name.
func commandLine(argv []string) string {
	return "$ terraform " + strings.Join(argv, " ")
}

// safeName keeps a project name usable as a file name.
func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

func summarize(show []byte) (atoll.Summary, error) {
	s, err := terraform.Summarize(show)
	if err != nil {
		return s, atoll.Errorf(atoll.EINTERNAL, "Reading the plan's JSON failed: %v", err)
	}
	return s, nil
}
