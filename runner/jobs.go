package runner

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/runner/terraform"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
)

// jobFunc does one job's work. On success it must itself record the job as
// succeeded (in the same commit as what the job produced); on error runJobs
// records the failure.
type jobFunc func(ctx context.Context, w *work, j *atoll.Job, sink *logSink, res *markdown.ProjectResult) error

// runJobs runs a request's queued jobs, in parallel when their spec allows,
// and returns one result per job in order. Jobs that already ended (a
// resumed request) are reported from the store and not run again.
func (r *Runner) runJobs(ctx context.Context, w *work, jobs []*atoll.Job, fn jobFunc) []markdown.ProjectResult {
	results := make([]markdown.ProjectResult, len(jobs))
	sem := make(chan struct{}, max(r.Parallelism, 1))
	var wg sync.WaitGroup
	for i, j := range jobs {
		results[i] = markdown.ProjectResult{Dir: j.Dir, Workspace: j.Workspace, Project: j.Project, Command: j.Kind, JobURL: r.jobURL(j.ID)}
		if j.State != atoll.JobQueued {
			results[i].Error = "Not run again: " + j.State + ". " + j.Error
			if j.State == atoll.JobSucceeded {
				results[i].Error, results[i].Summary = "", j.Summary
			}
			continue
		}
		run := func() {
			if ctx.Err() != nil {
				results[i].Error = "Not started: Atoll is stopping. This job runs when Atoll starts again."
				return
			}
			r.runJob(ctx, w, j, fn, &results[i])
		}
		if !j.Spec.Parallel {
			run()
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() { defer wg.Done(); defer func() { <-sem }(); run() }()
	}
	wg.Wait()
	return results
}

func (r *Runner) runJob(ctx context.Context, w *work, j *atoll.Job, fn jobFunc, res *markdown.ProjectResult) {
	log := w.log.With("job", j.ID, "job_kind", j.Kind, "dir", j.Dir, "workspace", j.Workspace)
	if err := r.DB.Update(ctx, func(tx *store.Tx) error { return tx.StartJob(j.ID) }); err != nil {
		res.Error = atoll.ErrorMessage(err)
		log.Error("start job", "err", err)
		return
	}
	label := projectLabel(j.Dir, j.Workspace, j.Project)
	r.setStatus(ctx, w.vcs, w.repo, j.HeadSHA, j.Kind, label, vcs.StatusPending, title(j.Kind)+" in progress...", r.jobURL(j.ID))
	last, _ := r.DB.LastLogSeq(ctx, j.ID)
	sink := newLogSink(r.DB, r.Hub, j.ID, last, log)
	sink.verbose = j.Spec.Verbose
	log.Info("job started")
	err := fn(ctx, w, j, sink, res)
	if j.Spec.Verbose {
		res.Output = sink.Text()
	}
	state, desc := atoll.JobSucceeded, title(j.Kind)+" succeeded."
	if err != nil {
		state, desc = atoll.JobFailed, title(j.Kind)+" failed."
		res.Error = r.userError(err)
		if ctx.Err() != nil {
			state, desc = atoll.JobInterrupted, title(j.Kind)+" interrupted by a server stop."
			res.Error = "Interrupted: Atoll was stopping and this job did not finish in time. It is not retried automatically."
			if j.Kind == atoll.JobApply {
				res.Error += " The apply may have been partly done: check the state, then plan again."
			}
		}
		sink.Write(atoll.StreamAtoll, "Error: "+res.Error)
		sink.Flush(context.Background())
		if ferr := r.DB.Update(context.Background(), func(tx *store.Tx) error { return tx.FinishJob(j.ID, state, res.Error, res.Summary) }); ferr != nil {
			log.Error("finish job", "err", ferr)
		}
	} else if res.Summary != nil {
		desc = summaryText(j.Kind, *res.Summary)
	}
	sink.Close(context.Background())
	log.Info("job finished", "state", state)
	st := vcs.StatusSuccess
	if state != atoll.JobSucceeded {
		st = vcs.StatusFailure
	}
	r.setStatus(context.WithoutCancel(ctx), w.vcs, w.repo, j.HeadSHA, j.Kind, label, st, desc, r.jobURL(j.ID))
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

func argsSuffix(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return " " + strings.Join(args, " ")
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

// emit adapts the sink to terraform's line callback.
func (s *logSink) emit(l terraform.Line) { s.Write(l.Stream, l.Text) }

func summarize(show []byte) (atoll.Summary, error) {
	s, err := terraform.Summarize(show)
	if err != nil {
		return s, atoll.Errorf(atoll.EINTERNAL, "Reading the plan's JSON failed: %v", err)
	}
	return s, nil
}
