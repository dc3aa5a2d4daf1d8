package repocfg

import (
	"gopkg.in/yaml.v3"
)

// builtinSteps are the steps written as a bare name or with extra_args.
var builtinSteps = map[string]bool{
	"init": true, "plan": true, "show": true, "apply": true, "policy_check": true,
	"import": true, "state_rm": true, "version": true,
}

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
		if *dst, err = d.stage(f.val, join(path, f.name)); err != nil {
			return err
		}
	}
	return nil
}

// stage decodes {steps: [...]}. Missing or null steps mean default steps
// (nil); "steps: []" means none (empty, non-nil).
func (d *decoder) stage(n *yaml.Node, path string) ([]Step, error) {
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
			return Step{}, d.errorf(n, path, "unknown step %q", n.Value)
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
		return d.stepArgs(f, fp, "command")
	case f.name == "env":
		return d.stepArgs(f, fp, "name")
	case builtinSteps[f.name]:
		return d.builtinArgs(f, fp)
	}
	return Step{}, d.unknownKey(f, path)
}

// stepArgs keeps a mapping-valued step as decoded, requiring one key.
func (d *decoder) stepArgs(f field, path, required string) (Step, error) {
	fs, err := d.fields(f.val, path)
	if err != nil {
		return Step{}, err
	}
	args := make(map[string]any, len(fs))
	for _, a := range fs {
		var v any
		if err := resolve(a.val).Decode(&v); err != nil {
			return Step{}, d.errorf(a.val, join(path, a.name), "%v", err)
		}
		args[a.name] = v
	}
	if _, ok := args[required]; !ok {
		return Step{}, d.errorf(resolve(f.val), path, "%s is required", required)
	}
	return Step{Name: f.name, Args: args}, nil
}

// builtinArgs decodes {plan: {extra_args: [...]}}, the only option built-in
// steps take.
func (d *decoder) builtinArgs(f field, path string) (Step, error) {
	s := Step{Name: f.name}
	if isNull(f.val) {
		return s, nil
	}
	fs, err := d.fields(f.val, path)
	if err != nil {
		return s, err
	}
	for _, a := range fs {
		if a.name != "extra_args" {
			return s, d.unknownKey(a, path)
		}
		args, err := d.strList(a.val, join(path, a.name), nil)
		if err != nil {
			return s, err
		}
		s.Args = map[string]any{"extra_args": args}
	}
	return s, nil
}
