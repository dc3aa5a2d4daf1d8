package markdown

import (
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// CommandFor is the comment that runs command on the project dir,
// workspace and name (name may be "").
func (r Renderer) CommandFor(command, dir, workspace, project string) string {
	return r.commandFor(command, ProjectResult{Dir: dir, Workspace: workspace, Project: project})
}

// policies writes a plan's policy check section: each set's verdict and
// conftest output, and for failed sets the approvals they have and need.
func (r Renderer) policies(b *strings.Builder, res ProjectResult) {
	if len(res.Policies) == 0 || (r.QuietPolicyChecks && allPassed(res.Policies)) {
		return
	}
	if atoll.PoliciesSatisfied(res.Policies) && allPassed(res.Policies) {
		fmt.Fprintf(b, "**Policy Check Passed**: %d policy set(s) passed.\n\n", len(res.Policies))
	} else {
		b.WriteString("**Policy Check Failed**: some policy sets did not pass.\n\n")
	}
	for _, c := range res.Policies {
		mark := ":white_check_mark:"
		if !c.Passed {
			mark = ":x:"
		}
		fmt.Fprintf(b, "#### Policy Set: %s %s\n", code(c.PolicySet), mark)
		if out := strings.TrimSpace(c.Output); out != "" {
			fenced(b, "", out)
		}
		b.WriteString("\n")
	}
	if allPassed(res.Policies) {
		return
	}
	b.WriteString("#### Policy Approval Status:\n")
	fenced(b, "", ApprovalStatus(res.Policies))
	fmt.Fprintf(b, "* :heavy_check_mark: To **approve** the failed policies, a policy owner comments: %s\n", code(r.commandFor("approve_policies", res)))
}

func allPassed(checks []atoll.PolicyCheck) bool {
	for _, c := range checks {
		if !c.Passed {
			return false
		}
	}
	return true
}

// ApprovalStatus is one line per failed policy set: the approvals it
// needs and has, and whose they are.
func ApprovalStatus(checks []atoll.PolicyCheck) string {
	var b strings.Builder
	for _, c := range checks {
		if c.Passed {
			continue
		}
		fmt.Fprintf(&b, "policy set: %s: requires: %d approval(s), have: %d.", c.PolicySet, max(c.ApproveCount, 1), len(c.Approvals))
		if len(c.Approvals) > 0 {
			users := make([]string, len(c.Approvals))
			for i, a := range c.Approvals {
				users[i] = a.User
				if a.KeptFromPlan != 0 {
					users[i] += fmt.Sprintf(" (kept from plan #%d: sticky)", a.KeptFromPlan)
				}
			}
			fmt.Fprintf(&b, " Approved by: %s.", strings.Join(users, ", "))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// PolicyApproval is the outcome of approve_policies for one project.
type PolicyApproval struct {
	Dir, Workspace, Project string
	Checks                  []atoll.PolicyCheck // after the command
	Refusals                []string            // why some sets were not approved
	Cleared                 bool                // --clear-policy-approval
}

// ApprovePolicies renders the reply to approve_policies.
func (r Renderer) ApprovePolicies(results []PolicyApproval) string {
	var b strings.Builder
	verb := "Approve Policies"
	if len(results) > 0 && results[0].Cleared {
		verb = "Approve Policies --clear-policy-approval"
	}
	fmt.Fprintf(&b, "Ran %s for %d project(s):\n\n", verb, len(results))
	for i, res := range results {
		pr := ProjectResult{Dir: res.Dir, Workspace: res.Workspace, Project: res.Project}
		fmt.Fprintf(&b, "### %d. %s\n", i+1, label(pr))
		for _, why := range res.Refusals {
			fmt.Fprintf(&b, "**Approve Policies Error**: %s\n\n", inline(why))
		}
		switch {
		case atoll.PoliciesSatisfied(res.Checks):
			fmt.Fprintf(&b, "All policy sets pass or are approved: the plan can be applied with %s.\n\n", code(r.commandFor("apply", pr)))
		default:
			b.WriteString("**Approve Policies Failed**: one or more policy sets need more approvals.\n\n")
		}
		if status := ApprovalStatus(res.Checks); status != "" {
			b.WriteString("#### Policy Approval Status:\n")
			fenced(&b, "", status)
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}
