package web_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// authFixture is the page fixture served with the real auth middleware (no
// injected user), a runner that queues requests, and one local account of
// each role with a password and an API token.
type authFixture struct {
	*pageFixture
	srv    *httptest.Server
	logs   *logBuffer
	tokens map[atoll.Role]string
}

const testPassword = "correct horse battery"

func newAuthFixture(t *testing.T, configure func(*web.Server)) *authFixture {
	t.Helper()
	f := &authFixture{pageFixture: newPageFixture(t), logs: &logBuffer{}, tokens: map[atoll.Role]string{}}
	s := f.pageFixture.s
	s.Logger = slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	withRunner(s, &runner.Runner{
		DB:     f.db,
		Hub:    runner.NewHub(),
		Parser: command.Parser{ExecutableName: "atlantis"},
		Config: runner.Config{Allowlist: runner.ParseAllowlist("local/acme/*")},
	})
	s.Demo = false
	if configure != nil {
		configure(s)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range []atoll.Role{atoll.RoleViewer, atoll.RoleOperator, atoll.RoleAdmin} {
		secret, tokenHash := atoll.NewSecret()
		err := f.db.Update(context.Background(), func(tx *store.Tx) error {
			u, err := tx.CreateUser(atoll.NewUser{Name: string(role) + "-user", Role: role, Source: atoll.UserSourceLocal, PasswordHash: string(hash)})
			if err != nil {
				return err
			}
			_, err = tx.CreateToken(u.ID, "test", tokenHash)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		f.tokens[role] = secret
	}
	f.srv = httptest.NewServer(s.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// noRedirects is a client that shows redirects rather than following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (f *authFixture) do(t *testing.T, method, path, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// A browser opening a page without a session goes to the login page and
// comes back after signing in; the way back stays on this site.
func TestLoginRedirectsAndComesBack(t *testing.T) {
	f := newAuthFixture(t, nil)
	path := "/jobs/" + strconv.FormatInt(f.doneJob, 10)
	res, _ := f.do(t, "GET", path+"?x=1", "", "Accept", "text/html")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next="+url.QueryEscape(path+"?x=1") {
		t.Fatalf("page without a session: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}
	// htmx is told where to go; the API, logs and websockets get 401 JSON.
	if res, _ := f.do(t, "GET", path, "", "HX-Request", "true", "Accept", "text/html"); res.StatusCode != 401 || res.Header.Get("HX-Redirect") == "" {
		t.Errorf("htmx without a session: %d HX-Redirect %q", res.StatusCode, res.Header.Get("HX-Redirect"))
	}
	for _, p := range []string{"/api/v1/jobs/" + strconv.FormatInt(f.doneJob, 10) + "/log", path + "/ws"} {
		if res, body := f.do(t, "GET", p, "", "Accept", "text/html"); res.StatusCode != 401 || !strings.Contains(body, "Sign in first") {
			t.Errorf("%s without a session: %d %s", p, res.StatusCode, body)
		}
	}
	for next, want := range map[string]string{path: path, "//evil.example/x": "/", "https://evil.example": "/", "/\\evil.example": "/"} {
		form := url.Values{"name": {"viewer-user"}, "password": {testPassword}, "next": {next}}.Encode()
		res, body := f.do(t, "POST", "/login", form, "Content-Type", "application/x-www-form-urlencoded")
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("login with next=%q: %d Location %q, want %q: %s", next, res.StatusCode, res.Header.Get("Location"), want, body)
		}
	}
}

func sessionCookieOf(res *http.Response) *http.Cookie {
	for _, c := range res.Cookies() {
		if c.Name == "atoll_session" {
			return c
		}
	}
	return nil
}

// Signing in with the form, the session cookie's flags, signing out, and
// the audit events of each, with the client's address.
func TestLoginLogout(t *testing.T) {
	for _, publicURL := range []string{"http://localhost:4141", "https://atoll.example.com"} {
		t.Run(publicURL, func(t *testing.T) {
			f := newAuthFixture(t, func(s *web.Server) { s.PublicURL = publicURL })
			ctx := context.Background()
			login := func(name, password string) (*http.Response, string) {
				form := url.Values{"name": {name}, "password": {password}, "next": {"/"}}.Encode()
				return f.do(t, "POST", "/login", form, "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
			}
			// Wrong password and unknown name: the same answer, no cookie.
			for _, c := range [][2]string{{"operator-user", "wrong password"}, {"nobody", testPassword}, {"operator-user", ""}} {
				res, body := login(c[0], c[1])
				if res.StatusCode != 401 || !strings.Contains(body, "Wrong name or password.") || sessionCookieOf(res) != nil {
					t.Fatalf("login %s/%q: %d cookie %v", c[0], c[1], res.StatusCode, sessionCookieOf(res))
				}
			}
			res, _ := login("operator-user", testPassword)
			c := sessionCookieOf(res)
			if res.StatusCode != http.StatusSeeOther || c == nil {
				t.Fatalf("login: %d, cookie %v", res.StatusCode, c)
			}
			wantSecure := strings.HasPrefix(publicURL, "https")
			if !c.HttpOnly || c.SameSite != http.SameSiteLaxMode || c.Secure != wantSecure || c.Path != "/" {
				t.Errorf("cookie flags: HttpOnly %v SameSite %v Secure %v (want %v) Path %q", c.HttpOnly, c.SameSite, c.Secure, wantSecure, c.Path)
			}
			cookie := []string{"Cookie", "atoll_session=" + c.Value}
			if res, body := f.do(t, "GET", "/api/v1/me", "", cookie...); res.StatusCode != 200 || !strings.Contains(body, `"operator-user"`) {
				t.Fatalf("me with the session: %d %s", res.StatusCode, body)
			}
			res, _ = f.do(t, "POST", "/logout", "", append(cookie, "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")...)
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
				t.Fatalf("logout: %d %q", res.StatusCode, res.Header.Get("Location"))
			}
			// The row is gone: the old cookie signs nobody in.
			if _, err := f.db.SessionUser(ctx, atoll.HashSecret(c.Value)); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
				t.Errorf("session after logout: %v", err)
			}
			if res, _ := f.do(t, "GET", "/api/v1/me", "", cookie...); res.StatusCode != 401 {
				t.Errorf("me after logout: %d", res.StatusCode)
			}
			events, err := f.db.Events(ctx, 10)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := len(events) - 1; i >= 0; i-- {
				e := events[i]
				actor := e.Actor
				if strings.HasPrefix(actor, "unknown user (") { // a tag, not the name typed
					actor = "unknown user"
				}
				got = append(got, e.Action+" "+actor)
				if !strings.Contains(e.Detail, "127.0.0.1") {
					t.Errorf("event %+v lacks the client address", e)
				}
			}
			want := "login_failed operator-user,login_failed unknown user,login_failed operator-user,login operator-user,logout operator-user"
			if strings.Join(got, ",") != want {
				t.Errorf("events = %v, want %s", got, want)
			}
		})
	}
}

// Scripts sign in with basic auth of a local account, an API token, or the
// legacy --api-secret (also as Atlantis's X-Atlantis-Token); a revoked
// token or disabled user stops working at once.
func TestBasicAuthTokensAndAPISecret(t *testing.T) {
	f := newAuthFixture(t, func(s *web.Server) { s.APISecret = "legacy-secret" })
	me := func(h ...string) (int, string) {
		res, body := f.do(t, "GET", "/api/v1/me", "", h...)
		return res.StatusCode, body
	}
	basic := func(name, password string) []string {
		req, _ := http.NewRequest("GET", "/", nil)
		req.SetBasicAuth(name, password)
		return []string{"Authorization", req.Header.Get("Authorization")}
	}
	cases := []struct {
		name   string
		header []string
		status int
		user   string
	}{
		{"basic", basic("viewer-user", testPassword), 200, `"viewer-user"`},
		{"basic wrong password", basic("viewer-user", "nope"), 401, "Wrong name or password"},
		{"bearer token", bearer(f.tokens[atoll.RoleAdmin]), 200, `"admin-user"`},
		{"bearer wrong token", bearer("not-a-token"), 401, "Invalid or revoked API token"},
		{"api secret", bearer("legacy-secret"), 200, `"api-secret"`},
		{"api secret as X-Atlantis-Token", []string{"X-Atlantis-Token", "legacy-secret"}, 200, `"admin"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if status, body := me(c.header...); status != c.status || !strings.Contains(body, c.user) {
				t.Fatalf("%d %s; want %d with %s", status, body, c.status, c.user)
			}
		})
	}

	// The admin page makes a token, shows it once, and revokes it.
	adminH := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	res, page := f.do(t, "POST", "/admin/tokens", url.Values{"user": {"operator-user"}, "name": {"ci"}}.Encode(), adminH...)
	if res.StatusCode != http.StatusCreated || !strings.Contains(page, "shown only this once") {
		t.Fatalf("create token: %d", res.StatusCode)
	}
	start := strings.Index(page, `id="new-token">`) + len(`id="new-token">`)
	token := page[start : start+strings.Index(page[start:], "<")]
	if status, body := me(bearer(token)...); status != 200 || !strings.Contains(body, `"operator-user"`) {
		t.Fatalf("new token: %d %s", status, body)
	}
	if _, again := f.do(t, "GET", "/admin", "", adminH...); strings.Contains(again, token) {
		t.Fatal("the admin page shows the token a second time")
	}
	toks, _ := f.db.Tokens(context.Background())
	res, _ = f.do(t, "POST", "/admin/tokens/"+strconv.FormatInt(toks[0].ID, 10)+"/revoke", "", adminH...)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke: %d", res.StatusCode)
	}
	if status, body := me(bearer(token)...); status != 401 {
		t.Fatalf("revoked token: %d %s", status, body)
	}
	// Disabling a user stops its tokens and password.
	op, _ := f.db.UserByName(context.Background(), "operator-user")
	res, _ = f.do(t, "POST", "/admin/users/"+strconv.FormatInt(op.ID, 10)+"/disable", "disabled=true", adminH...)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("disable: %d", res.StatusCode)
	}
	if status, _ := me(bearer(f.tokens[atoll.RoleOperator])...); status != 401 {
		t.Errorf("disabled user's token: %d", status)
	}
	if status, _ := me(basic("operator-user", testPassword)...); status != 401 {
		t.Errorf("disabled user's password: %d", status)
	}
}

// The admin page creates users, changes roles and refuses to leave no
// admin.
func TestAdminUsers(t *testing.T) {
	f := newAuthFixture(t, nil)
	ctx := context.Background()
	h := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	res, _ := f.do(t, "POST", "/admin/users", url.Values{"name": {"carol"}, "role": {"operator"}, "password": {"carol's password"}}.Encode(), h...)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("create user: %d", res.StatusCode)
	}
	res, body := f.do(t, "GET", "/api/v1/me", "", "Authorization", basicAuth("carol", "carol's password"))
	if res.StatusCode != 200 || !strings.Contains(body, `"operator"`) {
		t.Fatalf("carol: %d %s", res.StatusCode, body)
	}
	carol, _ := f.db.UserByName(ctx, "carol")
	res, _ = f.do(t, "POST", "/admin/users/"+strconv.FormatInt(carol.ID, 10)+"/role", "role=viewer", h...)
	if carol, _ = f.db.UserByName(ctx, "carol"); res.StatusCode != http.StatusSeeOther || carol.Role != atoll.RoleViewer {
		t.Fatalf("set role: %d, role %s", res.StatusCode, carol.Role)
	}
	// The one admin cannot demote, disable or delete themselves.
	me, _ := f.db.UserByName(ctx, "admin-user")
	for _, c := range [][2]string{{"role", "role=viewer"}, {"disable", "disabled=true"}, {"delete", ""}} {
		res, _ := f.do(t, "POST", "/admin/users/"+strconv.FormatInt(me.ID, 10)+"/"+c[0], c[1], h...)
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Set-Cookie"), "no+enabled+admin") {
			t.Errorf("%s of the last admin: %d %q", c[0], res.StatusCode, res.Header.Get("Set-Cookie"))
		}
	}
	if me, err := f.db.UserByName(ctx, "admin-user"); err != nil || me.Role != atoll.RoleAdmin || me.Disabled {
		t.Errorf("last admin = %+v, %v", me, err)
	}
	events, _ := f.db.Events(ctx, 10)
	if len(events) < 2 || events[len(events)-1].Action != "user.create" || events[len(events)-1].Actor != "admin-user" {
		t.Errorf("events = %+v", events)
	}
}

func basicAuth(name, password string) string {
	req, _ := http.NewRequest("GET", "/", nil)
	req.SetBasicAuth(name, password)
	return req.Header.Get("Authorization")
}

// The comment API records the signed-in user as the comment's author and
// the request's user, and refuses a user named in the body.
func TestCommentActorIsSignedInUser(t *testing.T) {
	f := newAuthFixture(t, nil)
	ctx := context.Background()
	path := "/api/v1/repos/acme/infra/pulls/7/comments"
	res, body := f.do(t, "POST", path, `{"body":"atlantis plan","user":"mallory"}`, bearer(f.tokens[atoll.RoleOperator])...)
	if res.StatusCode != 400 || !strings.Contains(body, "user field is not accepted") {
		t.Fatalf("user in the body: %d %s", res.StatusCode, body)
	}
	if _, err := f.db.Request(ctx, 1); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("a request was queued: %v", err)
	}
	res, body = f.do(t, "POST", path, `{"body":"atlantis plan"}`, bearer(f.tokens[atoll.RoleOperator])...)
	if res.StatusCode != 201 {
		t.Fatalf("comment: %d %s", res.StatusCode, body)
	}
	comments, _ := f.db.Comments(ctx, f.pullID)
	if last := comments[len(comments)-1]; last.Author != "operator-user" || last.Body != "atlantis plan" {
		t.Errorf("comment = %+v, want by operator-user", last)
	}
	if q, err := f.db.Request(ctx, 1); err != nil || q.User != "operator-user" {
		t.Errorf("request = %+v, %v; want by operator-user", q, err)
	}
}

// Every response carries the security headers: pages, API answers, errors
// and refusals.
func TestSecurityHeaders(t *testing.T) {
	f := newAuthFixture(t, nil)
	want := map[string]string{
		"Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "same-origin",
		"X-Frame-Options":         "DENY",
	}
	for _, c := range []struct {
		path   string
		header []string
	}{
		{"/healthz", nil}, {"/login", nil}, {"/api/v1/locks", nil}, {"/", []string{"Accept", "text/html"}},
		{"/", bearer(f.tokens[atoll.RoleViewer])}, {"/api/v1/locks", bearer(f.tokens[atoll.RoleViewer])}, {"/assets/atoll.js", nil},
	} {
		res, _ := f.do(t, "GET", c.path, "", c.header...)
		for k, v := range want {
			if got := res.Header.Values(k); len(got) != 1 || got[0] != v {
				t.Errorf("%s (%d): %s = %q, want %q", c.path, res.StatusCode, k, got, v)
			}
		}
	}
}

// Passwords and API tokens never reach the database file or the logs: only
// bcrypt and SHA-256 hashes are kept.
func TestSecretsStayOutOfDatabaseAndLogs(t *testing.T) {
	f := newAuthFixture(t, nil)
	h := append(bearer(f.tokens[atoll.RoleAdmin]), "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	const password = "zebra-password-123"
	f.do(t, "POST", "/admin/users", url.Values{"name": {"dora"}, "role": {"viewer"}, "password": {password}}.Encode(), h...)
	res, page := f.do(t, "POST", "/admin/tokens", url.Values{"user": {"dora"}, "name": {"ci"}}.Encode(), h...)
	start := strings.Index(page, `id="new-token">`) + len(`id="new-token">`)
	token := page[start : start+strings.Index(page[start:], "<")]
	if res.StatusCode != 201 || len(token) < 40 {
		t.Fatalf("token: %d %q", res.StatusCode, token)
	}
	form := url.Values{"name": {"dora"}, "password": {password}}.Encode()
	res, _ = f.do(t, "POST", "/login", form, "Content-Type", "application/x-www-form-urlencoded")
	session := sessionCookieOf(res)
	f.do(t, "GET", "/api/v1/me", "", bearer(token)...)
	f.do(t, "GET", "/api/v1/me", "", "Authorization", basicAuth("dora", password))
	f.do(t, "GET", "/api/v1/me", "", "Authorization", basicAuth("dora", "wrong-"+password))
	if session == nil {
		t.Fatal("no session")
	}
	secrets := []string{password, token, session.Value, f.tokens[atoll.RoleAdmin], testPassword}
	f.srv.Close()
	f.db.Close()
	var files [][]byte
	for _, p := range []string{f.db.Path, f.db.Path + "-wal"} {
		b, err := os.ReadFile(p)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		files = append(files, b)
	}
	f.logs.mu.Lock()
	files = append(files, f.logs.buf.Bytes())
	f.logs.mu.Unlock()
	if len(files[2]) == 0 {
		t.Fatal("no logs captured")
	}
	for _, s := range secrets {
		for i, b := range files {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("secret %q found in file %d", s[:4], i)
			}
		}
	}
}

// The admin page has the apply freeze and links the audit log; the freeze
// form brings a plain form post back to it.
func TestAdminPageFreezeAndAudit(t *testing.T) {
	f := newAuthFixture(t, nil)
	h := append(bearer(f.tokens[atoll.RoleAdmin]), "Accept", "text/html")
	res, page := f.do(t, "GET", "/admin", "", h...)
	if res.StatusCode != 200 {
		t.Fatalf("admin page: %d", res.StatusCode)
	}
	for _, want := range []string{`href="/audit" id="admin-audit-link"`, `<section class="card freeze" id="freeze">`,
		`action="/admin/freeze"`, `name="back" value="/admin"`, "Freeze applies"} {
		if !strings.Contains(page, want) {
			t.Errorf("admin page lacks %q", want)
		}
	}
	form := url.Values{"on": {"1"}, "reason": {"release day"}, "back": {"/admin"}}.Encode()
	res, _ = f.do(t, "POST", "/admin/freeze", form, append(h, "Content-Type", "application/x-www-form-urlencoded")...)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/admin" {
		t.Fatalf("freeze from the admin page: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	if fr, err := f.db.Freeze(context.Background()); err != nil || !fr.On || fr.By != "admin-user" {
		t.Fatalf("freeze = %+v, %v", fr, err)
	}
	if _, page = f.do(t, "GET", "/admin", "", h...); !strings.Contains(page, "Lift the freeze") {
		t.Error("the admin page does not offer to lift the freeze")
	}
}

// Guessing passwords from one address stops after ten failures, for the
// login form and basic auth alike, the right password included, until the
// window has passed; refused attempts write nothing.
func TestLoginThrottle(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	f := newAuthFixture(t, func(s *web.Server) {
		web.SetLoginClock(s, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	})
	login := func(password string) (*http.Response, string) {
		form := url.Values{"name": {"operator-user"}, "password": {password}, "next": {"/"}}.Encode()
		return f.do(t, "POST", "/login", form, "Content-Type", "application/x-www-form-urlencoded", "Accept", "text/html")
	}
	basic := func(password string) int {
		req, _ := http.NewRequest("GET", f.srv.URL+"/api/v1/me", nil)
		req.SetBasicAuth("operator-user", password)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for i := range 10 {
		if res, _ := login(fmt.Sprintf("guess %d", i)); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d", i, res.StatusCode)
		}
	}
	events := func() int {
		evs, err := f.db.Events(context.Background(), 1000)
		if err != nil {
			t.Fatal(err)
		}
		return len(evs)
	}
	before := events()
	res, body := login(testPassword)
	if res.StatusCode != http.StatusTooManyRequests || sessionCookieOf(res) != nil || !strings.Contains(body, "Too many failed sign-ins from your address: try again in 5 min.") {
		t.Fatalf("the right password after ten failures: %d cookie %v\n%s", res.StatusCode, sessionCookieOf(res), body)
	}
	if code := basic(testPassword); code != http.StatusTooManyRequests {
		t.Fatalf("basic auth after ten failures: %d", code)
	}
	if n := events(); n != before {
		t.Errorf("refused attempts wrote %d audit events", n-before)
	}
	mu.Lock()
	now = now.Add(5 * time.Minute)
	mu.Unlock()
	if code := basic(testPassword); code != http.StatusOK {
		t.Fatalf("basic auth once the window has passed: %d", code)
	}
	if res, _ := login(testPassword); res.StatusCode != http.StatusSeeOther || sessionCookieOf(res) == nil {
		t.Fatalf("login once the window has passed: %d", res.StatusCode)
	}
}
