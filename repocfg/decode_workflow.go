package repocfg

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// envName is what an env step may name: a portable variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// builtinSteps are the steps written as a bare name or with extra_args:
// Atlantis's step names other than run, env and multienv.
var builtinSteps = map[string]bool{
	"init": true, "plan": true, "show": true, "apply": true, "policy_check": true,
	"import": true, "state_rm": true,
}

// RunOutputs are the values of a run step's output option; a list may also
// hold {filter_regex: ...} entries.
var RunOutputs = []string{"show", "hide", "strip_refreshing"}

// MultienvOutputs are the values of a multienv step's output option.
var MultienvOutputs = []string{"show", "hide"}

// workflows decodes the workflows mapping.
func (d *decoder) workflows(n *yaml.Node, path string) (map[string]Workflow, error) {
	fs, err := d.fields(n, path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]Workflow, len(fs))
	for _, f := range fs {
		fp := join(path, f.name)
		if f.name == "" {
			return nil, d.errorf(f.key, path, "workflow name must not be empty")
		}
		w := Workflow{Name: f.name}
		if !isNull(f.val) { // "myworkflow:" alone defines a workflow of default stages
			if err := d.workflow(f.val, fp, &w); err != nil {
				return nil, err
			}
		}
		out[f.name] = w
	}
	return out, nil
}

// workflow decodes one workflow's stages.
func (d *decoder) workflow(n *yaml.Node, path string, w *Workflow) error {
	fs, err := d.fields(n, path)
	if err != nil {
		return err
	}
	for _, f := range fs {
		var dst *[]Step
		switch f.name {
		case "plan":
			dst = &w.Plan
		case "apply":
			dst = &w.Apply
		case "policy_check":
			dst = &w.PolicyCheck
		case "import":
			dst = &w.Import
		case "state_rm":
			dst = &w.StateRm
		default:
			return d.unknownKey(f, path)
		}
		if isNull(f.val) {
			continue
		}
		if *dst, err = d.stage(f.val, join(path, f.name), f.name == "plan" || f.name == "apply"); err != nil {
			return err
		}
	}
	return nil
}

// stage decodes {steps: [...]}. Missing or null steps mean default steps
// (nil); "steps: []" means none (empty, non-nil).
func (d *decoder) stage(n *yaml.Node, path string, legacyShell bool) ([]Step, error) {
	fs, err := d.fields(n, path)
	if err != nil {
		return nil, err
	}
	var steps []Step
	for _, f := range fs {
		if f.name != "steps" {
			return nil, d.unknownKey(f, path)
		}
		if isNull(f.val) {
			continue
		}
		list := resolve(f.val)
		fp := join(path, f.name)
		if list.Kind != yaml.SequenceNode {
			return nil, d.typeError(list, fp, "a list of steps")
		}
		steps = make([]Step, 0, len(list.Content))
		for i, item := range list.Content {
			s, err := d.step(item, index(fp, i))
			if err != nil {
				return nil, err
			}
			if legacyShell && s.Name == "run" {
				d.runCommands = append(d.runCommands, runCommand{node: resolve(item), path: index(fp, i), cmd: s.Args["command"].(string)})
			}
			steps = append(steps, s)
		}
	}
	return steps, nil
}

// step decodes one step: a built-in name, or a one-key mapping.
func (d *decoder) step(n *yaml.Node, path string) (Step, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && !isNull(n) {
		if !builtinSteps[n.Value] {
			return Step{}, d.errorf(n, path, "unknown step %q%s", n.Value, stepHint(n.Value))
		}
		return Step{Name: n.Value}, nil
	}
	if n.Kind != yaml.MappingNode {
		return Step{}, d.typeError(n, path, "a step name or a one-key mapping")
	}
	fs, err := d.fields(n, path)
	if err != nil {
		return Step{}, err
	}
	if len(fs) != 1 {
		return Step{}, d.errorf(n, path, "a step must have exactly one key, got %d", len(fs))
	}
	f := fs[0]
	fp := join(path, f.name)
	v := resolve(f.val)
	switch {
	case f.name == "run" || f.name == "multienv":
		if v.Kind == yaml.ScalarNode {
			if isNull(v) || v.Value == "" {
				return Step{}, d.errorf(v, fp, "command must not be empty")
			}
			return Step{Name: f.name, Args: map[string]any{"command": v.Value}}, nil
		}
		return d.commandStep(f, fp)
	case f.name == "env":
		return d.commandStep(f, fp)
	case builtinSteps[f.name]:
		return d.builtinArgs(f, fp)
	}
	return Step{}, d.unknownKey(f, path)
}

// stepHint explains the bare step names Atlantis users may expect to work.
func stepHint(name string) string {
	switch name {
	case "run", "env", "multienv":
		return fmt.Sprintf(" (%s needs a value: %s: ...)", name, name)
	}
	return " (maybe you omitted the run key)"
}

// commandStep decodes the mapping form of run, multienv and env steps,
// keeping the options as decoded. The checks are Atlantis's, and also
// those it leaves to run time or skips: option types, output values,
// filter_regex patterns, and env's one of value or command.
func (d *decoder) commandStep(f field, path string) (Step, error) {
	fs, err := d.fields(f.val, path)
	if err != nil {
		return Step{}, err
	}
	allowed := map[string]bool{"command": true, "shell": true, "shellArgs": true, "output": true}
	if f.name == "env" {
		allowed = map[string]bool{"name": true, "value": true, "command": true, "shell": true, "shellArgs": true}
	}
	args := make(map[string]any, len(fs))
	nodes := make(map[string]field, len(fs))
	for _, a := range fs {
		ap := join(path, a.name)
		if !allowed[a.name] {
			return Step{}, d.errorf(a.key, path, "unknown key %q (%s steps take %s)", a.name, f.name, keyList(allowed))
		}
		nodes[a.name] = a
		switch a.name {
		case "command", "shell", "name":
			var s string
			if s, err = d.text(a.val, ap); err == nil && s == "" {
				err = d.errorf(resolve(a.val), ap, "must not be empty")
			}
			if err == nil && a.name == "name" && !envName.MatchString(s) {
				err = d.errorf(resolve(a.val), ap, "%q is not a valid environment variable name", s)
			}
			args[a.name] = s
		case "value":
			v := resolve(a.val)
			if v.Kind != yaml.ScalarNode || isNull(v) {
				err = d.typeError(v, ap, "a string")
			}
			args[a.name] = v.Value
		case "shellArgs":
			args[a.name], err = d.shellArgs(a.val, ap)
		case "output":
			args[a.name], err = d.output(a.val, ap, f.name)
		}
		if err != nil {
			return Step{}, err
		}
	}
	at := resolve(f.val)
	if _, ok := args["shell"]; ok && args["command"] == nil {
		return Step{}, d.errorf(nodes["shell"].key, path, "shell needs command")
	}
	if _, ok := args["shellArgs"]; ok && args["shell"] == nil {
		return Step{}, d.errorf(nodes["shellArgs"].key, path, "shellArgs needs shell")
	}
	if f.name == "env" {
		if args["name"] == nil {
			return Step{}, d.errorf(at, path, "name is required")
		}
		_, hasValue := args["value"]
		_, hasCommand := args["command"]
		if hasValue == hasCommand {
			return Step{}, d.errorf(at, path, "needs exactly one of value and command")
		}
	} else if args["command"] == nil {
		return Step{}, d.errorf(at, path, "command is required")
	}
	return Step{Name: f.name, Args: args}, nil
}

// keyList names the keys of a set for a message, sorted.
func keyList(m map[string]bool) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ", ")
}

// shellArgs decodes a string or a list of strings; as in Atlantis, a
// number or boolean in the list is refused, not read as text.
func (d *decoder) shellArgs(n *yaml.Node, path string) (any, error) {
	if v := resolve(n); v.Kind == yaml.SequenceNode {
		l, err := d.strList(v, path, func(item *yaml.Node, p, _ string) error {
			_, err := d.text(item, p)
			return err
		})
		return l, err
	}
	return d.text(n, path)
}

// output decodes a run or multienv step's output option: a string, or for
// run a list of strings and {filter_regex: pattern or patterns}.
func (d *decoder) output(n *yaml.Node, path, step string) (any, error) {
	v := resolve(n)
	allowed := RunOutputs
	if step == "multienv" {
		allowed = MultienvOutputs
	}
	if v.Kind != yaml.SequenceNode || step != "run" {
		s, err := d.text(v, path)
		if err == nil {
			err = d.check(v, path, s, oneOf(allowed))
		}
		return s, err
	}
	out := make([]any, 0, len(v.Content))
	for i, item := range v.Content {
		ip := index(path, i)
		item = resolve(item)
		if item.Kind != yaml.MappingNode {
			s, err := d.text(item, ip)
			if err == nil {
				err = d.check(item, ip, s, oneOf(allowed))
			}
			if err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		fs, err := d.fields(item, ip)
		if err != nil {
			return nil, err
		}
		m := map[string]any{}
		for _, f := range fs {
			if f.name != "filter_regex" {
				return nil, d.errorf(f.key, ip, "unknown key %q (only filter_regex)", f.name)
			}
			fp := join(ip, f.name)
			check := func(item *yaml.Node, p, s string) error {
				_, err := regexp.Compile(s)
				return d.wrap(item, p, err)
			}
			if rv := resolve(f.val); rv.Kind == yaml.SequenceNode {
				m[f.name], err = d.strList(rv, fp, check)
			} else {
				var s string
				if s, err = d.text(rv, fp); err == nil {
					err = check(rv, fp, s)
				}
				m[f.name] = s
			}
			if err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// builtinArgs decodes {plan: {extra_args: [...]}}, the only option built-in
// steps take. As in Atlantis, "plan:" without a value is an error.
func (d *decoder) builtinArgs(f field, path string) (Step, error) {
	s := Step{Name: f.name}
	if isNull(f.val) {
		return s, d.errorf(f.key, path, "needs a mapping such as {extra_args: [...]}, or write the step as just %q", f.name)
	}
	fs, err := d.fields(f.val, path)
	if err != nil {
		return s, err
	}
	for _, a := range fs {
		if a.name != "extra_args" {
			return s, d.unknownKey(a, path)
		}
		if isNull(a.val) {
			continue
		}
		args, err := d.strList(a.val, join(path, a.name), nil)
		if err != nil {
			return s, err
		}
		s.Args = map[string]any{"extra_args": args}
	}
	return s, nil
}
