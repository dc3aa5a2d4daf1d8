package runner

import (
	"path"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
)

// ApprovalPolicy says which plans must be approved in Atoll (the dashboard
// or the API) before they are applied: --plan-approval, comma-separated
// patterns, each `*` (every plan), a repository's full name (every project
// of it) or its full name and a project, where project is a project's name
// or its dir. A full name has as many parts as the host gives it:
// `owner/repo` on GitHub, `org/project/repo` on Azure DevOps. So a pattern
// is read against each repository: its first parts (as many as the
// repository's full name has) match the repository, and whatever follows
// them matches the project. Each part may be a glob (path.Match: `*`, `?`,
// `[...]`); a project part of `*` matches every project, dirs with slashes
// included.
type ApprovalPolicy struct {
	patterns []approvalPattern
}

type approvalPattern struct {
	all   bool
	parts []string // split on "/"; none is empty
}

// ParseApprovalPolicy parses --plan-approval; the empty string requires
// nothing.
func ParseApprovalPolicy(s string) (*ApprovalPolicy, error) {
	p := &ApprovalPolicy{}
	for _, raw := range strings.Split(s, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		if raw == "*" {
			p.patterns = append(p.patterns, approvalPattern{all: true})
			continue
		}
		parts := strings.Split(raw, "/")
		if len(parts) < 2 || slices.Contains(parts, "") {
			return nil, atoll.Errorf(atoll.EINVALID, "--plan-approval: %q is not *, owner/repo[/project] or org/project/repo[/project].", raw)
		}
		for _, g := range parts {
			if _, err := path.Match(g, ""); err != nil {
				return nil, atoll.Errorf(atoll.EINVALID, "--plan-approval: %q has a bad glob: %v.", raw, err)
			}
		}
		p.patterns = append(p.patterns, approvalPattern{parts: parts})
	}
	return p, nil
}

// Requires reports whether a plan of project (name, may be "") in dir of
// repo (its full name: owner/name, or org/project/name on Azure DevOps)
// must be approved before it is applied. A nil policy requires nothing.
func (p *ApprovalPolicy) Requires(repo, project, dir string) bool {
	if p == nil {
		return false
	}
	names := strings.Split(repo, "/")
	dir = strings.Trim(path.Clean("/"+dir), "/")
	if dir == "" {
		dir = "."
	}
	for _, pat := range p.patterns {
		if pat.all {
			return true
		}
		if pat.matches(names, project, dir) {
			return true
		}
	}
	return false
}

func (pat approvalPattern) matches(names []string, project, dir string) bool {
	if len(pat.parts) < len(names) {
		return false // fewer parts than the full name: never a repository
	}
	for i, n := range names {
		if !match(pat.parts[i], n) {
			return false
		}
	}
	if len(pat.parts) == len(names) {
		return true // the repository: every project
	}
	// The rest is the project, a dir may have slashes.
	rest := strings.Join(pat.parts[len(names):], "/")
	return rest == "*" || (project != "" && match(rest, project)) || match(rest, dir)
}

// String is the policy as --plan-approval would give it.
func (p *ApprovalPolicy) String() string {
	if p == nil {
		return ""
	}
	var out []string
	for _, pat := range p.patterns {
		if pat.all {
			out = append(out, "*")
		} else {
			out = append(out, strings.Join(pat.parts, "/"))
		}
	}
	return strings.Join(out, ",")
}

func match(pattern, s string) bool {
	ok, _ := path.Match(pattern, s)
	return ok
}
