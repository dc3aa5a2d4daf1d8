package planview

import (
	"reflect"
	"sort"
)

// diffObjects diffs the attributes of two objects. raw* are Terraform's
// values, which say whether something changed (a secret that changes is
// an update even though both sides show the same marker); red* are their
// redacted copies, the only ones rendered. prefix is the dotted path of
// the objects, for replace paths.
func diffObjects(rawB, redB, rawA, redA any, prefix string, replace map[string]bool) []Attr {
	rb, _ := rawB.(map[string]any)
	ra, _ := rawA.(map[string]any)
	db, _ := redB.(map[string]any)
	da, _ := redA.(map[string]any)
	keys := map[string]bool{}
	for _, m := range []map[string]any{db, da} {
		for k := range m {
			keys[k] = true
		}
	}
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	out := []Attr{}
	for _, k := range names {
		b, a := db[k], da[k]
		if b == nil && a == nil {
			continue // null on both sides: Terraform does not show it either
		}
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		attr := Attr{Name: k, ForcesReplacement: replace[path]}
		if b != nil {
			attr.Before = valueOf(b)
		}
		if a != nil {
			attr.After = valueOf(a)
		}
		switch {
		case b == nil:
			attr.Change = ChangeAdd
		case a == nil:
			attr.Change = ChangeRemove
		case reflect.DeepEqual(rb[k], ra[k]) && reflect.DeepEqual(b, a):
			attr.Change = ChangeSame
		default:
			attr.Change = ChangeUpdate
			_, bObj := b.(map[string]any)
			_, aObj := a.(map[string]any)
			if bObj && aObj {
				attr.Children = diffObjects(rb[k], b, ra[k], a, path, replace)
			}
		}
		out = append(out, attr)
	}
	return out
}
