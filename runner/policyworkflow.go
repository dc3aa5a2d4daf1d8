package runner

import (
	"fmt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/repocfg"
)

// policyWorkflow reads a custom workflow's policy_check stage: the
// extra_args of its policy_check step go to conftest (JobSpec.PolicyArgs).
// Atoll always writes the plan's JSON itself, so show steps are accepted
// and do nothing; other steps in this stage are not supported yet.
func policyWorkflow(name string, wf repocfg.Workflow, spec *atoll.JobSpec) error {
	where := fmt.Sprintf("Workflow %q, policy_check stage", name)
	for _, s := range wf.PolicyCheck {
		switch s.Name {
		case "policy_check":
			spec.PolicyArgs = append(spec.PolicyArgs, stringList(s.Args["extra_args"])...)
		case "show", "init", "version":
		default:
			return atoll.Errorf(atoll.EINVALID, "%s: %s steps are not supported by Atoll yet (only show and policy_check).", where, s.Name)
		}
	}
	return nil
}
