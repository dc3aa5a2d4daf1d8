package repocfg

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"
)

// Policies is the server-side config's policies: the conftest policy sets
// every plan is checked against when --enable-policy-checks is set, and
// who may approve a failed one.
type Policies struct {
	ConftestVersion string // informational: Atoll runs --conftest-bin
	Owners          PolicyOwners
	ApproveCount    int // default for sets that set none; at least 1
	Sets            []PolicySet
	// Sticky (sticky_policy_approvals) keeps a failed set's approvals
	// across new plans of the project while every item of the new output
	// was among the items approved; ItemRegex (policy_item_regex, default
	// DefaultPolicyItemRegex) finds the items. Sets may override both.
	Sticky    bool
	ItemRegex *regexp.Regexp
}

// DefaultPolicyItemRegex is Atlantis's policy_item_regex default: the whole
// output is one item, so any change to it needs new approvals.
const DefaultPolicyItemRegex = `(?s).+`

// StickyFor reports whether set name's approvals are sticky, and the
// regex that finds its output's items.
func (p *Policies) StickyFor(name string) (bool, *regexp.Regexp) {
	sticky, re := p.Sticky, p.ItemRegex
	if s := p.Set(name); s != nil {
		if s.Sticky != nil {
			sticky = *s.Sticky
		}
		if s.ItemRegex != nil {
			re = s.ItemRegex
		}
	}
	if re == nil {
		re = regexp.MustCompile(DefaultPolicyItemRegex)
	}
	return sticky, re
}

// PolicyOwners are the users (VCS logins) and teams that own policies.
type PolicyOwners struct {
	Users []string
	Teams []string
}

// PolicySet is one entry of policy_sets.
type PolicySet struct {
	Name               string
	Path               string // a directory or file; relative to the project dir
	Source             string // "local"
	Owners             PolicyOwners
	ApproveCount       int
	PreventSelfApprove bool
	Sticky             *bool          // nil: the top level's
	ItemRegex          *regexp.Regexp // nil: the top level's
}

// IsOwner reports whether user is among the users, or in one of the teams
// (userTeams: the teams the VCS says the user is in). Names compare
// without case, as logins do.
func (o PolicyOwners) IsOwner(user string, userTeams []string) bool {
	for _, u := range o.Users {
		if strings.EqualFold(u, user) {
			return true
		}
	}
	for _, t := range o.Teams {
		for _, ut := range userTeams {
			if strings.EqualFold(t, ut) {
				return true
			}
		}
	}
	return false
}

// HasTeams reports whether any owner list names a team.
func (p *Policies) HasTeams() bool {
	if len(p.Owners.Teams) > 0 {
		return true
	}
	for _, s := range p.Sets {
		if len(s.Owners.Teams) > 0 {
			return true
		}
	}
	return false
}

// Set returns the policy set named name, or nil.
func (p *Policies) Set(name string) *PolicySet {
	for i := range p.Sets {
		if p.Sets[i].Name == name {
			return &p.Sets[i]
		}
	}
	return nil
}

// serverPolicies decodes the policies mapping of a server-side config,
// after the schema check: Atlantis's defaults (approve_count 1, a set
// inherits the top-level count), names and paths required, local sources
// only.
func (d *decoder) serverPolicies(n *yaml.Node, path string) (*Policies, error) {
	if err := d.policies(n, path); err != nil {
		return nil, err
	}
	fs, err := d.fields(n, path)
	if err != nil {
		return nil, err
	}
	p := &Policies{}
	var sets *yaml.Node
	for _, f := range fs {
		fp := join(path, f.name)
		if isNull(f.val) {
			continue
		}
		switch f.name {
		case "conftest_version":
			p.ConftestVersion, err = d.str(f.val, fp)
		case "owners":
			p.Owners, err = d.policyOwners(f.val, fp)
		case "approve_count":
			p.ApproveCount, err = d.integer(f.val, fp)
		case "policy_sets":
			sets = f.val
		case "sticky_policy_approvals":
			p.Sticky, err = d.boolean(f.val, fp)
		case "policy_item_regex":
			p.ItemRegex, err = d.itemRegex(f.val, fp)
		}
		if err != nil {
			return nil, err
		}
	}
	if p.ApproveCount <= 0 {
		p.ApproveCount = 1
	}
	setsPath := join(path, "policy_sets")
	if sets == nil || len(resolve(sets).Content) == 0 {
		return nil, d.errorf(n, setsPath, "cannot be empty: declare the policy sets to enforce")
	}
	for i, item := range resolve(sets).Content {
		ip := index(setsPath, i)
		s, err := d.policySet(item, ip, p.ApproveCount)
		if err != nil {
			return nil, err
		}
		if p.Set(s.Name) != nil {
			return nil, d.errorf(item, ip, "policy set name %q is used twice", s.Name)
		}
		p.Sets = append(p.Sets, s)
	}
	return p, nil
}

func (d *decoder) policySet(n *yaml.Node, path string, defaultCount int) (PolicySet, error) {
	s := PolicySet{Source: "local"}
	fs, err := d.fields(n, path)
	if err != nil {
		return s, err
	}
	for _, f := range fs {
		fp := join(path, f.name)
		if isNull(f.val) {
			continue
		}
		switch f.name {
		case "name":
			s.Name, err = d.str(f.val, fp)
		case "path":
			s.Path, err = d.str(f.val, fp)
		case "source":
			if s.Source, err = d.str(f.val, fp); err == nil && s.Source != "local" {
				err = d.errorf(f.val, fp, "only local policy sets are supported by Atoll (got %q)", s.Source)
			}
		case "owners":
			s.Owners, err = d.policyOwners(f.val, fp)
		case "approve_count":
			s.ApproveCount, err = d.integer(f.val, fp)
		case "prevent_self_approve":
			s.PreventSelfApprove, err = d.boolean(f.val, fp)
		case "sticky_policy_approvals":
			var sticky bool
			sticky, err = d.boolean(f.val, fp)
			s.Sticky = &sticky
		case "policy_item_regex":
			s.ItemRegex, err = d.itemRegex(f.val, fp)
		}
		if err != nil {
			return s, err
		}
	}
	switch {
	case s.Name == "":
		return s, d.errorf(n, join(path, "name"), "is required")
	case s.Path == "":
		return s, d.errorf(n, join(path, "path"), "is required")
	}
	if s.ApproveCount <= 0 {
		s.ApproveCount = defaultCount
	}
	return s, nil
}

func (d *decoder) policyOwners(n *yaml.Node, path string) (PolicyOwners, error) {
	var o PolicyOwners
	fs, err := d.fields(n, path)
	if err != nil {
		return o, err
	}
	for _, f := range fs {
		if isNull(f.val) {
			continue
		}
		switch f.name {
		case "users":
			o.Users, err = d.strList(f.val, join(path, f.name), nil)
		case "teams":
			o.Teams, err = d.strList(f.val, join(path, f.name), nil)
		}
		if err != nil {
			return o, err
		}
	}
	return o, nil
}

// PolicyCheckFor reports whether the repository id's plans are policy
// checked when --enable-policy-checks is on: yes, unless the last entry
// matching it that sets policy_check says false. (With the flag, Atlantis
// turns the default entry's policy_check on; DefaultServerRepo holds the
// flag-less false, so the default entry is skipped here.)
func (s *ServerConfig) PolicyCheckFor(id string) bool {
	on := true
	for i, r := range s.Repos {
		if i == 0 || !r.IDMatches(id) || r.PolicyCheck == nil {
			continue
		}
		on = *r.PolicyCheck
	}
	return on
}

// CustomPolicyCheckFor reports whether the repository id's policy_check
// stage is a custom check (custom_policy_check: the last matching entry
// that sets it decides): its run steps' output is the result, one step per
// policy set, instead of conftest's.
func (s *ServerConfig) CustomPolicyCheckFor(id string) bool {
	on := false
	for _, r := range s.Repos {
		if r.IDMatches(id) && r.CustomPolicyCheck != nil {
			on = *r.CustomPolicyCheck
		}
	}
	return on
}

// itemRegex decodes a policy_item_regex: a Go regular expression (as in
// Atlantis) that matches something.
func (d *decoder) itemRegex(n *yaml.Node, path string) (*regexp.Regexp, error) {
	v, err := d.str(n, path)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(v)
	if err != nil {
		return nil, d.errorf(n, path, "is not a valid regular expression: %v", err)
	}
	if v == "" {
		return nil, d.errorf(n, path, "cannot be empty: it finds the items an approval covers (default %q)", DefaultPolicyItemRegex)
	}
	return re, nil
}
