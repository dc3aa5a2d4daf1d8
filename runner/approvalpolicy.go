package runner

import (
	"path"
	"strings"

	"github.com/atollhq/atoll"
)

// ApprovalPolicy says which plans must be approved in Atoll (the dashboard
// or the API) before they are applied: --plan-approval, comma-separated
// patterns, each `*` (every plan), `owner/repo` (every project of a
// repository) or `owner/repo/project`, where project is a project's name or
// its dir. Each part may be a glob (path.Match: `*`, `?`, `[...]`); a last
// part of `*` matches every project, dirs with slashes included.
type ApprovalPolicy struct {
	patterns []approvalPattern
}

type approvalPattern struct {
	all         bool
	owner, repo string
	project     string // "" matches every project
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
		parts := strings.SplitN(raw, "/", 3)
		if len(parts) < 2 || parts[0] == "" || parts[1] == "" || (len(parts) == 3 && parts[2] == "") {
			return nil, atoll.Errorf(atoll.EINVALID, "--plan-approval: %q is not *, owner/repo or owner/repo/project.", raw)
		}
		pat := approvalPattern{owner: parts[0], repo: parts[1]}
		if len(parts) == 3 && parts[2] != "*" {
			pat.project = parts[2]
		}
		for _, g := range []string{pat.owner, pat.repo, pat.project} {
			if _, err := path.Match(g, ""); err != nil {
				return nil, atoll.Errorf(atoll.EINVALID, "--plan-approval: %q has a bad glob: %v.", raw, err)
			}
		}
		p.patterns = append(p.patterns, pat)
	}
	return p, nil
}

// Requires reports whether a plan of project (name, may be "") in dir of
// repo (owner/name) must be approved before it is applied. A nil policy
// requires nothing.
func (p *ApprovalPolicy) Requires(repo, project, dir string) bool {
	if p == nil {
		return false
	}
	owner, name, _ := strings.Cut(repo, "/")
	dir = strings.Trim(path.Clean("/"+dir), "/")
	if dir == "" {
		dir = "."
	}
	for _, pat := range p.patterns {
		if pat.all {
			return true
		}
		if !match(pat.owner, owner) || !match(pat.repo, name) {
			continue
		}
		if pat.project == "" || (project != "" && match(pat.project, project)) || match(pat.project, dir) {
			return true
		}
	}
	return false
}

// String is the policy as --plan-approval would give it.
func (p *ApprovalPolicy) String() string {
	if p == nil {
		return ""
	}
	var out []string
	for _, pat := range p.patterns {
		switch {
		case pat.all:
			out = append(out, "*")
		case pat.project == "":
			out = append(out, pat.owner+"/"+pat.repo)
		default:
			out = append(out, pat.owner+"/"+pat.repo+"/"+pat.project)
		}
	}
	return strings.Join(out, ",")
}

func match(pattern, s string) bool {
	ok, _ := path.Match(pattern, s)
	return ok
}
