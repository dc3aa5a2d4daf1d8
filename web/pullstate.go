package web

import (
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// planState says where a project's latest plan stands and why, from the
// plan (nil: none kept), the project's latest plan and apply jobs (nil:
// none) and the pull request's head. The order of the checks is the order
// of precedence: what the user must do next comes first.
func planState(pull *atoll.Pull, plan *atoll.Plan, lastPlan, lastApply *atoll.Job) (state, reason string) {
	switch {
	case lastPlan != nil && !lastPlan.Final():
		return templates.PlanRunning, fmt.Sprintf("Job #%d is %s: a new plan is on its way.", lastPlan.ID, verbState(lastPlan.State))
	case lastPlan != nil && lastPlan.State != atoll.JobSucceeded && (plan == nil || lastPlan.ID > plan.JobID):
		why := fmt.Sprintf("The latest plan, job #%d, %s", lastPlan.ID, lastPlan.State)
		if e := firstLine(lastPlan.Error); e != "" {
			why += ": " + e
		}
		return templates.PlanFailed, why + ". Fix it and plan again."
	case plan == nil:
		return templates.PlanNone, "Never planned on this pull request: plan first."
	case plan.AppliedAt != nil:
		return templates.PlanApplied, fmt.Sprintf("Already applied (%s): plan again to apply more.", plan.AppliedAt.UTC().Format("2006-01-02 15:04 MST"))
	case lastApply != nil && !lastApply.Final() && lastApply.Spec.PlanID == plan.ID:
		return templates.PlanApplying, fmt.Sprintf("Job #%d is applying this plan.", lastApply.ID)
	case pull.HeadSHA != "" && plan.HeadSHA != pull.HeadSHA:
		return templates.PlanStale, fmt.Sprintf("Planned on %s, an older commit than the head %s: plan again before applying.", short(plan.HeadSHA), short(pull.HeadSHA))
	case lastApply != nil && lastApply.Final() && lastApply.Spec.PlanID == plan.ID && plan.DiscardedAt == nil &&
		strings.HasPrefix(lastApply.Error, atoll.StalePlanPrefix):
		// Its apply was refused: the base branch moved in the project's
		// files since the plan (merge checkout strategy).
		return templates.PlanStale, fmt.Sprintf("Job #%d refused to apply it: %s", lastApply.ID, lastApply.Error)
	case plan.DiscardedAt != nil && !pullOpen(pull):
		return templates.PlanDiscarded, fmt.Sprintf("Discarded: the pull request was %s.", pull.State)
	case plan.DiscardedAt != nil:
		return templates.PlanDiscarded, "Discarded when the project's lock was released (unlocked, or a later plan failed), or by an import or state rm: plan again."
	}
	reason = "Ready to apply."
	if plan.ChangesNothing() {
		reason = "No changes: applying it changes nothing."
	}
	if lastApply != nil && lastApply.Final() && lastApply.State != atoll.JobSucceeded && lastApply.ID > plan.JobID {
		reason += fmt.Sprintf(" The last apply, job #%d, %s.", lastApply.ID, lastApply.State)
	}
	return templates.PlanApplicable, reason
}

func verbState(state string) string {
	if state == atoll.JobQueued {
		return "queued"
	}
	return "running"
}

func pullOpen(p *atoll.Pull) bool { return p.State == "" || p.State == atoll.PullOpen }

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// firstLine keeps a job error short enough for one line of the page.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
