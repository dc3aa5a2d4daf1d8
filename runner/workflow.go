package runner

import (
	"cmp"
	"fmt"
	"regexp"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
)

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// applyWorkflow stores the project's custom workflow in spec: each custom
// stage's steps in order (PlanSteps, ApplySteps), which the worker runs as
// they are. A stage the workflow leaves out runs the default steps.
//
// A workflow from the repository's own file is held to parser's rule for
// Terraform arguments (command.Parser.CheckTerraformArgs), as a comment is:
// whoever can change the file in a pull request could otherwise redirect
// the state or the plan file. The server's workflows are trusted.
func applyWorkflow(cfg *repocfg.Config, p repocfg.Project, spec *atoll.JobSpec, parser command.Parser) error {
	if cfg == nil {
		return nil
	}
	// A workflow named "default" (server-side, or the repo's where custom
	// workflows are allowed) replaces the built-in one, as in Atlantis.
	name := cmp.Or(p.Workflow, repocfg.DefaultWorkflow)
	wf, ok := cfg.Workflows[name]
	if !ok {
		if name == repocfg.DefaultWorkflow {
			return nil
		}
		return atoll.Errorf(atoll.EINVALID, "Project %s uses workflow %q, which neither atlantis.yaml nor the server-side repo config defines.", p.Dir, p.Workflow)
	}
	if err := policyWorkflow(name, wf, spec); err != nil {
		return err
	}
	for _, stage := range []struct {
		name  string
		steps []repocfg.Step
		dst   *[]atoll.Step
	}{{"plan", wf.Plan, &spec.PlanSteps}, {"apply", wf.Apply, &spec.ApplySteps},
		{"import", wf.Import, &spec.ImportSteps}, {"state_rm", wf.StateRm, &spec.StateRmSteps}} {
		if stage.steps == nil {
			continue // the default steps
		}
		where := fmt.Sprintf("Workflow %q, %s stage", name, stage.name)
		steps := make([]atoll.Step, 0, len(stage.steps))
		for _, s := range stage.steps {
			if s.Name == "policy_check" {
				// Atoll checks policies once per plan, in its policy phase
				// (the policy_check stage, with policy checks on), and
				// again before the apply: a policy_check step elsewhere,
				// which Atlantis runs in place, adds nothing and is left out.
				continue
			}
			step, err := workflowStep(s, where)
			if err != nil {
				return err
			}
			if wf.FromRepo {
				if err := parser.CheckTerraformArgs(step.Name, step.ExtraArgs); err != nil {
					return atoll.Errorf(atoll.EINVALID, "%s: %s", where, atoll.ErrorMessage(err))
				}
			}
			if step.Name == "run" && cfg.Version == 2 {
				// Version 2's run commands are split into shell words and
				// joined with spaces, as Atlantis does (quotes go).
				step.Command = strings.Join(legacyWords(step.Command), " ")
			}
			if step.Name == "version" {
				continue // Atoll logs the version it runs with
			}
			// A step in a stage where Atoll will not run it is kept: the
			// stage is refused when it runs (checkStage), not the file.
			steps = append(steps, step)
		}
		*stage.dst = steps
	}
	// Checkouts are shared by projects with the same dir: migrating "the"
	// state there could copy one project's state into another's backend.
	for _, steps := range [][]atoll.Step{spec.PlanSteps, spec.ApplySteps, spec.ImportSteps, spec.StateRmSteps} {
		for _, s := range steps {
			for _, f := range []string{"migrate-state", "force-copy"} {
				if s.Name == "init" && hasFlag(s.ExtraArgs, f) {
					return atoll.Errorf(atoll.EINVALID, "Workflow %q: init extra_args must not use -%s: Atoll never migrates state.", p.Workflow, f)
				}
			}
			for _, a := range s.ExtraArgs {
				if strings.HasPrefix(strings.TrimLeft(a, "-"), "chdir") || strings.HasPrefix(strings.TrimLeft(a, "-"), "plugin-dir") {
					return atoll.Errorf(atoll.EINVALID, "Workflow %q: extra_args must not use %s.", p.Workflow, a)
				}
			}
		}
	}
	return nil
}

// checkStage refuses to run a job's stage (kind: atoll.JobPlan, JobApply,
// JobImport or JobStateRm) when one of its custom steps belongs to another
// stage in a way Atoll will not run. Atlantis runs any step in any stage;
// these would bypass what makes a plan safe to apply, or lack the
// arguments they need. Run when the stage is about to run, so that a
// workflow with such a step elsewhere still plans.
func checkStage(kind string, spec atoll.JobSpec) error {
	steps := map[string][]atoll.Step{atoll.JobPlan: spec.PlanSteps, atoll.JobApply: spec.ApplySteps,
		atoll.JobImport: spec.ImportSteps, atoll.JobStateRm: spec.StateRmSteps}[kind]
	for _, s := range steps {
		if why := misplaced(kind, s.Name); why != "" {
			return atoll.Errorf(atoll.EINVALID, "Workflow %q, %s stage: a %s step has no place here: %s.",
				cmp.Or(spec.Workflow, repocfg.DefaultWorkflow), kind, s.Name, why)
		}
	}
	return nil
}

// misplaced says why Atoll will not run step in stage, or "" when it will.
func misplaced(stage, step string) string {
	switch {
	case stage == "plan" && step == "apply":
		return "it would change the infrastructure before the plan is reviewed, approved and its apply requirements met"
	case stage == "apply" && step == "plan":
		return "it would replace the plan that was reviewed (and approved, and policy-checked) by one nobody saw"
	case !misplacedStateStep(stage, step):
		return ""
	case step == "import" || step == "state_rm":
		return "its addresses come only with its own comment (`atlantis import` or `atlantis state rm`)"
	}
	return "the " + stage + " stage has no plan to show or apply, and discards the project's plan"
}

// workflowStep turns a step as atlantis.yaml spells it into the stored form.
func workflowStep(s repocfg.Step, where string) (atoll.Step, error) {
	step := atoll.Step{Name: s.Name, ExtraArgs: stringList(s.Args["extra_args"])}
	switch s.Name {
	case "init", "plan", "show", "apply", "import", "state_rm", "version":
		return step, nil
	case "run", "env", "multienv":
	default:
		return step, atoll.Errorf(atoll.EINVALID, "%s: %s steps are not supported by Atoll yet.", where, s.Name)
	}
	step.Command, _ = s.Args["command"].(string)
	step.Shell, _ = s.Args["shell"].(string)
	switch a := s.Args["shellArgs"].(type) {
	case string:
		step.ShellArgs = strings.Fields(a)
	default:
		step.ShellArgs = stringList(a)
	}
	step.Output, step.FilterRegex = outputMode(s.Args["output"])
	if s.Name == "env" {
		step.EnvName, _ = s.Args["name"].(string)
		if v, ok := s.Args["value"]; ok {
			value := fmt.Sprint(v)
			step.Value = &value
		}
		if !envName.MatchString(step.EnvName) {
			return step, atoll.Errorf(atoll.EINVALID, "%s: env step name %q is not a valid variable name.", where, step.EnvName)
		}
		if step.Value == nil && step.Command == "" {
			return step, atoll.Errorf(atoll.EINVALID, "%s: env step %s needs a value or a command.", where, step.EnvName)
		}
	} else if step.Command == "" {
		return step, atoll.Errorf(atoll.EINVALID, "%s: %s step without a command.", where, s.Name)
	}
	return step, nil
}

// outputMode reduces a run step's output option (a string, or a list of
// strings and {filter_regex: ...}) to one mode and the patterns to redact.
// In a list, hide wins over strip_refreshing.
func outputMode(v any) (mode string, filters []string) {
	var modes []string
	switch o := v.(type) {
	case string:
		modes = []string{o}
	case []any:
		for _, x := range o {
			switch x := x.(type) {
			case string:
				modes = append(modes, x)
			case map[string]any:
				if s, ok := x["filter_regex"].(string); ok {
					filters = append(filters, s)
				} else {
					filters = append(filters, stringList(x["filter_regex"])...)
				}
			}
		}
	}
	mode = "show"
	for _, m := range modes {
		if m == "hide" || (m == "strip_refreshing" && mode == "show") {
			mode = m
		}
	}
	return mode, filters
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

// legacyWords splits s into words as the shell-like splitter Atlantis uses
// for version 2 files (github.com/google/shlex): whitespace separates,
// quotes group (a backslash escapes any character outside single quotes),
// and # at the start of a word comments out the rest of the line. The
// repocfg parser has already refused what it cannot split.
func legacyWords(s string) []string {
	var words []string
	var w strings.Builder
	inWord, escaped, comment := false, false, false
	var quote rune
	for _, c := range s {
		switch {
		case comment:
			comment = c != '\n'
		case escaped:
			w.WriteRune(c)
			escaped = false
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				w.WriteRune(c)
			}
		case c == '\\':
			escaped, inWord = true, true
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				w.WriteRune(c)
			}
		case c == '"' || c == '\'':
			quote, inWord = c, true
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case c == '#' && !inWord:
			comment = true
		default:
			w.WriteRune(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}
