package repocfg

import (
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree by hand rather than unmarshalling into
// structs, so that every error can name the key path and line it is about.
type decoder struct {
	file     string   // name used in messages, e.g. "atlantis.yaml"
	warnings []string // see Config.Warnings
	root     string   // the checkout, to expand dir globs in; "" to leave them
	// runCommands are the run steps of plan and apply stages, which a
	// version 2 file must let split into words (see checkLegacyShell).
	runCommands []runCommand
	// overrides are the project keys allowed_overrides governs (see
	// Config.overrides); serverWorkflows, when not nil, are workflows a
	// project may name without the file defining them.
	overrides       []override
	serverWorkflows map[string]Workflow
}

// runCommand is a run step's command and where it was written.
type runCommand struct {
	node *yaml.Node
	path string
	cmd  string
}

// warn records that the key at n asks for something Atoll does not do yet;
// why, if not empty, says what Atoll does instead.
func (d *decoder) warn(n *yaml.Node, path, why string) {
	msg := fmt.Sprintf("%s line %d: `%s` is accepted but not acted on by Atoll yet", d.file, n.Line, path)
	if why != "" {
		msg += " (" + why + ")"
	}
	d.warnings = append(d.warnings, msg)
}

// errorf returns an EINVALID error located at n: "<file> line N: <path>: msg".
func (d *decoder) errorf(n *yaml.Node, path, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = path + ": " + msg
	}
	return atoll.Errorf(atoll.EINVALID, "%s line %d: %s", d.file, n.Line, msg)
}

// typeError reports that n is not of the wanted kind ("a list", ...).
func (d *decoder) typeError(n *yaml.Node, path, want string) error {
	return d.errorf(n, path, "must be %s, got %s", want, describe(n))
}

// describe names a node's type the way a config author thinks of it.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "null"
		case "!!bool":
			return "a boolean"
		case "!!int", "!!float":
			return "a number"
		}
		return fmt.Sprintf("the string %q", n.Value)
	}
	return "an unknown node"
}

// resolve follows aliases (*anchor) to the node they stand for.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// isNull reports whether n is an explicit or implicit null ("key:" or "~");
// optional keys treat null as unset, as yaml.v3 does for pointer fields.
func isNull(n *yaml.Node) bool {
	n = resolve(n)
	return n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// join appends a key to a dotted path.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// index appends a list index to a path.
func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// field is one key/value pair of a mapping.
type field struct {
	name     string
	key, val *yaml.Node
}

// maxMergeDepth bounds nested merge keys; yaml.v3 accepts an anchor that
// merges itself, which would otherwise recurse forever.
const maxMergeDepth = 8

// fields returns the pairs of mapping n in file order. Merge keys (<<: *x)
// are expanded with explicitly written keys taking precedence, and a key
// written twice is an error (yaml.v3 does not check this for nodes).
func (d *decoder) fields(n *yaml.Node, path string) ([]field, error) {
	return d.mergedFields(n, path, 0)
}

func (d *decoder) mergedFields(n *yaml.Node, path string, depth int) ([]field, error) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		return nil, d.typeError(n, path, "a mapping")
	}
	var own, merged []field
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, d.errorf(k, path, "keys must be strings, got %s", describe(k))
		}
		if k.Tag == "!!merge" {
			if depth >= maxMergeDepth {
				return nil, d.errorf(k, path, "merge keys (<<) nested too deeply")
			}
			m, err := d.mergeSources(v, path, depth+1)
			if err != nil {
				return nil, err
			}
			merged = append(merged, m...)
			continue
		}
		if prev, ok := seen[k.Value]; ok {
			return nil, d.errorf(k, join(path, k.Value), "key is defined twice (first on line %d)", prev.Line)
		}
		seen[k.Value] = k
		own = append(own, field{name: k.Value, key: k, val: v})
	}
	for _, f := range merged {
		if _, ok := seen[f.name]; !ok {
			seen[f.name] = f.key
			own = append(own, f)
		}
	}
	return own, nil
}

// mergeSources expands the value of a merge key: one mapping or a list of
// mappings, earlier ones winning as the YAML merge-key spec says.
func (d *decoder) mergeSources(v *yaml.Node, path string, depth int) ([]field, error) {
	v = resolve(v)
	if v.Kind != yaml.SequenceNode {
		return d.mergedFields(v, path, depth)
	}
	var out []field
	seen := map[string]bool{}
	for _, src := range v.Content {
		fs, err := d.mergedFields(src, path, depth)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			if !seen[f.name] {
				seen[f.name] = true
				out = append(out, f)
			}
		}
	}
	return out, nil
}

// str decodes a string. Any non-null scalar is accepted as its text, like
// yaml.v3 does for string fields, so "terraform_version: 1.5" works.
func (d *decoder) str(n *yaml.Node, path string) (string, error) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", d.typeError(n, path, "a string")
	}
	return n.Value, nil
}

// text decodes a value that must be written as a string: unlike str, a
// number or boolean is refused, as Atlantis refuses them where it decodes
// into an untyped value (step commands, for one).
func (d *decoder) text(n *yaml.Node, path string) (string, error) {
	n = resolve(n)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		return "", d.typeError(n, path, "a string")
	}
	return n.Value, nil
}

// boolean decodes a true/false value. Quoted strings are rejected; plain
// YAML 1.1 spellings (yes/no/on/off) are accepted because yaml.v3, and so
// Atlantis, accept them for bool fields.
func (d *decoder) boolean(n *yaml.Node, path string) (bool, error) {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode {
		switch {
		case n.Tag == "!!bool":
			var b bool
			if err := n.Decode(&b); err == nil {
				return b, nil
			}
		case n.Tag == "!!str" && n.Style == 0:
			switch strings.ToLower(n.Value) {
			case "yes", "on", "y":
				return true, nil
			case "no", "off", "n":
				return false, nil
			}
		}
	}
	return false, d.typeError(n, path, "a boolean (true or false)")
}

// integer decodes a whole number; quoted numbers are rejected.
func (d *decoder) integer(n *yaml.Node, path string) (int, error) {
	n = resolve(n)
	var i int
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&i) != nil {
		return 0, d.typeError(n, path, "a whole number")
	}
	return i, nil
}

// strList decodes a list of strings, calling check (if any) on each item.
// A non-nil empty slice is returned for "[]" so callers can tell it from
// an absent key.
func (d *decoder) strList(n *yaml.Node, path string, check func(item *yaml.Node, path, s string) error) ([]string, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.typeError(n, path, "a list of strings")
	}
	out := make([]string, 0, len(n.Content))
	for i, item := range n.Content {
		p := index(path, i)
		s, err := d.str(item, p)
		if err != nil {
			return nil, err
		}
		if check != nil {
			if err := check(resolve(item), p, s); err != nil {
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// unknownKey reports a key the schema does not know.
func (d *decoder) unknownKey(f field, path string) error {
	return d.errorf(f.key, path, "unknown key %q", f.name)
}
