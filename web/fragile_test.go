package web_test

// The "fragile" findings of the outside probe: each test here failed on the
// code the probe ran against. `go test -run Security ./...` runs them again.

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/web"
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

// jsonRoutes are the routes that take a JSON body, each with a body that
// decodes (the call may still fail for other reasons, never as a bad body)
// and its size limit in KiB.
var jsonRoutes = []struct {
	method, path, valid string
	limitKiB            int
}{
	{"POST", "/api/v1/repos/acme/infra/pulls/7/comments", `{"body":"hello"}`, 1024},
	{"PUT", "/api/v1/freeze", `{"on":false}`, 64},
	{"POST", "/api/v1/plans/1/approvals", `{"decision":"reject","reason":"no"}`, 64},
	{"POST", "/api/v1/plan", `{"Repository":"acme/infra","PR":999}`, 1024},
	{"POST", "/api/apply", `{"Repository":"acme/infra","PR":999}`, 1024},
	{"POST", "/repos/acme/infra/pulls/7/commands", `{"command":"plan"}`, 64},
	{"POST", "/locks/unlock", `{"ids":[999],"confirm":true}`, 1024},
}

// A JSON body is one JSON value: data after it (garbage, or a second
// object) is refused with 400 by every JSON route, and nothing is done.
func TestSecurityJSONTrailingData(t *testing.T) {
	f := newAuthFixture(t, nil)
	auth := append(bearer(f.tokens[atoll.RoleAdmin]), "Accept", "application/json")
	for _, rt := range jsonRoutes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			res, body := f.do(t, rt.method, rt.path, rt.valid, auth...)
			if res.StatusCode == http.StatusBadRequest || res.StatusCode == http.StatusRequestEntityTooLarge || res.StatusCode == http.StatusUnsupportedMediaType {
				t.Fatalf("valid body: %d %s", res.StatusCode, body)
			}
			for _, bad := range []string{rt.valid + " garbage", rt.valid + rt.valid, rt.valid + "\n" + rt.valid, rt.valid + "}", rt.valid + " 1"} {
				res, body := f.do(t, rt.method, rt.path, bad, auth...)
				if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, "more after its JSON value") {
					t.Errorf("%q: %d %s", bad, res.StatusCode, body)
				}
			}
			// White space after the value is no data.
			if res, body := f.do(t, rt.method, rt.path, rt.valid+" \n\t", auth...); res.StatusCode == http.StatusBadRequest {
				t.Errorf("valid body and white space: %d %s", res.StatusCode, body)
			}
		})
	}
	comments, err := f.db.Comments(t.Context(), f.pullID)
	if err != nil {
		t.Fatal(err)
	}
	var posted int
	for _, c := range comments {
		if c.Body == "hello" {
			posted++
		}
	}
	if posted != 2 { // the valid body, with and without white space
		t.Errorf("%d comments posted, want 2: a refused body posted one", posted)
	}
}

// A body over a route's limit is 413 naming the limit, not "must be JSON".
func TestSecurityOversizeBody(t *testing.T) {
	f := newAuthFixture(t, nil)
	auth := append(bearer(f.tokens[atoll.RoleAdmin]), "Accept", "application/json")
	for _, rt := range jsonRoutes {
		t.Run(rt.method+" "+rt.path, func(t *testing.T) {
			big := `{"x":"` + strings.Repeat("a", rt.limitKiB<<10) + `"}`
			res, body := f.do(t, rt.method, rt.path, big, auth...)
			want := "Request body too large (limit " + strconv.Itoa(rt.limitKiB) + " KiB)."
			if res.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(body, want) {
				t.Errorf("%d KiB body: %d %.200s; want 413 %q", rt.limitKiB+1, res.StatusCode, body, want)
			}
		})
	}
}

// errorOf is the message of a {"error": "..."} answer.
func errorOf(t *testing.T, body string) string {
	t.Helper()
	var out struct{ Error string }
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatalf("not a JSON error: %v: %.300s", err, body)
	}
	return out.Error
}

// A form field given twice is refused with 400 naming it, by every form
// route, rather than one of its values being picked silently; only the
// unlock form's id is a list.
func TestSecurityDuplicateFormFields(t *testing.T) {
	f := newAuthFixture(t, nil)
	viewer, err := f.db.UserByName(t.Context(), "viewer-user")
	if err != nil {
		t.Fatal(err)
	}
	users := "/admin/users/" + strconv.FormatInt(viewer.ID, 10)
	form := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")
	cases := []struct{ path, body, field string }{
		{"/admin/users", "name=mallory&name=admin2&role=viewer&password=a+long+password", "name"},
		{"/admin/users", "name=mallory&role=viewer&role=admin&password=a+long+password", "role"},
		{users + "/role", "role=admin&role=viewer", "role"},
		{users + "/disable", "disabled=false&disabled=true", "disabled"},
		{"/admin/tokens", "user=viewer-user&user=admin-user&name=t", "user"},
		{"/admin/freeze", "on=0&on=1&reason=x", "on"},
		{"/plans/1/approve", "reason=ok&reason=other", "reason"},
		{"/plans/1/reject", "back=/&back=/runs", "back"},
		{"/repos/acme/infra/pulls/7/comment", "body=atlantis+plan&body=atlantis+apply", "body"},
		{"/repos/acme/infra/pulls/7/commands", "command=plan&command=apply", "command"},
		{"/locks/unlock", "id=" + strconv.FormatInt(f.lockID, 10) + "&confirm=1&confirm=0", "confirm"},
	}
	for _, c := range cases {
		res, body := f.do(t, "POST", c.path, c.body, form...)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(errorOf(t, body), `form field "`+c.field+`" is given 2 times`) {
			t.Errorf("POST %s %s: %d %s", c.path, c.body, res.StatusCode, body)
		}
	}
	// Nothing was done.
	if u, err := f.db.UserByName(t.Context(), "mallory"); err == nil {
		t.Errorf("user created: %+v", u)
	}
	if v, _ := f.db.UserByID(t.Context(), viewer.ID); v.Role != atoll.RoleViewer || v.Disabled {
		t.Errorf("viewer-user changed: %+v", v)
	}
	if locks, err := f.db.Locks(t.Context()); err != nil || len(locks) != 1 {
		t.Errorf("locks = %v, %v; want the one lock", locks, err)
	}
	if approvals, err := f.db.PlanApprovals(t.Context(), 1); err != nil || len(approvals) != 0 {
		t.Errorf("approvals = %v, %v; want none", approvals, err)
	}
	// The unlock form repeats id on purpose.
	res, body := f.do(t, "POST", "/locks/unlock", "id=998&id=999&confirm=1", form...)
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Nothing was unlocked") {
		t.Errorf("unlock of two ids: %d %s", res.StatusCode, body)
	}
	// The login form too: a second name is not ignored.
	res, body = f.do(t, "POST", "/login", "name=viewer-user&name=admin-user&password="+url.QueryEscape(testPassword),
		"Content-Type", "application/x-www-form-urlencoded")
	if res.StatusCode != http.StatusBadRequest || sessionCookieOf(res) != nil {
		t.Errorf("login with two names: %d, cookie %v: %.200s", res.StatusCode, sessionCookieOf(res), body)
	}
}

// Every filter of the JSON API's lists is checked the same way: a value it
// does not take, an unknown parameter or a repeated one is 400 with
// {"error"} naming the parameter and what it takes, never a silent 200.
func TestSecurityListFilters(t *testing.T) {
	f := newAuthFixture(t, nil)
	auth := bearer(f.tokens[atoll.RoleViewer])
	refused := []struct {
		path  string
		wants []string
	}{
		{"/api/v1/jobs?state=bogus", []string{`state "bogus"`, "queued, running, succeeded, failed, interrupted, canceled"}},
		{"/api/v1/jobs?kind=bogus", []string{`kind "bogus"`, "plan, apply, import, state_rm"}},
		{"/api/v1/jobs?repo=bogus", []string{`repo "bogus"`, "owner/name"}},
		{"/api/v1/jobs?pull=x", []string{`pull "x"`, "number"}},
		{"/api/v1/jobs?state=queued&state=bogus", []string{`parameter "state" is given 2 times`}},
		{"/api/v1/jobs?q=error", []string{`Unknown parameter "q"`, "repo, pull, project, kind, state"}},
		{"/api/v1/jobs?staet=failed", []string{`Unknown parameter "staet"`, "state"}},
		{"/api/v1/search?q=error&state=bogus", []string{`state "bogus"`, "succeeded"}},
		{"/api/v1/search?q=error&sort=new", []string{`Unknown parameter "sort"`, "q"}},
		{"/api/v1/pulls?state=bogus", []string{`state "bogus"`, "open, closed, merged"}},
		{"/api/v1/pulls?state=OPEN", []string{`state "OPEN"`, "open, closed, merged"}},
		{"/api/v1/pulls?repo=bogus", []string{`repo "bogus"`, "owner/name"}},
		{"/api/v1/pulls?status=open", []string{`Unknown parameter "status"`, "repo, state"}},
		{"/api/v1/pulls?state=open&state=closed", []string{`parameter "state" is given 2 times`}},
		{"/api/v1/locks?state=bogus", []string{`Unknown parameter "state"`, "no parameters"}},
		{"/api/v1/locks?repo=acme/infra", []string{`Unknown parameter "repo"`}},
		{"/api/v1/audit?repo=bogus", []string{`repo "bogus"`, "owner/name"}},
		{"/api/v1/audit?limit=0", []string{`limit "0"`, "1 to 1000"}},
		{"/api/v1/audit?user=alice", []string{`Unknown parameter "user"`, "actor, action, repo"}},
	}
	for _, c := range refused {
		res, body := f.do(t, "GET", c.path, "", auth...)
		if res.StatusCode != http.StatusBadRequest || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf("GET %s: %d %.200s, want 400 JSON", c.path, res.StatusCode, body)
			continue
		}
		msg := errorOf(t, body)
		for _, w := range c.wants {
			if !strings.Contains(msg, w) {
				t.Errorf("GET %s: %q lacks %q", c.path, msg, w)
			}
		}
	}
	for _, path := range []string{"/api/v1/jobs?state=succeeded&kind=plan&repo=acme/infra&pull=7", "/api/v1/search?q=plan&state=succeeded",
		"/api/v1/pulls?state=open&repo=acme/infra", "/api/v1/locks", "/api/v1/audit?repo=acme/infra&limit=5"} {
		if res, body := f.do(t, "GET", path, "", auth...); res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %.200s", path, res.StatusCode, body)
		}
	}
	// The pages read the same filters and explain them the same way.
	for path, want := range map[string]string{"/runs?state=bogus": `state &#34;bogus&#34;`, "/locks?pull=x": `pull &#34;x&#34;`, "/locks?repo=bogus": `repo &#34;bogus&#34;`} {
		res, body := f.do(t, "GET", path, "", append(auth, "Accept", "text/html")...)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("GET %s: %d, page lacks %q", path, res.StatusCode, want)
		}
	}
}

// User names that look alike are one name, or no name: an admin cannot
// create "Admin-User" next to admin-user, nor names with invisible
// characters, bidi controls or letters of other scripts. Names are kept
// folded to lower case, and sign-in finds them in any case.
func TestSecurityLookalikeUserNames(t *testing.T) {
	f := newAuthFixture(t, nil)
	form := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "application/json")
	create := func(name string) (*http.Response, string) {
		return f.do(t, "POST", "/admin/users", url.Values{"name": {name}, "role": {"viewer"}, "password": {testPassword}}.Encode(), form...)
	}
	refused := []struct {
		name   string
		status int
		want   string
	}{
		{"Admin-User", http.StatusConflict, "is the same name, as user names ignore case"},
		{"ADMIN-USER", http.StatusConflict, "is the same name, as user names ignore case"},
		{"ａｄｍｉｎ-user", http.StatusConflict, "is the same name, as user names ignore case"}, // full-width letters
		{"admin-user\u200b", http.StatusBadRequest, "U+200B"},                              // zero-width space
		{"admin\u200d-user", http.StatusBadRequest, "U+200D"},                              // zero-width joiner
		{"\u202eresu-nimda", http.StatusBadRequest, "U+202E"},                              // right-to-left override
		{"admin-\u2066user", http.StatusBadRequest, "U+2066"},                              // left-to-right isolate
		{"\u0430dmin-user", http.StatusBadRequest, "U+0430"},                               // Cyrillic a
		{"admin-us\u0435r", http.StatusBadRequest, "U+0435"},                               // Cyrillic e
		{"\u0391dmin", http.StatusBadRequest, "U+03B1"},                                    // Greek Alpha, folded to alpha
		{"admin\x07", http.StatusBadRequest, "U+0007"},
		{"admin user", http.StatusBadRequest, "space"},
		{"admin<b>", http.StatusBadRequest, `'<'`},
		{"oidc:user-123", http.StatusBadRequest, `':'`},
		{".admin", http.StatusBadRequest, "start with a letter or digit"},
		{strings.Repeat("a", 65), http.StatusBadRequest, "at most 64"},
	}
	for _, c := range refused {
		res, body := create(c.name)
		if res.StatusCode != c.status || !strings.Contains(errorOf(t, body), c.want) {
			t.Errorf("create %+q: %d %s; want %d with %q", c.name, res.StatusCode, body, c.status, c.want)
		}
	}
	users, err := f.db.Users(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 3 {
		t.Errorf("%d users, want the fixture's 3: %v", len(users), users)
	}
	// A name in capitals is kept folded, and signs in in any case.
	if res, body := create("Carol.Smith+ops@Example.com"); res.StatusCode != http.StatusOK || !strings.Contains(body, "Created carol.smith+ops@example.com") {
		t.Fatalf("create Carol: %d %s", res.StatusCode, body)
	}
	if res, body := create("carol.smith+ops@example.com"); res.StatusCode != http.StatusConflict || !strings.Contains(body, "already exists") {
		t.Errorf("create carol again: %d %s", res.StatusCode, body)
	}
	for _, name := range []string{"carol.smith+ops@example.com", "CAROL.SMITH+OPS@EXAMPLE.COM", "Admin-User"} {
		res, body := f.do(t, "GET", "/api/v1/me", "", "Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(name+":"+testPassword)))
		if res.StatusCode != http.StatusOK || !strings.Contains(body, `"name": "`+strings.ToLower(name)+`"`) {
			t.Errorf("sign in as %s: %d %s", name, res.StatusCode, body)
		}
	}
}

// OIDC accounts are named by their claims under the same rule: a name taken
// in any case, or one that cannot be a user name (an e-mail address in
// another script), names the account after its subject instead; a subject
// that cannot either refuses the sign-in, saying why.
func TestSecurityOIDCLookalikeNames(t *testing.T) {
	p := newOIDCProvider(t)
	cases := []struct {
		email, subject string
		status         int
		want           string // the account's name, or the refusal's message
	}{
		{"Dana@Example.COM", "user-123", http.StatusSeeOther, "dana@example.com"},
		{"Operator-User", "user-123", http.StatusSeeOther, "oidc:user-123"},
		{"d\u0430na@example.com", "user-123", http.StatusSeeOther, "oidc:user-123"}, // Cyrillic a
		{"dana\u200b@example.com", "user-123", http.StatusSeeOther, "oidc:user-123"},
		{"j\u00fcrgen@example.de", "user 123", http.StatusUnauthorized, "cannot name an Atoll user"},
	}
	for _, c := range cases {
		t.Run(c.email, func(t *testing.T) {
			f := newAuthFixture(t, func(s *web.Server) {
				s.OIDC = &web.OIDC{Issuer: p.srv.URL, ClientID: p.clientID, ClientSecret: p.clientSecret}
			})
			p.mu.Lock()
			p.email, p.subject, p.nonce, p.audience = c.email, c.subject, "", ""
			p.mu.Unlock()
			res := oidcSignIn(t, f.srv.URL, nil)
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != c.status {
				t.Fatalf("callback: %d %.300s", res.StatusCode, body)
			}
			if c.status != http.StatusSeeOther {
				if !strings.Contains(string(body), c.want) || sessionCookieOf(res) != nil && sessionCookieOf(res).Value != "" {
					t.Errorf("refusal lacks %q or signed in: %.300s", c.want, body)
				}
				return
			}
			cookie := []string{"Cookie", "atoll_session=" + sessionCookieOf(res).Value}
			if res, body := f.do(t, "GET", "/api/v1/me", "", cookie...); res.StatusCode != 200 || !strings.Contains(body, `"name": "`+c.want+`"`) {
				t.Errorf("me: %d %s; want the name %s", res.StatusCode, body, c.want)
			}
		})
	}
}
