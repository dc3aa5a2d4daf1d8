package runner

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/repocfg"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// applyWorkflow fills spec with what the project's custom workflow asks of
// the built-in steps: extra_args for init, plan and apply, and env steps
// with a static value. Steps that would run commands from the repository
// (run, multienv, env with a command) are not supported yet: the project
// fails with a clear error rather than being planned differently than its
// owners wrote.
func applyWorkflow(cfg *repocfg.Config, p repocfg.Project, spec *atoll.JobSpec) error {
	if cfg == nil || p.Workflow == "" || p.Workflow == repocfg.DefaultWorkflow {
		return nil
	}
	wf, ok := cfg.Workflows[p.Workflow]
	if !ok {
		return atoll.Errorf(atoll.EINVALID, "Project %s uses workflow %q, which atlantis.yaml does not define.", p.Dir, p.Workflow)
	}
	for _, stage := range []struct {
		name  string
		steps []repocfg.Step
		must  string
	}{{"plan", wf.Plan, "plan"}, {"apply", wf.Apply, "apply"}} {
		if stage.steps == nil {
			continue // the default steps
		}
		found := false
		for _, s := range stage.steps {
			where := fmt.Sprintf("workflow %q, %s stage", p.Workflow, stage.name)
			args := stringList(s.Args["extra_args"])
			switch s.Name {
			case "init":
				spec.InitArgs = append(spec.InitArgs, args...)
			case "plan":
				spec.PlanArgs, found = append(spec.PlanArgs, args...), found || stage.must == "plan"
			case "apply":
				spec.ApplyArgs, found = append(spec.ApplyArgs, args...), found || stage.must == "apply"
			case "show", "version":
				// Atoll always stores `show -json`; version needs no step.
			case "env":
				name, _ := s.Args["name"].(string)
				value, hasValue := s.Args["value"]
				if _, hasCommand := s.Args["command"]; hasCommand || !hasValue {
					return atoll.Errorf(atoll.EINVALID, "%s: env steps with a command are not supported yet; give a value.", where)
				}
				if !envName.MatchString(name) {
					return atoll.Errorf(atoll.EINVALID, "%s: env step name %q is not a valid variable name.", where, name)
				}
				spec.Env = append(spec.Env, name+"="+fmt.Sprint(value))
			default:
				return atoll.Errorf(atoll.EINVALID, "%s: %s steps are not supported by Atoll yet. Only init, plan, show, apply (with extra_args) and env (with a value) are.", where, s.Name)
			}
		}
		if !found {
			return atoll.Errorf(atoll.EINVALID, "Workflow %q: a %s stage without a %s step is not supported.", p.Workflow, stage.name, stage.must)
		}
	}
	// Checkouts are shared by projects with the same dir: migrating "the"
	// state there could copy one project's state into another's backend.
	for _, f := range []string{"migrate-state", "force-copy"} {
		if hasFlag(spec.InitArgs, f) {
			return atoll.Errorf(atoll.EINVALID, "Workflow %q: init extra_args must not use -%s: Atoll never migrates state.", p.Workflow, f)
		}
	}
	for _, a := range append(append(append([]string{}, spec.InitArgs...), spec.PlanArgs...), spec.ApplyArgs...) {
		if strings.HasPrefix(strings.TrimLeft(a, "-"), "chdir") || strings.HasPrefix(strings.TrimLeft(a, "-"), "plugin-dir") {
			return atoll.Errorf(atoll.EINVALID, "Workflow %q: extra_args must not use %s.", p.Workflow, a)
		}
	}
	return nil
}

func stringList(v any) []string {
	switch l := v.(type) {
	case []string:
		return l
	case []any:
		out := make([]string, 0, len(l))
		for _, x := range l {
			out = append(out, fmt.Sprint(x))
		}
		return out
	}
	return nil
}
