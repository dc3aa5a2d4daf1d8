package main_test

import (
	"testing"
)

// A custom workflow's policy_check stage runs its env and run steps around
// conftest, with the plan stage's environment: their output is in the
// comment's policy section, and conftest still decides the result.
func TestPolicyStageRunSteps(t *testing.T) {
	e := newPolicyE2E(t, map[string]any{"id": "/.*/", "allowed_overrides": []string{"workflow"}, "allow_custom_workflows": true})
	atlantisYAML := `version: 3
projects:
- dir: staging
  workflow: checked
workflows:
  checked:
    policy_check:
      steps:
      - env:
          name: GREETING
          value: hello
      - run: echo "before-conftest $GREETING $PROJECT_NAME$WORKSPACE"
      - policy_check
      - run: test -s "$SHOWFILE" && echo after-conftest
`
	e.open(1, "policystage", map[string]string{"atlantis.yaml": atlantisYAML, "staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	plan := e.waitComment(1, 1)
	mustContain(t, "autoplan", plan, "Policy Check Passed", "before-conftest hello default", "after-conftest")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
}

// custom_policy_check: the policy_check stage's run steps are the check,
// the nth one's output the nth policy set's result, judged as Atlantis
// does. A failing result blocks the apply until an owner approves.
func TestCustomPolicyCheckBlocksApplyUntilApproved(t *testing.T) {
	e := newPolicyE2E(t, map[string]any{"id": "/.*/", "allowed_overrides": []string{"workflow"}, "allow_custom_workflows": true, "custom_policy_check": true})
	atlantisYAML := `version: 3
projects:
- dir: staging
  workflow: custom
workflows:
  custom:
    policy_check:
      steps:
      - run: echo "custom-no-production 1 failure"
      - run: echo "custom-baseline ok"
`
	e.open(1, "custompolicy", map[string]string{"atlantis.yaml": atlantisYAML, "staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Policy Check Failed", "custom-no-production 1 failure", "custom-baseline ok",
		"policy set: no-production: requires: 1 approval(s), have: 0.")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "refused apply", e.waitComment(1, 2), "All policies must pass", "`no-production` (0 of 1 approval(s))")
	e.commentAs("carol", 1, "atlantis approve_policies -d staging")
	mustContain(t, "approval", e.waitComment(1, 3), "have: 1. Approved by: carol.")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "apply", e.waitComment(1, 4), "Apply complete!")
}

// A project's custom_policy_check (allowed_overrides: [custom_policy_check])
// turns a custom check on for it alone.
func TestCustomPolicyCheckPerProject(t *testing.T) {
	e := newPolicyE2E(t, map[string]any{"id": "/.*/", "allowed_overrides": []string{"workflow", "custom_policy_check"}, "allow_custom_workflows": true})
	atlantisYAML := `version: 3
projects:
- dir: staging
  workflow: custom
  custom_policy_check: true
workflows:
  custom:
    policy_check:
      steps:
      - run: echo "FAIL - custom check"
      - run: echo "baseline fine"
`
	e.open(1, "customproject", map[string]string{"atlantis.yaml": atlantisYAML, "staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Policy Check Failed", "FAIL - custom check", "policy set: no-production: requires: 1 approval(s), have: 0.")
	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "refused apply", e.waitComment(1, 2), "All policies must pass")
}
