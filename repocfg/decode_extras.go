package repocfg

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"gopkg.in/yaml.v3"
)

// Most keys in this file are ones Atoll accepts, checks like Atlantis does,
// and does not act on yet: each records a warning when its value asks for
// something other than what Atoll does anyway. repo_locks is acted on
// (runner/lockmode.go).

// Lock modes (repo_locks.mode): which command takes a project's lock.
const (
	LockOnPlan   = "on_plan"  // plan takes it (Atlantis's default)
	LockOnApply  = "on_apply" // apply takes it; plans take and check none
	LockDisabled = "disabled" // no command takes or checks it
)

// RepoLocksModes are the values of repo_locks.mode.
var RepoLocksModes = []string{LockDisabled, LockOnPlan, LockOnApply}

// repoLocks decodes {mode: ...} (top level or per project) and returns the
// mode; without one it is on_plan, as in Atlantis.
func (d *decoder) repoLocks(f field, path string) (string, error) {
	fs, err := d.fields(f.val, path)
	if err != nil {
		return "", err
	}
	mode := LockOnPlan
	for _, m := range fs {
		mp := join(path, m.name)
		if m.name != "mode" {
			return "", d.unknownKey(m, path)
		}
		if isNull(m.val) {
			continue
		}
		if mode, err = d.str(m.val, mp); err != nil {
			return "", err
		}
		if err := d.check(m.val, mp, mode, oneOf(RepoLocksModes)); err != nil {
			return "", err
		}
	}
	return mode, nil
}

// AutodiscoverModes are the values of autodiscover.mode.
var AutodiscoverModes = []string{"auto", "enabled", "disabled"}

// autodiscover decodes {mode: ..., ignore_paths: [...]}; a mode left out
// is "auto", as in Atlantis.
func (d *decoder) autodiscover(f field, path string) (*Autodiscover, error) {
	fs, err := d.fields(f.val, path)
	if err != nil {
		return nil, err
	}
	a := &Autodiscover{Mode: "auto"}
	for _, af := range fs {
		ap := join(path, af.name)
		if isNull(af.val) && (af.name == "mode" || af.name == "ignore_paths") {
			continue
		}
		switch af.name {
		case "mode":
			if a.Mode, err = d.str(af.val, ap); err == nil {
				err = d.check(af.val, ap, a.Mode, oneOf(AutodiscoverModes))
			}
		case "ignore_paths":
			a.IgnorePaths, err = d.strList(af.val, ap, func(item *yaml.Node, p, s string) error {
				return d.check(item, p, s, checkIgnorePath)
			})
		default:
			err = d.unknownKey(af, path)
		}
		if err != nil {
			return nil, err
		}
	}
	return a, nil
}

// checkIgnorePath validates an autodiscover.ignore_paths pattern as
// Atlantis does.
func checkIgnorePath(s string) error {
	if strings.HasPrefix(s, "/") {
		return errors.New("pattern must not begin with a slash '/'")
	}
	if !doublestar.ValidatePattern(s) {
		return fmt.Errorf("%q is not a valid glob pattern", s)
	}
	return nil
}

// oneOf returns a checker that accepts only the given values.
func oneOf(allowed []string) func(string) error {
	return func(s string) error {
		for _, a := range allowed {
			if s == a {
				return nil
			}
		}
		return fmt.Errorf("%q is not one of %s", s, strings.Join(allowed, ", "))
	}
}

// policies type-checks the policies mapping. Atlantis reads policies from
// the server-side config only; in atlantis.yaml it decodes them strictly
// and then ignores them, and so does Atoll.
func (d *decoder) policies(n *yaml.Node, path string) error {
	return d.schema(n, path, map[string]kind{
		"conftest_version": kindString, "owners": kindOwners, "policy_sets": kindPolicySets,
		"sticky_policy_approvals": kindBool, "policy_item_regex": kindString, "approve_count": kindInt,
	})
}

// kind is the type of a value in a schema decoded only to be checked.
type kind int

const (
	kindString kind = iota
	kindBool
	kindInt
	kindStrings
	kindOwners
	kindPolicySets
)

// schema checks that mapping n has only the given keys, with values of the
// given kinds; null values are allowed, as for any optional key.
func (d *decoder) schema(n *yaml.Node, path string, keys map[string]kind) error {
	fs, err := d.fields(n, path)
	if err != nil {
		return err
	}
	for _, f := range fs {
		fp := join(path, f.name)
		k, ok := keys[f.name]
		if !ok {
			return d.unknownKey(f, path)
		}
		if isNull(f.val) {
			continue
		}
		switch k {
		case kindString:
			_, err = d.str(f.val, fp)
		case kindBool:
			_, err = d.boolean(f.val, fp)
		case kindInt:
			_, err = d.integer(f.val, fp)
		case kindStrings:
			_, err = d.strList(f.val, fp, nil)
		case kindOwners:
			err = d.schema(f.val, fp, map[string]kind{"users": kindStrings, "teams": kindStrings})
		case kindPolicySets:
			list := resolve(f.val)
			if list.Kind != yaml.SequenceNode {
				return d.typeError(list, fp, "a list of policy sets")
			}
			for i, item := range list.Content {
				err = d.schema(item, index(fp, i), map[string]kind{
					"path": kindString, "source": kindString, "name": kindString, "owners": kindOwners,
					"approve_count": kindInt, "sticky_policy_approvals": kindBool,
					"policy_item_regex": kindString, "prevent_self_approve": kindBool,
				})
				if err != nil {
					return err
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
