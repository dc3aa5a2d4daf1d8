package repocfg

import (
	"regexp"
	"strings"

	"github.com/atollhq/atoll"
)

// FindByRegexp resolves -p as a regular expression (--enable-regexp-cmd,
// as Atlantis): the named projects whose whole name re matches. pattern
// is re as written, for allowed_regexp_prefixes and messages: when it
// selects more than one project it must start with one of the prefixes,
// if the file lists any.
func FindByRegexp(cfg *Config, repoRoot string, re *regexp.Regexp, pattern string) ([]Project, error) {
	if cfg == nil || len(cfg.Projects) == 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "cannot select projects matching %q: the repository's atlantis.yaml defines no projects", pattern)
	}
	var out []Project
	for _, p := range cfg.Projects {
		if p.Name != "" && re.MatchString(p.Name) {
			out = append(out, p.clone())
		}
	}
	switch {
	case len(out) == 0:
		return nil, atoll.Errorf(atoll.EINVALID, "no project in atlantis.yaml has a name matching %q", pattern)
	case len(out) > 1 && !regexpAllowed(pattern, cfg.AllowedRegexpPrefixes):
		return nil, atoll.Errorf(atoll.EINVALID, "%q matches %d projects, and atlantis.yaml's allowed_regexp_prefixes (%s) lets only patterns starting with one of them select more than one",
			pattern, len(out), strings.Join(cfg.AllowedRegexpPrefixes, ", "))
	}
	for _, p := range out {
		if err := mustExist(repoRoot, p.Dir); err != nil {
			return nil, err
		}
	}
	return sortProjects(out), nil
}

func regexpAllowed(pattern string, prefixes []string) bool {
	if len(prefixes) == 0 {
		return true
	}
	for _, p := range prefixes {
		if strings.HasPrefix(pattern, p) {
			return true
		}
	}
	return false
}
