package runner

import "context"

// discardApprovals dismisses the pull request's approvals before a plan
// comment's plans run, with --discard-approval-on-plan, as Atlantis does:
// an approval given for the old plan does not carry over to the new one.
// Hosts without dismissable approvals (Azure DevOps) are left alone, as
// in Atlantis; a failure is logged and the plan goes on.
func (r *Runner) discardApprovals(ctx context.Context, w *work) {
	if r.DiscardApprovalOnPlan {
		r.reporter().dismissApprovals(ctx, w)
	}
}
