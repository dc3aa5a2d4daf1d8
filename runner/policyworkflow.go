package runner

import (
	"fmt"
	"slices"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// policyWorkflow reads a custom workflow's policy_check stage: the
// extra_args of its policy_check step go to conftest (JobSpec.PolicyArgs).
// Atoll always writes the plan's JSON itself, so show steps are accepted
// and do nothing. Run, env and multienv steps are kept in order, with the
// policy_check step, in JobSpec.PolicySteps.
func policyWorkflow(name string, wf repocfg.Workflow, spec *atoll.JobSpec) error {
	where := fmt.Sprintf("Workflow %q, policy_check stage", name)
	var list []atoll.Step
	for _, s := range wf.PolicyCheck {
		switch s.Name {
		case "policy_check":
			spec.PolicyArgs = append(spec.PolicyArgs, stringList(s.Args["extra_args"])...)
			list = append(list, atoll.Step{Name: "policy_check"})
		case "run", "env", "multienv":
			step, err := workflowStep(s, where)
			if err != nil {
				return err
			}
			list = append(list, step)
		case "show", "init", "version":
		default:
			return atoll.Errorf(atoll.EINVALID, "%s: %s steps are not supported by Atoll yet (only show, policy_check, run, env and multienv).", where, s.Name)
		}
	}
	// Steps of their own or nothing: a stage of conftest alone runs as before.
	if slices.ContainsFunc(list, func(st atoll.Step) bool { return st.Name != "policy_check" }) {
		spec.PolicySteps = list
	}
	return nil
}
