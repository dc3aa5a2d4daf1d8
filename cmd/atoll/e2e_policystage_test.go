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
