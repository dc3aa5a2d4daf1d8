package repocfg

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/bmatcuk/doublestar/v4"
)

var (
	// Names are what Atlantis allows: URL-safe characters, plus "/" (e.g.
	// "prod/network").
	validName = regexp.MustCompile(`^[A-Za-z0-9_.~/-]+$`)
	// Terraform workspace names end up in state paths and shell commands;
	// this is the safe subset Terraform users actually use.
	validWorkspace = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
)

// CheckPool reports whether s may name an execution pool: atoll.PoolLocal
// ("local"), or a DNS label (lower-case letters, digits and '-', 1 to 63
// characters, starting and ending with a letter or digit).
func CheckPool(s string) error {
	if atoll.ValidPool(s) {
		return nil
	}
	return fmt.Errorf("%q is not a valid execution pool name: use %s, or 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit", s, atoll.PoolLocal)
}

func checkName(s string) error {
	if s == "" {
		return errors.New("must not be empty")
	}
	if !validName.MatchString(s) {
		return fmt.Errorf("%q may contain only letters, digits, '_', '.', '~', '/' and '-'", s)
	}
	return nil
}

func checkWorkspace(s string) error {
	if strings.Contains(s, "..") {
		return fmt.Errorf("%q must not contain .. (as in Atlantis)", s)
	}
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

// configDir checks and cleans a project dir from atlantis.yaml. Like
// Atlantis, it refuses ".." anywhere in it and reads a leading "/" as the
// repository root.
func configDir(dir string) (string, error) {
	if strings.Contains(dir, "..") {
		//lint:ignore ST1005 ".." is the text users must remove, not punctuation
		return "", errors.New("must not contain ..")
	}
	if hasGlob(dir) && !doublestar.ValidatePattern(dir) {
		return "", fmt.Errorf("%q is not a valid glob pattern", dir)
	}
	if dir != "" {
		if dir = strings.TrimLeft(dir, "/"); dir == "" {
			dir = "."
		}
	}
	return cleanDir(dir)
}

// hasGlob reports whether s holds glob pattern characters.
func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// checkBranch checks a project's branch: a regular expression between
// slashes, as in Atlantis.
func checkBranch(s string) error {
	if len(s) < 2 || !strings.HasPrefix(s, "/") || !strings.HasSuffix(s, "/") {
		return fmt.Errorf("%q must be a regular expression that begins and ends with a slash, e.g. /main/", s)
	}
	if _, err := regexp.Compile(s[1 : len(s)-1]); err != nil {
		return fmt.Errorf("%q is not a valid regular expression: %v", s, err)
	}
	return nil
}

// Distributions are the values of terraform_distribution.
var Distributions = []string{"terraform", "opentofu"}

// SilenceStages are the values of a project's silence_pr_comments.
var SilenceStages = []string{"plan", "apply"}

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
			_, server := d.serverWorkflows[p.Workflow]
			if _, ok := cfg.Workflows[p.Workflow]; !ok && !server {
				return d.errorf(pn.workflow, join(pn.path, "workflow"), "workflow %q is not defined in workflows%s", p.Workflow, defined(cfg.Workflows, d.serverWorkflows))
			}
		}
	}
	return nil
}

// defined lists the workflow names for an error message.
func defined(maps ...map[string]Workflow) string {
	var names []string
	for _, ws := range maps {
		for n := range ws {
			if !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return ""
	}
	sort.Strings(names)
	return " (defined: " + strings.Join(names, ", ") + ")"
}

// checkDependsOn checks depends_on beyond what Atlantis does: every name
// must be a project of the file, and the dependencies must not form a cycle
// (which no apply order could satisfy).
func (d *decoder) checkDependsOn(cfg *Config, nodes []projectNodes) error {
	byName := map[string]int{}
	for i, p := range cfg.Projects {
		if p.Name != "" {
			byName[p.Name] = i
		}
	}
	for i, pn := range nodes {
		for j, dep := range pn.dependsOnNames {
			k, ok := byName[dep]
			p := index(join(pn.path, "depends_on"), j)
			switch {
			case !ok:
				return d.errorf(pn.dependsOn[j], p, "no project is named %q", dep)
			case k == i:
				return d.errorf(pn.dependsOn[j], p, "project %q depends on itself", dep)
			}
		}
	}
	// Depth-first search; the first cycle found in file order is reported
	// at the depends_on entry that closes it.
	const (
		unseen = iota
		active
		done
	)
	state := make([]int, len(nodes))
	var stack []int
	var visit func(i int) error
	visit = func(i int) error {
		state[i] = active
		stack = append(stack, i)
		for j, dep := range nodes[i].dependsOnNames {
			k := byName[dep]
			switch state[k] {
			case active:
				var names []string
				for _, s := range stack[slices.Index(stack, k):] {
					names = append(names, cfg.Projects[s].Name)
				}
				names = append(names, dep)
				return d.errorf(nodes[i].dependsOn[j], index(join(nodes[i].path, "depends_on"), j),
					"depends_on forms a cycle: %s", strings.Join(names, " -> "))
			case unseen:
				if err := visit(k); err != nil {
					return err
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = done
		return nil
	}
	for i := range nodes {
		if state[i] == unseen {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	return nil
}
