package runner

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// setApplyStatus sets the aggregate "atlantis/apply" status of sha from the
// whole pull request, not from one request's jobs, because branch protection
// reads it as "everything this pull request plans is applied". As in
// Atlantis, it counts each project's latest plan or apply at sha:
//
//   - failure if a project's latest apply failed;
//   - pending ("1/2 projects applied.") while a project's plan with changes
//     is unapplied, or its plan failed. After a plan (afterApply false) this
//     is not set, as Atlantis does not on GitHub: the status then stays
//     unset on a new commit, which required checks treat as not passed;
//   - success when every project is applied or its plan has no changes.
//
// A plan that finds no projects sets success "0/0" itself.
func (r *Runner) setApplyStatus(ctx context.Context, w *work, sha string, afterApply bool) {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	outcomes, err := r.DB.PullOutcomes(ctx, w.pull.ID, sha)
	if err != nil {
		w.log.Error("apply status: read outcomes", "err", err)
		return
	}
	var total, applied, upToDate, errored int
	for _, o := range outcomes {
		total++
		switch {
		case o.Kind == atoll.JobApply && !o.Applied():
			errored++
		case o.Kind == atoll.JobApply:
			applied++
		case o.Applied():
			upToDate++
		}
	}
	state, desc := applyStatus(total, applied, upToDate, errored)
	switch {
	case state == vcs.StatusPending && !afterApply:
		return
	case total == 0 && !afterApply:
		return // only a plan that finds no projects says "0/0" (plan sets it)
	case total == 0:
		// The applies were of plans for an older head: they failed, and
		// nothing is planned for this one.
		state, desc = vcs.StatusFailure, "0/0 projects applied: plan this commit first."
	}
	r.reporter().status(ctx, w, sha, "apply", "", state, desc, r.reporter().pullURL(w))
}

// applyStatus is the state and description of the aggregate apply status
// for total projects of which applied were applied, upToDate had nothing to
// apply and errored failed to apply.
func applyStatus(total, applied, upToDate, errored int) (state, desc string) {
	switch {
	case errored > 0:
		return vcs.StatusFailure, fmt.Sprintf("%d/%d projects failed to apply.", errored, total)
	case applied+upToDate < total && upToDate > 0:
		return vcs.StatusPending, fmt.Sprintf("%d/%d projects applied (%d up to date).", applied, total, upToDate)
	case applied+upToDate < total:
		return vcs.StatusPending, fmt.Sprintf("%d/%d projects applied.", applied, total)
	case total > 0 && upToDate == total:
		return vcs.StatusSuccess, fmt.Sprintf("%d/%d projects up to date.", upToDate, total)
	case upToDate > 0:
		return vcs.StatusSuccess, fmt.Sprintf("%d/%d projects applied successfully (%d up to date).", applied, total, upToDate)
	}
	return vcs.StatusSuccess, fmt.Sprintf("%d/%d projects applied successfully.", applied, total)
}
