package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
)

// planURL is the plan's page, where it is approved.

// approvalRequired reports whether job j's plan must be approved in Atoll
// before it is applied (--plan-approval).
func (r *Runner) approvalRequired(j *atoll.Job) bool {
	if j.Spec.Drift {
		// A reconcile is approved, whatever --plan-approval says, unless
		// the server-side config made its remediation automatic.
		return !j.Spec.AutoRemediation
	}
	return r.PlanApproval.Requires(j.Repo, j.Project, j.Dir)
}

// checkApproval returns the approval that lets apply job j apply its plan
// (nil when none is needed and none was given), or an EFORBIDDEN error
// naming the project and linking the plan's page when an approval is
// required and missing, rejected, expired or made for another plan file.
// A reject stops the apply even where no approval is required: someone
// looked and said no.
// ref and decision are the plan and its newest decision as read now; the
// apply reads both again in the transaction that marks the plan applied.
func (r *Runner) checkApproval(j *atoll.Job, ref *atoll.PlanRef, decision *atoll.Approval, now time.Time) (*atoll.Approval, error) {
	if decision.Approves(ref.SHA256, now) {
		return decision, nil
	}
	label := projectLabel(j.Dir, j.Workspace, j.Project)
	rejected := decision != nil && decision.Decision == atoll.DecisionReject
	if !r.approvalRequired(j) {
		if !rejected {
			return nil, nil
		}
		return nil, atoll.Errorf(atoll.EFORBIDDEN, "The plan of project %s was rejected in Atoll by %s: %s. Nothing was applied. Plan again, or approve plan %d at %s, then apply again.",
			label, decision.User, decision.Reason, ref.ID, r.reporter().planURL(ref.ID))
	}
	why := "it has not been approved yet"
	switch {
	case decision == nil:
	case rejected:
		why = fmt.Sprintf("%s rejected it: %s", decision.User, decision.Reason)
	case decision.PlanSHA256 != ref.SHA256:
		why = "the approval was given for another plan file"
	case decision.Expired(now):
		why = fmt.Sprintf("%s's approval expired at %s", decision.User, decision.ExpiresAt.UTC().Format("2006-01-02 15:04 MST"))
	}
	return nil, atoll.Errorf(atoll.EFORBIDDEN, "Project %s needs an approval in Atoll before it is applied, and %s. Nothing was applied. Review and approve plan %d at %s, then apply again.",
		label, why, ref.ID, r.reporter().planURL(ref.ID))
}

// approvalBeforeApply checks job j's approval as read now, before any work
// is done for the apply.
func (r *Runner) approvalBeforeApply(ctx context.Context, j *atoll.Job) (*atoll.Approval, error) {
	ref, err := r.DB.PlanRef(ctx, j.Spec.PlanID)
	if err != nil {
		return nil, err
	}
	decision, err := r.DB.PlanDecision(ctx, j.Spec.PlanID)
	if err != nil {
		return nil, err
	}
	return r.checkApproval(j, ref, decision, r.DB.Clock())
}

// approvalLink links the plan's page from the comment of an apply refused
// for want of an approval (the only EFORBIDDEN of the approval checks), and
// returns err.
func (r *Runner) approvalLink(res *atoll.ProjectResult, j *atoll.Job, err error) error {
	if atoll.ErrorCode(err) == atoll.EFORBIDDEN {
		res.ApprovalURL = r.reporter().planURL(j.Spec.PlanID)
	}
	return err
}

// approvedBy is how an apply's comment and audit event name its approval.
func approvedBy(a *atoll.Approval) string {
	if a == nil {
		return ""
	}
	if a.Reason == "" {
		return a.User
	}
	return a.User + ": " + a.Reason
}
