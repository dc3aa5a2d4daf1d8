package runner

import (
	"context"

	"github.com/atollhq/atoll"
)

// checkDependencies refuses, as Atlantis does, to apply a project whose
// depends_on names a project of the pull request that is not applied: its
// latest plan failed, or its plan has changes and is still unapplied. A
// project the pull request never planned does not hold it back. A
// dependency applied earlier in the same request is applied by now: its
// dependants wait for it (see runJobs).
func (r *Runner) checkDependencies(ctx context.Context, w *work, j *atoll.Job) error {
	if len(j.Spec.DependsOn) == 0 {
		return nil
	}
	jobs, err := r.DB.PullJobs(ctx, j.PullID) // newest first
	if err != nil {
		return err
	}
	pending, err := r.DB.PendingPlans(ctx, j.PullID)
	if err != nil {
		return err
	}
	for _, dep := range j.Spec.DependsOn {
		for _, pj := range jobs {
			if pj.Kind != atoll.JobPlan || pj.Project != dep || !pj.Final() {
				continue
			}
			unapplied := pj.State != atoll.JobSucceeded
			for _, p := range pending {
				if p.JobID == pj.ID && !p.ChangesNothing() {
					unapplied = true
				}
			}
			if unapplied {
				return atoll.Errorf(atoll.EINVALID, "Can't apply your project unless you apply its dependencies: [%s]", dep)
			}
			break
		}
	}
	return nil
}
