package markdown_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

func TestPlanCommentPolicySection(t *testing.T) {
	r := markdown.Renderer{}
	plan := func(checks ...atoll.PolicyCheck) string {
		res := markdown.ProjectResult{Dir: "app", Workspace: "default", Command: atoll.JobPlan, Output: "Plan: 1 to add",
			Summary: &atoll.Summary{Add: 1}, HasChanges: true, Policies: checks}
		return strings.Join(r.Results("plan", []markdown.ProjectResult{res}, "<!-- m -->"), "")
	}
	if body := plan(); strings.Contains(body, "Policy") {
		t.Fatalf("no checks, yet a policy section:\n%s", body)
	}
	failed := plan(atoll.PolicyCheck{PolicySet: "strict", Output: "FAIL - default.json - main - denied\n```\nnot a fence", ApproveCount: 2,
		Approvals: []atoll.PolicyApproval{{User: "carol"}}},
		atoll.PolicyCheck{PolicySet: "basics", Passed: true, Output: "1 test, 1 passed"})
	for _, want := range []string{"**Policy Check Failed**", "#### Policy Set: `strict` :x:", "#### Policy Set: `basics` :white_check_mark:",
		"FAIL - default.json", "policy set: strict: requires: 2 approval(s), have: 1. Approved by: carol.", "`atlantis approve_policies -d app`"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failed section lacks %q:\n%s", want, failed)
		}
	}
	// Output with backticks cannot close its fence early.
	if !strings.Contains(failed, "````\nFAIL") {
		t.Errorf("output fence not longer than its backticks:\n%s", failed)
	}
	passed := plan(atoll.PolicyCheck{PolicySet: "basics", Passed: true, Output: "1 test, 1 passed"})
	if !strings.Contains(passed, "**Policy Check Passed**: 1 policy set(s) passed.") || strings.Contains(passed, "approve_policies") {
		t.Errorf("passed section:\n%s", passed)
	}
}

// --quiet-policy-checks: a project whose sets all passed gets no policy
// section; a failure is still told in full.
func TestQuietPolicyChecks(t *testing.T) {
	r := markdown.Renderer{QuietPolicyChecks: true}
	plan := func(checks ...atoll.PolicyCheck) string {
		res := markdown.ProjectResult{Dir: "app", Workspace: "default", Command: atoll.JobPlan, Output: "Plan: 1 to add",
			Summary: &atoll.Summary{Add: 1}, HasChanges: true, Policies: checks}
		return strings.Join(r.Results("plan", []markdown.ProjectResult{res}, "<!-- m -->"), "")
	}
	if body := plan(atoll.PolicyCheck{PolicySet: "basics", Passed: true, Output: "1 test, 1 passed"}); strings.Contains(body, "Policy") {
		t.Fatalf("a passing check was told:\n%s", body)
	}
	failed := plan(atoll.PolicyCheck{PolicySet: "strict", Output: "FAIL - denied", ApproveCount: 1},
		atoll.PolicyCheck{PolicySet: "basics", Passed: true})
	for _, want := range []string{"**Policy Check Failed**", "#### Policy Set: `strict` :x:", "FAIL - denied", "approve_policies"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failed section lacks %q:\n%s", want, failed)
		}
	}
}
