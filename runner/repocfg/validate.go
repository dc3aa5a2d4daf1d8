package repocfg

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

var (
	// Names may contain "/" as in Atlantis (e.g. "prod/network").
	validName = regexp.MustCompile(`^[A-Za-z0-9_./-]+$`)
	// Terraform workspace names end up in state paths and shell commands;
	// this is the safe subset Terraform users actually use.
	validWorkspace = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

func checkName(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if !validName.MatchString(s) {
		return fmt.Errorf("%q may contain only letters, digits, '_', '.', '/' and '-'", s)
	}
	return nil
}

func checkWorkspace(s string) error {
	if !validWorkspace.MatchString(s) {
		return fmt.Errorf("%q is not a valid workspace name (letters, digits, '_', '.' and '-', starting with a letter or digit)", s)
	}
	return nil
}

func checkRequirement(s string) error {
	if !slices.Contains(Requirements, s) {
		return fmt.Errorf("unknown requirement %q (allowed: %s)", s, strings.Join(Requirements, ", "))
	}
	return nil
}

// checkGlob validates a when_modified pattern; a leading "!" (exclusion, as
// in .dockerignore) is not part of the glob.
func checkGlob(s string) error {
	g := strings.TrimPrefix(s, "!")
	if g == "" {
		return errors.New("pattern must not be empty")
	}
	if !doublestar.ValidatePattern(g) {
		return fmt.Errorf("%q is not a valid glob pattern", s)
	}
	return nil
}

// cleanDir turns a configured or commented dir into the canonical form used
// everywhere: slash-separated, relative, cleaned, "." for the root. Dirs that
// could leave the checkout are rejected rather than cleaned, since cleaning
// "a/../.." silently would hide a mistake (or an attack).
func cleanDir(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("must not be empty (use \".\" for the repository root)")
	}
	if strings.HasPrefix(dir, "/") {
		return "", fmt.Errorf("%q must be relative to the repository root, not absolute", dir)
	}
	if slices.Contains(strings.Split(dir, "/"), "..") {
		//lint:ignore ST1005 ".." is the path element users must remove, not punctuation
		return "", errors.New("must not contain ..")
	}
	return path.Clean(dir), nil
}

// checkProjects runs the checks that span projects or sections, in project
// order so the first problem in the file is the one reported.
func (d *decoder) checkProjects(cfg *Config, nodes []projectNodes) error {
	type key struct{ dir, workspace string }
	groups := map[key]int{}
	for _, p := range cfg.Projects {
		groups[key{p.Dir, p.Workspace}]++
	}
	names := map[string]int{}
	for i, p := range cfg.Projects {
		pn := nodes[i]
		if p.Name != "" {
			if j, ok := names[p.Name]; ok {
				return d.errorf(pn.name, join(pn.path, "name"), "project name %q is already used by %s (line %d)", p.Name, nodes[j].path, nodes[j].name.Line)
			}
			names[p.Name] = i
		}
		if n := groups[key{p.Dir, p.Workspace}]; n > 1 && p.Name == "" {
			return d.errorf(pn.node, pn.path, "%d projects have dir %q and workspace %q, so each must have a name", n, p.Dir, p.Workspace)
		}
		if p.Workflow != "" && p.Workflow != DefaultWorkflow {
			if _, ok := cfg.Workflows[p.Workflow]; !ok {
				return d.errorf(pn.workflow, join(pn.path, "workflow"), "workflow %q is not defined in workflows%s", p.Workflow, defined(cfg.Workflows))
			}
		}
	}
	return nil
}

// defined lists the workflow names for an error message.
func defined(ws map[string]Workflow) string {
	if len(ws) == 0 {
		return ""
	}
	names := make([]string, 0, len(ws))
	for n := range ws {
		names = append(names, n)
	}
	sort.Strings(names)
	return " (defined: " + strings.Join(names, ", ") + ")"
}
