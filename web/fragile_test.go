package web_test

// The "fragile" findings of the outside probe: each test here failed on the
// code the probe ran against. `go test -run Security ./...` runs them again.

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

// signIn signs name in with the login form and returns its session cookie
// as a header pair for authFixture.do.
func (f *authFixture) signIn(t *testing.T, name string) []string {
	t.Helper()
	form := url.Values{"name": {name}, "password": {testPassword}}.Encode()
	res, body := f.do(t, "POST", "/login", form, "Content-Type", "application/x-www-form-urlencoded")
	c := sessionCookieOf(res)
	if res.StatusCode != http.StatusSeeOther || c == nil {
		t.Fatalf("sign in as %s: %d %s", name, res.StatusCode, body)
	}
	return []string{"Cookie", "atoll_session=" + c.Value}
}

// A bodyless POST /logout (what fetch or curl -X POST sends) needs no
// Content-Type: it ends the session rather than answering 415.
func TestSecurityBodylessLogout(t *testing.T) {
	f := newAuthFixture(t, nil)
	cookie := f.signIn(t, "operator-user")
	res, body := f.do(t, "POST", "/logout", "", cookie...)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"signed_out": true`) {
		t.Fatalf("bodyless logout: %d %s", res.StatusCode, body)
	}
	if res, _ := f.do(t, "GET", "/api/v1/me", "", cookie...); res.StatusCode != http.StatusUnauthorized {
		t.Errorf("the session outlived the logout: /api/v1/me answers %d", res.StatusCode)
	}
}

// A bodyless DELETE needs no Content-Type either; one with a body still
// needs a JSON one.
func TestSecurityBodylessDelete(t *testing.T) {
	f := newAuthFixture(t, nil)
	lock := "/api/v1/locks/" + strconv.FormatInt(f.lockID, 10)
	auth := bearer(f.tokens[atoll.RoleOperator])
	if res, body := f.do(t, "DELETE", lock, "x", append(auth, "Content-Type", "text/plain")...); res.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("DELETE with a text body: %d %s, want 415", res.StatusCode, body)
	}
	res, body := f.do(t, "DELETE", lock, "", auth...)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `"id": `+strconv.FormatInt(f.lockID, 10)) {
		t.Fatalf("bodyless DELETE: %d %s", res.StatusCode, body)
	}
	if locks, err := f.db.Locks(t.Context()); err != nil || len(locks) != 0 {
		t.Errorf("locks after the DELETE: %v, %v", locks, err)
	}
}

// Authentication schemes are case-insensitive (RFC 9110 section 11.1).
func TestSecurityAuthSchemeCase(t *testing.T) {
	f := newAuthFixture(t, nil)
	token := f.tokens[atoll.RoleViewer]
	basic := base64.StdEncoding.EncodeToString([]byte("viewer-user:" + testPassword))
	for _, h := range []string{"bearer " + token, "BEARER " + token, "Bearer  " + token, "bEaReR " + token, "basic " + basic, "BASIC " + basic} {
		res, body := f.do(t, "GET", "/api/v1/me", "", "Authorization", h)
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `"viewer-user"`) {
			t.Errorf("Authorization %q: %d %s", h[:8], res.StatusCode, body)
		}
	}
	for _, h := range []string{"Bearerx " + token, "Token " + token} {
		if res, _ := f.do(t, "GET", "/api/v1/me", "", "Authorization", h); res.StatusCode != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", h[:7], res.StatusCode)
		}
	}
}
