package runner

import (
	"context"

	"github.com/atollhq/atoll/vcs"
)

// discardApprovals dismisses the pull request's approvals before a plan
// comment's plans run, with --discard-approval-on-plan, as Atlantis does:
// an approval given for the old plan does not carry over to the new one.
// Hosts without dismissable approvals (Azure DevOps) are left alone, as
// in Atlantis; a failure is logged and the plan goes on.
func (r *Runner) discardApprovals(ctx context.Context, w *work) {
	d, ok := vcs.As[vcs.ApprovalDismisser](w.vcs)
	if !r.DiscardApprovalOnPlan || !ok {
		return
	}
	n, err := d.DismissApprovals(ctx, *w.repo, w.pull.Number)
	if err != nil {
		w.log.Error("discard approvals on plan", "err", err, "dismissed", n)
		return
	}
	w.log.Info("approvals discarded on plan", "dismissed", n)
}
