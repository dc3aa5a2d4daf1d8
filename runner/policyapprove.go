package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/vcs"
)

// policyAction is what one approve_policies does to one policy set: the
// store applies it (atoll.PolicyAction).
type policyAction = atoll.PolicyAction

const (
	policySkip    = atoll.PolicySkip
	policyApprove = atoll.PolicyApprove
	policyClear   = atoll.PolicyClear
	policyRefuse  = atoll.PolicyRefuse
)

// decidePolicyApproval decides, as Atlantis does, what user's
// approve_policies (clear: with --clear-policy-approval; target: its
// --policy-set, "" for all) does to check c of a pull request by author.
// Owners are the set's and the top-level ones: users by name, and teams
// the VCS says user is in (teams; nil on hosts without teams).
func decidePolicyApproval(p *repocfg.Policies, c atoll.PolicyCheck, user string, teams []string, author, target string, clear bool) (policyAction, string) {
	if target != "" && target != c.PolicySet {
		return policySkip, ""
	}
	if c.Passed || (!clear && c.Satisfied()) || (clear && len(c.Approvals) == 0) {
		return policySkip, ""
	}
	set := p.Set(c.PolicySet)
	if set == nil {
		return policyRefuse, fmt.Sprintf("policy set %s is no longer in the server's config: plan again.", c.PolicySet)
	}
	if !set.Owners.IsOwner(user, teams) && !p.Owners.IsOwner(user, teams) {
		return policyRefuse, fmt.Sprintf("policy set: %s: user %s is not a policy owner: ask a policy owner to approve the failed policies.", c.PolicySet, user)
	}
	if set.PreventSelfApprove && strings.EqualFold(user, author) {
		return policyRefuse, fmt.Sprintf("policy set: %s: %s is the author of this pull request and the set has prevent_self_approve: another policy owner must approve.", c.PolicySet, user)
	}
	if clear {
		return policyClear, ""
	}
	if c.ApprovedBy(user) {
		return policyRefuse, fmt.Sprintf("policy set: %s: already approved by %s; %d more approval(s) needed from other policy owners.",
			c.PolicySet, user, max(c.ApproveCount, 1)-len(c.Approvals))
	}
	return policyApprove, ""
}

// approvePolicies runs approve_policies: for each pending plan the command
// selects, the commenter's approval (or --clear-policy-approval) of its
// failed policy sets, each recorded with an audit event.
func (r *Runner) approvePolicies(ctx context.Context, w *work, cmd *command.Command) error {
	if r.Policies == nil || r.Policies.Policies == nil {
		return r.reporter().reply(ctx, w, "approve_policies", "**Approve Policies**: policy checks are not enabled on this Atoll server (`--enable-policy-checks` with `policies` in the server-side repo config): there is nothing to approve.")
	}
	if target := cmd.PolicySet; target != "" && r.Policies.Policies.Set(target) == nil {
		return r.reporter().reply(ctx, w, "approve_policies", fmt.Sprintf("**Approve Policies Error**: there is no policy set %s in the server's config.", codeSpan(target)))
	}
	teams, err := r.policyTeams(ctx, w)
	if err != nil {
		w.log.Error("approve_policies: list the user's teams", "user", w.req.User, "err", err)
		return r.reporter().reply(ctx, w, "approve_policies", fmt.Sprintf("**Approve Policies Error**: Atoll could not list the teams of @%s in %s (%s), "+
			"so team owners cannot be checked. Nothing was approved.", w.req.User, w.repo.Owner, atoll.ErrorMessage(err)))
	}
	plans, err := r.DB.PendingPlans(ctx, w.pull.ID)
	if err != nil {
		return err
	}
	var results []markdown.PolicyApproval
	for _, p := range plans {
		pj, err := r.DB.Job(ctx, p.JobID)
		if err != nil {
			return err
		}
		if !selects(cmd, pj) {
			continue
		}
		res := markdown.PolicyApproval{Dir: pj.Dir, Workspace: pj.Workspace, Project: pj.Project, Cleared: cmd.ClearPolicyApproval}
		label := projectLabel(pj.Dir, pj.Workspace, pj.Project)
		res.Checks, res.Refusals, err = r.DB.ApprovePolicies(ctx, atoll.PolicyDecisions{PlanID: p.ID, User: w.req.User, Label: label,
			Event: atoll.Event{Actor: w.req.User, Repo: w.repo.FullName(), Pull: w.pull.Number, Source: w.req.Source},
			Decide: func(c atoll.PolicyCheck) (atoll.PolicyAction, string) {
				return decidePolicyApproval(r.Policies.Policies, c, w.req.User, teams, w.pull.Author, cmd.PolicySet, cmd.ClearPolicyApproval)
			}})
		if err != nil {
			return err
		}
		if len(res.Checks) > 0 {
			results = append(results, res)
		}
	}
	if len(results) == 0 {
		return r.reporter().reply(ctx, w, "approve_policies", fmt.Sprintf("Ran Approve Policies for 0 projects: there are no unapplied, policy-checked plans%s.", selectionText(cmd)))
	}
	r.policyStatuses(ctx, w, w.pull.HeadSHA)
	return r.reporter().reply(ctx, w, "approve_policies", r.Markdown.ApprovePolicies(results))
}

// policyStatuses sets atlantis/policy_check (and one per project) on sha
// from the pull request's pending plans' policy results.
func (r *Runner) policyStatuses(ctx context.Context, w *work, sha string) {
	if r.Policies == nil {
		return
	}
	plans, err := r.DB.PendingPlans(ctx, w.pull.ID)
	if err != nil {
		w.log.Error("policy statuses", "err", err)
		return
	}
	total, ok := 0, 0
	for _, p := range plans {
		if p.HeadSHA != sha {
			continue
		}
		checks, err := r.DB.PolicyChecks(ctx, p.ID)
		if err != nil || len(checks) == 0 {
			continue
		}
		pj, err := r.DB.Job(ctx, p.JobID)
		if err != nil {
			continue
		}
		total++
		state, desc := vcs.StatusSuccess, "Policy check passed."
		switch {
		case !atoll.PoliciesSatisfied(checks):
			state, desc = vcs.StatusFailure, "Policy check failed: a policy owner must approve."
		case !allPoliciesPassed(checks):
			desc = "Policy check failed, and was approved."
		}
		if state == vcs.StatusSuccess {
			ok++
		}
		r.reporter().status(ctx, w, sha, "policy_check", projectLabel(pj.Dir, pj.Workspace, pj.Project), state, desc, r.reporter().jobURL(pj.ID))
	}
	if total == 0 {
		return
	}
	state := vcs.StatusSuccess
	if ok < total {
		state = vcs.StatusFailure
	}
	r.reporter().status(ctx, w, sha, "policy_check", "", state, fmt.Sprintf("%d/%d projects passed policy checks or were approved.", ok, total), r.reporter().pullURL(w))
}

func allPoliciesPassed(checks []atoll.PolicyCheck) bool {
	for _, c := range checks {
		if !c.Passed {
			return false
		}
	}
	return true
}

// policyTeams are the teams of the commenter when policy owners name teams
// and the host has teams (GitHub); nil otherwise.
func (r *Runner) policyTeams(ctx context.Context, w *work) ([]string, error) {
	lister, ok := vcs.As[vcs.TeamLister](w.vcs)
	if !ok || !r.Policies.Policies.HasTeams() {
		return nil, nil
	}
	return lister.UserTeams(ctx, *w.repo, w.req.User)
}
