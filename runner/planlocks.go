package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
)

// runPlans takes the locks of every project the request plans, in one
// transaction, before any project runs; then runs the jobs. When another
// pull request holds any of the locks, none is taken and no project is
// planned: each is told who holds which lock (no partial plans, unlike
// Atlantis, which locks project by project as each plan starts).
func (r *Runner) runPlans(ctx context.Context, w *work, jobs []*atoll.Job) []outcome {
	return r.runLocked(ctx, w, jobs, r.runPlan)
}

// runLocked is runPlans with fn for the jobs: import and state rm take
// their projects' locks as a plan does, and so does an apply in repo_locks
// mode on_apply. Only the jobs whose mode locks their kind claim a lock
// (needsLock); without any, the jobs simply run.
func (r *Runner) runLocked(ctx context.Context, w *work, jobs []*atoll.Job, fn jobFunc) []outcome {
	holders, err := r.takeLocks(ctx, w, jobs)
	if err != nil {
		return r.runJobs(ctx, w, jobs, func(context.Context, *work, *atoll.Job, *logSink, *atoll.ProjectResult) error { return err })
	}
	if len(holders) == 0 {
		return r.runJobs(ctx, w, jobs, fn)
	}
	refuse := func(_ context.Context, _ *work, j *atoll.Job, _ *logSink, res *atoll.ProjectResult) error {
		if h := holders[j.ProjectID]; h != nil {
			res.LockedBy = &atoll.LockHolder{Pull: h.Pull, URL: h.PullURL, User: h.User}
			return atoll.Errorf(atoll.ECONFLICT, "This project is locked by pull request #%d.", h.Pull)
		}
		if j.Kind != atoll.JobPlan {
			return atoll.Errorf(atoll.ECONFLICT, "Not run: %s; %s takes the locks of all its projects or none.", lockedText(holders), j.Kind)
		}
		return atoll.Errorf(atoll.ECONFLICT, "Not planned: %s; a plan takes the locks of all its projects or none.", lockedText(holders))
	}
	// Every project is told, whatever the order: none of them ran.
	outcomes := make([]outcome, len(jobs))
	for i, j := range jobs {
		outcomes[i] = storedOutcome(ctx, r, j)
		if j.State == atoll.JobQueued {
			r.runJob(ctx, w, j, refuse, &outcomes[i])
		}
	}
	return outcomes
}

// lockedText names the holders of the locks a request could not take, in
// a stable order.
func lockedText(holders map[int64]*atoll.Lock) string {
	var parts []string
	for _, h := range holders {
		parts = append(parts, fmt.Sprintf("project %s is locked by pull request #%d", projectLabel(h.Dir, h.Workspace, h.Project), h.Pull))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}

// takeLocks takes, all or none, the locks of the request's queued jobs
// that need one and marks on each job whether its lock was taken now. It returns the
// locks other pull requests hold, by project id, when it took none.
func (r *Runner) takeLocks(ctx context.Context, w *work, jobs []*atoll.Job) (map[int64]*atoll.Lock, error) {
	var claims []atoll.LockClaim
	var takes []atoll.LockTake
	var queued []*atoll.Job
	for _, j := range jobs {
		if j.State == atoll.JobQueued && needsLock(j) {
			claims = append(claims, atoll.LockClaim{ProjectID: j.ProjectID})
			spec := j.Spec
			spec.LockTaken = true
			takes = append(takes, atoll.LockTake{JobID: j.ID, Spec: spec,
				Event: atoll.Event{Actor: j.User, Action: "lock.take", Repo: j.Repo, Pull: j.Pull, Detail: projectLabel(j.Dir, j.Workspace, j.Project), Source: w.req.Source}})
			queued = append(queued, j)
		}
	}
	if len(claims) == 0 {
		return nil, nil
	}
	var holders map[int64]*atoll.Lock
	err := r.commit("take locks", func(ctx context.Context) (err error) {
		holders, err = r.DB.TakeJobLocks(ctx, w.pull.ID, w.req.User, claims, takes)
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, j := range queued {
		j.Spec.LockTaken = j.Spec.LockTaken || claims[i].Taken
	}
	return holders, nil
}
