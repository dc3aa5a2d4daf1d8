package web_test

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/web"
)

// hostileNexts are values of next= and back= that a browser would follow
// off the site if Atoll redirected to them as they are. Each must be
// refused: the redirect goes to "/".
var hostileNexts = []string{
	"//evil.example",
	`/\evil.example`,
	"/%09/evil.example",
	"/%5Cevil.example",
	"/../%5Cevil.example",
	"/%2F%2Fevil.example",
	"/\t/evil.example",
	"https://evil.example",
	"javascript:alert(1)",
	"/ /evil",
	"/%0d%0aSet-Cookie:x",
	"///evil.example",
	"/.//evil.example",
	`\\evil.example`,
	"/\n/evil.example",
	"/\r/evil.example",
	"/\x00/evil.example",
	"/\u00a0/evil.example",
	"/%252F%252Fevil.example",
	"/x/../..//evil.example",
	"http:evil.example",
	"/%zz",
}

// hostileVariants returns each hostile value as a handler may receive it:
// as written, and decoded once (a link saying next=/%09/evil.example hands
// the handler "/\t/evil.example").
func hostileVariants() []string {
	var out []string
	for _, v := range hostileNexts {
		out = append(out, v)
		if d, err := url.QueryUnescape(v); err == nil && d != v && !slices.Contains(hostileNexts, d) {
			out = append(out, d)
		}
	}
	return out
}

// browserHost is the host a browser on https://atoll.example/login goes to
// when told "Location: location". net/url alone is more lenient than a
// browser, so it first does what a browser's URL parser does to such a
// value: trims control characters and spaces at the ends, drops tabs and
// newlines, and reads a backslash as a slash.
func browserHost(t *testing.T, location string) string {
	t.Helper()
	base, _ := url.Parse("https://atoll.example/login")
	loc := strings.TrimFunc(location, func(r rune) bool { return r <= ' ' })
	loc = strings.NewReplacer("\t", "", "\n", "", "\r", "", `\`, "/").Replace(loc)
	ref, err := url.Parse(loc)
	if err != nil {
		t.Errorf("Location %q does not parse: %v", location, err)
		return ""
	}
	return base.ResolveReference(ref).Host
}

// send is f.do that reports a failed request as a test error, not a
// fatal one (a Location header with a NUL breaks the client), so that
// every hostile value is tried.
func send(t *testing.T, f *authFixture, method, path, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return nil
	}
	res.Body.Close()
	return res
}

// checkRefused fails unless res redirects to "/", on this site.
func checkRefused(t *testing.T, what string, res *http.Response) {
	t.Helper()
	if res == nil {
		return // send reported it
	}
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther {
		t.Errorf("%s: %d, want 303", what, res.StatusCode)
	}
	if host := browserHost(t, loc); host != "atoll.example" {
		t.Errorf("%s: Location %q takes the browser to %q", what, loc, host)
	}
	if loc != "/" {
		t.Errorf("%s: Location %q, want the fallback /", what, loc)
	}
}

func formHeader(h ...string) []string {
	return append(h, "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
}

// The login form and the login page keep the way back on this site: a
// hostile next= (in the form or the page's query) redirects to "/", and
// the page does not carry it into its form.
func TestSecurityLoginRedirect(t *testing.T) {
	f := newAuthFixture(t, nil)
	login := func(next string) *http.Response {
		form := url.Values{"name": {"viewer-user"}, "password": {testPassword}, "next": {next}}.Encode()
		return send(t, f, "POST", "/login", form, formHeader()...)
	}
	session := sessionCookieOf(login("/"))
	if session == nil {
		t.Fatal("no session")
	}
	signedIn := []string{"Cookie", "atoll_session=" + session.Value, "Accept", "text/html"}
	var page string
	for _, v := range hostileVariants() {
		checkRefused(t, "POST /login next="+strconv.Quote(v), login(v))
		res := send(t, f, "GET", "/login?next="+url.QueryEscape(v), "", signedIn...)
		checkRefused(t, "GET /login signed in, next="+strconv.Quote(v), res)
		res, page = f.do(t, "GET", "/login?next="+url.QueryEscape(v), "", "Accept", "text/html")
		if res.StatusCode != http.StatusOK || !strings.Contains(page, `name="next" value="/"`) {
			t.Errorf("GET /login next=%q: %d; the form's next is not /", v, res.StatusCode)
		}
	}
}

// OIDC sign-in keeps the way back on this site: a hostile next= at
// /auth/oidc/login ends, after the provider, in a redirect to "/".
func TestSecurityOIDCRedirect(t *testing.T) {
	p := newOIDCProvider(t)
	f := newAuthFixture(t, func(s *web.Server) {
		s.OIDC = &web.OIDC{Issuer: p.srv.URL, ClientID: p.clientID, ClientSecret: p.clientSecret}
	})
	for _, v := range hostileVariants() {
		res := oidcSignInNext(t, f.srv.URL, v, nil)
		res.Body.Close()
		if sessionCookieOf(res) == nil {
			t.Errorf("OIDC next=%q: not signed in (%d)", v, res.StatusCode)
		}
		checkRefused(t, "OIDC callback next="+strconv.Quote(v), res)
	}
}

// Form posts that go back to their page (back=) go to "/" instead of a
// hostile page, whether the action succeeded or was refused.
func TestSecurityBackRedirect(t *testing.T) {
	f := newAuthFixture(t, nil)
	admin := formHeader(bearer(f.tokens[atoll.RoleAdmin])...)
	for _, v := range hostileVariants() {
		for _, on := range []string{"1", "0", "maybe"} { // done, done, failed
			form := url.Values{"on": {on}, "reason": {"test"}, "back": {v}}.Encode()
			res := send(t, f, "POST", "/admin/freeze", form, admin...)
			checkRefused(t, "freeze on="+on+" back="+strconv.Quote(v), res)
		}
	}
}

// A legitimate way back keeps its path, query and fragment.
func TestSecurityRedirectKeepsLocalPaths(t *testing.T) {
	f := newAuthFixture(t, nil)
	for _, next := range []string{"/", "/pulls/x?state=open#p1", "/jobs/5", "/repos/acme/infra/pulls/7?x=1&y=a+b",
		"/audit?actor=alice%40example.com", "/locks/", "/plans/%C3%A9t%C3%A9"} {
		form := url.Values{"name": {"viewer-user"}, "password": {testPassword}, "next": {next}}.Encode()
		res, _ := f.do(t, "POST", "/login", form, formHeader()...)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != next {
			t.Errorf("next=%q: %d Location %q", next, res.StatusCode, res.Header.Get("Location"))
		}
	}
}
