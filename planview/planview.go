// Package planview turns a plan's `terraform show -json` output into what
// the plan page and its API show: each resource change with a before/after
// attribute diff, and the output changes.
//
// Terraform keeps the real values of sensitive attributes, outputs and
// variables in that JSON, marked only by the before_sensitive and
// after_sensitive masks. Everything this package returns is redacted: a
// sensitive value becomes the marker "(sensitive value)", and so does any
// other string equal to a value known to be sensitive (Terraform does not
// always carry the mark along, e.g. terraform_data's output). Nothing
// outside the parsed resource and output changes (variables, prior state,
// planned values, configuration) is returned at all.
package planview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Plan is a redacted view of `terraform show -json`.
type Plan struct {
	FormatVersion    string     `json:"format_version"`
	TerraformVersion string     `json:"terraform_version"`
	Resources        []Resource `json:"resource_changes"`
	Outputs          []Output   `json:"output_changes"`

	secrets []string // values known to be sensitive, for Scrub
}

// Resource is one resource change.
type Resource struct {
	Address       string   `json:"address"`
	ModuleAddress string   `json:"module_address,omitempty"`
	Mode          string   `json:"mode"`
	Type          string   `json:"type"`
	Name          string   `json:"name"`
	ProviderName  string   `json:"provider_name,omitempty"`
	Deposed       string   `json:"deposed,omitempty"`
	Actions       []string `json:"actions"`
	// Action is create, update, delete, replace, read, no-op or forget
	// (or the actions joined by "," for an action this code does not know).
	Action string `json:"action"`
	// Symbol is Terraform's: + ~ - -/+ +/- <= (empty for no-op).
	Symbol    string `json:"symbol"`
	Reason    string `json:"action_reason,omitempty"`
	Importing bool   `json:"importing,omitempty"`
	// Attributes are the top-level attributes, changed or not (Change
	// "same"); those null on both sides are left out.
	Attributes []Attr `json:"attributes"`
}

// Changed reports whether the resource changes anything.
func (r Resource) Changed() bool { return r.Action != "no-op" }

// ChangedAttrs are the attributes that change.
func (r Resource) ChangedAttrs() []Attr { return filterAttrs(r.Attributes, true) }

// SameAttrs are the attributes that stay as they are.
func (r Resource) SameAttrs() []Attr { return filterAttrs(r.Attributes, false) }

// Attribute changes.
const (
	ChangeAdd    = "add"
	ChangeRemove = "remove"
	ChangeUpdate = "update"
	ChangeSame   = "same"
)

// Attr is one attribute's before and after.
type Attr struct {
	Name   string `json:"name"`
	Change string `json:"change"`
	Before *Value `json:"before,omitempty"` // nil: absent or null
	After  *Value `json:"after,omitempty"`
	// ForcesReplacement marks the attributes whose change replaces the
	// resource (Terraform's replace_paths).
	ForcesReplacement bool `json:"forces_replacement,omitempty"`
	// Children diff two objects attribute by attribute; Before and After
	// still hold the whole values.
	Children []Attr `json:"children,omitempty"`
}

// Changed reports whether the attribute changes.
func (a Attr) Changed() bool { return a.Change != ChangeSame }

// ChangedChildren are the children that change.
func (a Attr) ChangedChildren() []Attr { return filterAttrs(a.Children, true) }

// SameChildren are the children that stay as they are.
func (a Attr) SameChildren() []Attr { return filterAttrs(a.Children, false) }

func filterAttrs(as []Attr, changed bool) []Attr {
	var out []Attr
	for _, a := range as {
		if a.Changed() == changed {
			out = append(out, a)
		}
	}
	return out
}

// Value is a rendered value: JSON, with (sensitive value) and (known after
// apply) in place of what the page must not or cannot show.
type Value struct {
	Text string `json:"text"`
	// Sensitive and Unknown say that the whole value is hidden or unknown.
	Sensitive bool `json:"sensitive,omitempty"`
	Unknown   bool `json:"unknown,omitempty"`
}

// Multiline reports whether the value spans lines (an object or list).
func (v *Value) Multiline() bool { return v != nil && strings.Contains(v.Text, "\n") }

// Output is one output change.
type Output struct {
	Name      string   `json:"name"`
	Actions   []string `json:"actions"`
	Action    string   `json:"action"`
	Symbol    string   `json:"symbol"`
	Sensitive bool     `json:"sensitive,omitempty"`
	Before    *Value   `json:"before,omitempty"`
	After     *Value   `json:"after,omitempty"`
}

// Changed reports whether the output changes.
func (o Output) Changed() bool { return o.Action != "no-op" }

// The markers that stand for hidden values in the redacted trees.
type (
	sensitive struct{}
	unknown   struct{}
)

const (
	sensitiveText = "(sensitive value)"
	unknownText   = "(known after apply)"
)

// showJSON is the part of `terraform show -json` this package reads.
type showJSON struct {
	FormatVersion    string `json:"format_version"`
	TerraformVersion string `json:"terraform_version"`
	Variables        map[string]struct {
		Value json.RawMessage `json:"value"`
	} `json:"variables"`
	ResourceChanges []struct {
		Address       string `json:"address"`
		ModuleAddress string `json:"module_address"`
		Mode          string `json:"mode"`
		Type          string `json:"type"`
		Name          string `json:"name"`
		ProviderName  string `json:"provider_name"`
		Deposed       string `json:"deposed"`
		ActionReason  string `json:"action_reason"`
		Change        change `json:"change"`
	} `json:"resource_changes"`
	OutputChanges map[string]change `json:"output_changes"`
	Configuration struct {
		RootModule struct {
			Variables map[string]struct {
				Sensitive bool `json:"sensitive"`
			} `json:"variables"`
		} `json:"root_module"`
	} `json:"configuration"`
}

type change struct {
	Actions         []string        `json:"actions"`
	Before          json.RawMessage `json:"before"`
	After           json.RawMessage `json:"after"`
	AfterUnknown    json.RawMessage `json:"after_unknown"`
	BeforeSensitive json.RawMessage `json:"before_sensitive"`
	AfterSensitive  json.RawMessage `json:"after_sensitive"`
	ReplacePaths    [][]any         `json:"replace_paths"`
	Importing       json.RawMessage `json:"importing"`
}

type decodedChange struct {
	before, after, unknownMask, beforeMask, afterMask any
}

// Parse reads `terraform show -json` output. An empty input (a plan whose
// JSON retention pruned) is an error; "{}" is a plan without changes.
func Parse(b []byte) (*Plan, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New("planview: empty plan JSON")
	}
	var in showJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&in); err != nil {
		return nil, fmt.Errorf("planview: %w", err)
	}
	if major, _, _ := strings.Cut(in.FormatVersion, "."); in.FormatVersion != "" && major != "1" {
		return nil, fmt.Errorf("planview: unsupported format version %q", in.FormatVersion)
	}
	p := &Plan{FormatVersion: in.FormatVersion, TerraformVersion: in.TerraformVersion, Resources: []Resource{}, Outputs: []Output{}}

	// First every change is decoded and every sensitive value collected,
	// so that a secret is hidden wherever it appears, then the views.
	secrets := map[string]bool{}
	changes := make([]decodedChange, len(in.ResourceChanges))
	for i, rc := range in.ResourceChanges {
		d, err := decodeChange(rc.Change)
		if err != nil {
			return nil, fmt.Errorf("planview: %s: %w", rc.Address, err)
		}
		collectSecrets(d.before, d.beforeMask, secrets)
		collectSecrets(d.after, d.afterMask, secrets)
		changes[i] = d
	}
	outNames := make([]string, 0, len(in.OutputChanges))
	outs := make(map[string]decodedChange, len(in.OutputChanges))
	for name, oc := range in.OutputChanges {
		d, err := decodeChange(oc)
		if err != nil {
			return nil, fmt.Errorf("planview: output %s: %w", name, err)
		}
		collectSecrets(d.before, d.beforeMask, secrets)
		collectSecrets(d.after, d.afterMask, secrets)
		outNames, outs[name] = append(outNames, name), d
	}
	for name, v := range in.Configuration.RootModule.Variables {
		if !v.Sensitive {
			continue
		}
		if raw, ok := in.Variables[name]; ok {
			val, err := decode(raw.Value)
			if err != nil {
				return nil, fmt.Errorf("planview: variable %s: %w", name, err)
			}
			collectSecrets(val, true, secrets)
		}
	}
	for s := range secrets {
		p.secrets = append(p.secrets, s)
	}
	// Longest first, so that Scrub never leaves the tail of a longer secret
	// that contains a shorter one.
	sort.Slice(p.secrets, func(i, j int) bool { return len(p.secrets[i]) > len(p.secrets[j]) })

	for i, rc := range in.ResourceChanges {
		d := changes[i]
		action, symbol := actionOf(rc.Change.Actions)
		r := Resource{Address: rc.Address, ModuleAddress: rc.ModuleAddress, Mode: rc.Mode, Type: rc.Type, Name: rc.Name,
			ProviderName: rc.ProviderName, Deposed: rc.Deposed, Actions: nonNil(rc.Change.Actions), Action: action, Symbol: symbol,
			Reason: rc.ActionReason, Importing: present(rc.Change.Importing)}
		before := p.redact(d.before, d.beforeMask, nil)
		after := p.redact(d.after, d.afterMask, d.unknownMask)
		replace := map[string]bool{}
		for _, path := range rc.Change.ReplacePaths {
			replace[pathKey(path)] = true
		}
		r.Attributes = diffObjects(d.before, before, d.after, after, "", replace)
		p.Resources = append(p.Resources, r)
	}
	sort.Strings(outNames)
	for _, name := range outNames {
		d, oc := outs[name], in.OutputChanges[name]
		action, symbol := actionOf(oc.Actions)
		o := Output{Name: name, Actions: nonNil(oc.Actions), Action: action, Symbol: symbol,
			Sensitive: d.beforeMask == true || d.afterMask == true}
		if b := p.redact(d.before, d.beforeMask, nil); b != nil {
			o.Before = valueOf(b)
		}
		if a := p.redact(d.after, d.afterMask, d.unknownMask); a != nil {
			o.After = valueOf(a)
		}
		p.Outputs = append(p.Outputs, o)
	}
	return p, nil
}

// minScrub is the shortest secret Scrub replaces inside free text: shorter
// ones ("on", "1") would mangle the text and reveal more than they hide.
const minScrub = 4

// Scrub replaces, in free text such as the plan's log, every value this
// plan knows to be sensitive (of at least minScrub bytes). Terraform's own
// output hides sensitive values, but not always (see the package doc).
func (p *Plan) Scrub(text string) string {
	for _, s := range p.secrets {
		if len(s) >= minScrub && strings.Contains(text, s) {
			text = strings.ReplaceAll(text, s, sensitiveText)
		}
	}
	return text
}

func decodeChange(c change) (decodedChange, error) {
	var d decodedChange
	var err error
	for _, f := range []struct {
		raw json.RawMessage
		dst *any
	}{
		{c.Before, &d.before}, {c.After, &d.after}, {c.AfterUnknown, &d.unknownMask},
		{c.BeforeSensitive, &d.beforeMask}, {c.AfterSensitive, &d.afterMask},
	} {
		if *f.dst, err = decode(f.raw); err != nil {
			return d, err
		}
	}
	return d, nil
}

func decode(raw json.RawMessage) (any, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null"))
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// actionOf names a change's actions and gives Terraform's symbol.
func actionOf(actions []string) (string, string) {
	switch strings.Join(actions, ",") {
	case "create":
		return "create", "+"
	case "update":
		return "update", "~"
	case "delete":
		return "delete", "-"
	case "delete,create":
		return "replace", "-/+"
	case "create,delete":
		return "replace", "+/-"
	case "read":
		return "read", "<="
	case "no-op", "":
		return "no-op", ""
	case "forget":
		return "forget", "."
	}
	// An action newer than this code: never shown as no change.
	return strings.Join(actions, ","), "?"
}

// collectSecrets adds the strings of v under the sensitive mask to set.
func collectSecrets(v, mask any, set map[string]bool) {
	if mask == true {
		walkStrings(v, func(s string) {
			if s != "" {
				set[s] = true
			}
		})
		return
	}
	switch m := mask.(type) {
	case map[string]any:
		if obj, ok := v.(map[string]any); ok {
			for k, sub := range m {
				collectSecrets(obj[k], sub, set)
			}
		}
	case []any:
		if list, ok := v.([]any); ok {
			for i, sub := range m {
				if i < len(list) {
					collectSecrets(list[i], sub, set)
				}
			}
		}
	}
}

func walkStrings(v any, fn func(string)) {
	switch t := v.(type) {
	case string:
		fn(t)
	case json.Number:
		fn(t.String())
	case map[string]any:
		for _, sub := range t {
			walkStrings(sub, fn)
		}
	case []any:
		for _, sub := range t {
			walkStrings(sub, fn)
		}
	}
}

// redact returns a copy of v with the unknown parts (after_unknown) as
// unknown{} and the sensitive ones, and any string equal to a known secret,
// as sensitive{}.
func (p *Plan) redact(v, sensitiveMask, unknownMask any) any {
	if unknownMask != nil {
		v = applyMask(v, unknownMask, unknown{}, true)
	}
	v = applyMask(v, sensitiveMask, sensitive{}, false)
	return p.hideSecrets(v)
}

// applyMask replaces the parts of v where mask is true by mark. insert
// adds marks for keys v lacks (unknown values are left out of "after").
func applyMask(v, mask, mark any, insert bool) any {
	if mask == true {
		return mark
	}
	switch m := mask.(type) {
	case map[string]any:
		obj, ok := v.(map[string]any)
		if !ok {
			if v != nil || !insert {
				return v
			}
			obj = map[string]any{}
		}
		out := make(map[string]any, len(obj))
		for k, sub := range obj {
			out[k] = sub
		}
		for k, sub := range m {
			cur, has := obj[k]
			if !has && !(insert && sub == true) {
				continue
			}
			out[k] = applyMask(cur, sub, mark, insert)
		}
		if len(out) == 0 && v == nil {
			return nil
		}
		return out
	case []any:
		list, ok := v.([]any)
		if !ok {
			return v
		}
		out := append([]any(nil), list...)
		for i, sub := range m {
			if i < len(out) {
				out[i] = applyMask(out[i], sub, mark, insert)
			}
		}
		return out
	}
	return v
}

// hideSecrets replaces strings equal to a known sensitive value.
func (p *Plan) hideSecrets(v any) any {
	if len(p.secrets) == 0 {
		return v
	}
	switch t := v.(type) {
	case string:
		if p.isSecret(t) {
			return sensitive{}
		}
	case json.Number:
		if p.isSecret(t.String()) {
			return sensitive{}
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, sub := range t {
			out[k] = p.hideSecrets(sub)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, sub := range t {
			out[i] = p.hideSecrets(sub)
		}
		return out
	}
	return v
}

func (p *Plan) isSecret(s string) bool {
	for _, sec := range p.secrets {
		if s == sec {
			return true
		}
	}
	return false
}

// pathKey is a replace path as the dotted key diffObjects uses.
func pathKey(path []any) string {
	parts := make([]string, len(path))
	for i, e := range path {
		parts[i] = fmt.Sprint(e)
	}
	return strings.Join(parts, ".")
}
