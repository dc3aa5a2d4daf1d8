package atoll

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Bounds of an account's VCS logins.
const (
	MaxVCSLogins     = 20
	maxVCSLoginRunes = 100
)

// ValidVCSLogin reports whether s can be a login on a VCS host: 1 to 100
// printable characters without spaces, commas, '<' or '>'. GitHub logins,
// Azure DevOps unique names (e-mail addresses, DOMAIN\user) and local
// user names all are.
func ValidVCSLogin(s string) bool {
	return s != "" && utf8.ValidString(s) && utf8.RuneCountInString(s) <= maxVCSLoginRunes &&
		!strings.ContainsFunc(s, func(r rune) bool {
			return unicode.IsSpace(r) || !unicode.IsPrint(r) || r == ',' || r == '<' || r == '>'
		})
}

// NormalizeVCSLogins trims logins and drops empty ones and case-insensitive
// repeats (the first spelling stays): a login is one name on every host,
// compared without case, as the hosts compare them. EINVALID names the
// first one that is not a login, or says there are more than MaxVCSLogins.
func NormalizeVCSLogins(logins []string) ([]string, error) {
	out := []string{}
	for _, l := range logins {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			continue
		case !ValidVCSLogin(l):
			return nil, Errorf(EINVALID, "%q is not a VCS login: 1 to %d characters without spaces, ',', '<' or '>'.", l, maxVCSLoginRunes)
		case slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, l) }):
			continue
		}
		out = append(out, l)
	}
	if len(out) > MaxVCSLogins {
		return nil, Errorf(EINVALID, "At most %d VCS logins per user.", MaxVCSLogins)
	}
	return out, nil
}

// ParseVCSLogins reads a list of logins separated by commas or spaces, as
// the admin page's form gives it.
func ParseVCSLogins(s string) ([]string, error) {
	return NormalizeVCSLogins(strings.FieldsFunc(s, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }))
}
