package atoll_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

func TestUserName(t *testing.T) {
	folded := map[string]string{
		"alice":                          "alice",
		"Alice":                          "alice",
		"ＡＬＩＣＥ":                          "alice", // full width
		"\u212aate":                      "kate",  // Kelvin sign
		"ops+infra@example.com":          "ops+infra@example.com",
		"first.last_2-x":                 "first.last_2-x",
		"0day":                           "0day",
		strings.Repeat("a", 64):          strings.Repeat("a", 64),
		"\ufb01ona":                      "fiona", // ligature
		"OPS+Infra@Example.COM":          "ops+infra@example.com",
		"admin-user":                     "admin-user",
		"\u0130nfra":                     "infra", // Turkish dotted capital I
		"a.b@c":                          "a.b@c",
		"\uff41\uff44\uff4d\uff49\uff4e": "admin",
	}
	for in, want := range folded {
		got, err := atoll.UserName(in)
		if err != nil || got != want {
			t.Errorf("UserName(%+q) = %q, %v; want %q", in, got, err, want)
		}
	}
	refused := []string{
		"", " ", "a b", "admin\u200b", "\u200badmin", "ad\u200dmin", "\u202eadmin", "admin\u2066", "\ufeffadmin", "ad\u00admin",
		"\u0430dmin", "admin\u0435", "\u03b1dmin", "adm\u0131n", "caf\u00e9", "x\u0301",
		"admin\x00", "admin\n", "admin\t", "admin\x7f", "a:b", "a<b", "a/b", "a\\b", "a*b", "a'b", "a\"b", "a,b",
		".admin", "-admin", "_admin", "@admin", "+admin", strings.Repeat("a", 65),
	}
	for _, in := range refused {
		if got, err := atoll.UserName(in); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("UserName(%+q) = %q, %v; want EINVALID", in, got, err)
		}
	}
}

func TestNewUserCheckName(t *testing.T) {
	for _, c := range []struct {
		u    atoll.NewUser
		want string // "" when refused
	}{
		{atoll.NewUser{Name: "oidc:user-123", Source: atoll.UserSourceOIDC}, "oidc:user-123"},
		{atoll.NewUser{Name: "oidc:auth0|AbC", Source: atoll.UserSourceOIDC}, "oidc:auth0|AbC"},
		{atoll.NewUser{Name: "Dana@Example.com", Source: atoll.UserSourceOIDC}, "dana@example.com"},
		{atoll.NewUser{Name: "oidc:user-123", Source: atoll.UserSourceLocal}, ""},
		{atoll.NewUser{Name: "oidc:", Source: atoll.UserSourceOIDC}, ""},
		{atoll.NewUser{Name: "oidc:user 123", Source: atoll.UserSourceOIDC}, ""},
		{atoll.NewUser{Name: "oidc:us\u200ber", Source: atoll.UserSourceOIDC}, ""},
		{atoll.NewUser{Name: "oidc:" + strings.Repeat("x", 256), Source: atoll.UserSourceOIDC}, ""},
	} {
		got, err := c.u.CheckName()
		if c.want == "" && atoll.ErrorCode(err) != atoll.EINVALID || c.want != "" && (err != nil || got != c.want) {
			t.Errorf("%+v: %q, %v; want %q", c.u, got, err, c.want)
		}
	}
}
