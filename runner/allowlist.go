package runner

import (
	"path"
	"strings"
)

// Allowlist holds --repo-allowlist globs of host/owner/repo, Atlantis syntax:
// "*" alone allows everything, and "*" inside a pattern matches any
// characters, including "/".
type Allowlist []string

// ParseAllowlist splits a comma-separated list.
func ParseAllowlist(s string) Allowlist {
	var out Allowlist
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, strings.ToLower(p))
		}
	}
	return out
}

// Allows reports whether host/owner/name matches a pattern.
func (a Allowlist) Allows(host, owner, name string) bool {
	full := strings.ToLower(host + "/" + owner + "/" + name)
	for _, p := range a {
		if p == "*" || p == full || globMatch(p, full) {
			return true
		}
	}
	return false
}

// globMatch treats every "*" as "any characters" (unlike path.Match, where
// "*" stops at "/"), as Atlantis does.
func globMatch(pattern, s string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		ok, _ := path.Match(pattern, s)
		return ok
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	for i, part := range parts[1:] {
		if i == len(parts)-2 {
			return strings.HasSuffix(s, part)
		}
		idx := strings.Index(s, part)
		if idx < 0 {
			return false
		}
		s = s[idx+len(part):]
	}
	return true
}
