package atoll

import (
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// User names are shown wherever someone did something (comments, the audit
// log, approvals), so two must never look alike: "Admin" and "admin", a
// name with a zero-width space in it, or one whose "а" is Cyrillic. The
// rule is deliberately narrow rather than a list of confusables.

// MaxUserName bounds a user name, in characters.
const MaxUserName = 64

// OIDCNamePrefix begins the name of an OIDC account named after its
// subject, when the provider gives no usable name or the name is taken
// (OIDCSignIn.AltName). Other names cannot contain ':', so it never
// collides with one.
const OIDCNamePrefix = "oidc:"

// UserName returns name as Atoll keeps it, or EINVALID saying why it
// cannot be a user name. name is folded first, Unicode NFKC and then lower
// case ("ＡＤＭＩＮ" and "Admin" are "admin"); the result must be 1 to
// MaxUserName of a-z, 0-9 and . _ - @ +, starting with a letter or digit:
// no spaces, no control or invisible characters (zero-width, bidi
// controls), no letters of other scripts. Names are unique after folding.
func UserName(name string) (string, error) {
	folded := strings.ToLower(norm.NFKC.String(name))
	if folded == "" {
		return "", Errorf(EINVALID, "A user name is required.")
	}
	for i, r := range folded {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case i > 0 && strings.ContainsRune("._-@+", r):
		case unicode.Is(unicode.Cf, r) || unicode.IsControl(r):
			return "", Errorf(EINVALID, "The user name %+q has an invisible or control character (%U): names are a-z, 0-9 and . _ - @ +.", name, r)
		case unicode.IsSpace(r):
			return "", Errorf(EINVALID, "The user name %+q has a space: names are a-z, 0-9 and . _ - @ +.", name)
		case r > unicode.MaxASCII:
			return "", Errorf(EINVALID, "The user name %+q has %U %q, which is not a-z or 0-9: names are ASCII so that no two look alike.", name, r, r)
		case i == 0:
			return "", Errorf(EINVALID, "The user name %+q starts with %q: names start with a letter or digit.", name, r)
		default:
			return "", Errorf(EINVALID, "The user name %+q has %q: names are a-z, 0-9 and . _ - @ +.", name, r)
		}
	}
	if len(folded) > MaxUserName { // ASCII: bytes are characters
		return "", Errorf(EINVALID, "A user name is at most %d characters.", MaxUserName)
	}
	return folded, nil
}

// checkOIDCName checks the name OIDCUser gives an account named after its
// subject: OIDCNamePrefix and the subject, which OpenID Connect keeps to at
// most 255 ASCII characters (printable, no spaces, here).
func checkOIDCName(name string) error {
	subject, ok := strings.CutPrefix(name, OIDCNamePrefix)
	if !ok || subject == "" || len(subject) > 255 || strings.ContainsFunc(subject, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return Errorf(EINVALID, "The sign-in provider's subject %+q cannot name an Atoll user: ask an admin.", subject)
	}
	return nil
}

// CheckName returns the name account u is kept under (see UserName), or
// EINVALID; an OIDC account may instead be named after its subject
// (OIDCNamePrefix).
func (u NewUser) CheckName() (string, error) {
	if u.Source == UserSourceOIDC && strings.HasPrefix(u.Name, OIDCNamePrefix) {
		return u.Name, checkOIDCName(u.Name)
	}
	return UserName(u.Name)
}
