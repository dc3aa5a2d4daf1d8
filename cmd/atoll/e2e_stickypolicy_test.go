package main_test

import (
	"testing"

	"github.com/atollhq/atoll"
)

// push moves pull request number to a new commit on a new branch changing
// files, and sends the synchronize webhook.
func (e *e2e) push(number int, branch string, files map[string]string, changed ...string) string {
	e.t.Helper()
	sha := e.repo.branch(branch, files)
	e.gh.setPull(number, fakePull{HeadSHA: sha, HeadRef: branch, BaseSHA: e.base, BaseRef: "main", Files: changed})
	e.synchronize(number, branch, sha)
	return sha
}

// With sticky_policy_approvals, an owner's approval is kept by the next
// plans of the project while every failing item (here each FAIL line) was
// among those approved: a re-plan or a fixed violation keeps it, a new
// violation needs a new approval.
func TestStickyPolicyApprovals(t *testing.T) {
	e := newE2EConfigured(t, policyConfigWith(t, map[string]any{"users": []string{"alice"}},
		map[string]any{"sticky_policy_approvals": true, "policy_item_regex": "(?m)^FAIL.*"}))
	e.open(1, "sticky", map[string]string{"production/main.tf": tfProject("production", 2)}, "production/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Policy Check Failed", "input production-1 is not allowed", "have: 0.")
	e.commentAs("carol", 1, "atlantis approve_policies")
	mustContain(t, "approval", e.waitComment(1, 2), "have: 1. Approved by: carol.")

	// The same violations: the approval stays.
	e.comment(1, "atlantis plan")
	mustContain(t, "re-plan", e.waitComment(1, 3), "Policy Check Failed", "have: 1. Approved by: carol (kept from plan #1: sticky).")

	// A new violation: a new approval is needed.
	e.push(1, "sticky-more", map[string]string{"production/main.tf": tfProject("production", 3)}, "production/main.tf")
	grown := e.waitComment(1, 4)
	mustContain(t, "a new violation", grown, "input production-2 is not allowed", "have: 0.")
	e.comment(1, "atlantis apply")
	mustContain(t, "refused apply", e.waitComment(1, 5), "All policies must pass")
	e.commentAs("carol", 1, "atlantis approve_policies")
	mustContain(t, "approval of the new plan", e.waitComment(1, 6), "have: 1. Approved by: carol.")

	// A fixed violation: what is left was approved; the apply goes through.
	e.push(1, "sticky-less", map[string]string{"production/main.tf": tfProject("production", 2)}, "production/main.tf")
	mustContain(t, "a fixed violation", e.waitComment(1, 7), "have: 1. Approved by: carol (kept from plan #3: sticky).")
	e.comment(1, "atlantis apply")
	mustContain(t, "apply", e.waitComment(1, 8), "Apply complete!")
	var plan struct {
		Policies []atoll.PolicyCheck `json:"policies"`
	}
	getJSON(t, e.m.URL+"/api/v1/plans/4", &plan)
	if len(plan.Policies) != 2 || !plan.Policies[1].Sticky || len(plan.Policies[1].Approvals) != 1 || plan.Policies[1].Approvals[0].KeptFromPlan != 3 {
		t.Fatalf("plan 4's policies in the API = %+v; want no-production sticky, carol's approval kept from plan 3", plan.Policies)
	}
}
