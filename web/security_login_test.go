package web_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// loginFrom posts the login form to f's handler as if from addr (an IP
// address, v4 or v6) and returns the status and body.
func loginFrom(t *testing.T, f *authFixture, addr, name, password string) (int, string) {
	t.Helper()
	form := url.Values{"name": {name}, "password": {password}, "next": {"/"}}.Encode()
	req := httptest.NewRequest("POST", "/login", strings.NewReader(form))
	req.RemoteAddr = net.JoinHostPort(addr, "40000")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "text/html")
	rec := httptest.NewRecorder()
	f.srv.Config.Handler.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// wantLogin fails unless a sign-in from addr answers want (and, for 429,
// says why and how long to wait).
func wantLogin(t *testing.T, f *authFixture, addr, name, password string, want int, why string) {
	t.Helper()
	code, body := loginFrom(t, f, addr, name, password)
	if code != want {
		t.Fatalf("%s: sign-in from %s as %s answered %d, want %d", why, addr, name, code, want)
	}
	if want == http.StatusTooManyRequests && !strings.Contains(body, "try again in 5 min.") {
		t.Errorf("%s: the refusal does not say how long to wait:\n%s", why, body)
	}
}

// Concurrent wrong passwords from one address, through the login form and
// basic auth at once, cannot pass the limit before the first is counted:
// at most ten are checked, the rest get 429 and write nothing.
func TestSecurityLoginLimitConcurrent(t *testing.T) {
	f := newAuthFixture(t, nil)
	// A costlier hash than the fixture's: each compare takes a while, as
	// in production, so that the attempts overlap.
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), 8)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.CreateUser(atoll.NewUser{Name: "bob", Role: atoll.RoleAdmin, Source: atoll.UserSourceLocal, PasswordHash: string(hash)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	// Straight to the handler, from one address: the attempts arrive
	// together, not spread out by dialling.
	attempt := func(i int) int {
		var req *http.Request
		if i%2 == 0 {
			form := url.Values{"name": {"bob"}, "password": {fmt.Sprintf("guess %d", i)}}.Encode()
			req = httptest.NewRequest("POST", "/login", strings.NewReader(form))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req = httptest.NewRequest("GET", "/api/v1/me", nil)
			req.SetBasicAuth("bob", fmt.Sprintf("guess %d", i))
		}
		req.RemoteAddr = "203.0.113.7:40000"
		rec := httptest.NewRecorder()
		f.srv.Config.Handler.ServeHTTP(rec, req)
		return rec.Code
	}
	const n = 60
	codes := make([]int, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			codes[i] = attempt(i)
		})
	}
	close(start)
	wg.Wait()
	checked := 0
	for i, code := range codes {
		switch {
		case code == http.StatusUnauthorized:
			checked++
		case code != http.StatusTooManyRequests:
			t.Errorf("attempt %d: %d", i, code)
		}
	}
	if checked > 10 {
		t.Errorf("%d of %d concurrent wrong passwords were checked, want at most 10", checked, n)
	}
	events, err := f.db.AuditEvents(context.Background(), atoll.EventFilter{Action: "login_failed", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(events) > 10 {
		t.Errorf("%d failed sign-ins recorded, want at most 10", len(events))
	}
}

// Signing in to one's own account between guesses does not reset the
// count of the guesses against another account: nine wrong passwords for
// admin and one right one for one's own, three times over, end in 429.
func TestSecurityLoginLimitInterleaved(t *testing.T) {
	t.Parallel()
	f := newAuthFixture(t, nil)
	const attacker = "203.0.113.9"
	checked := 0
	for round := range 3 {
		for i := range 9 {
			if code, _ := loginFrom(t, f, attacker, "admin-user", fmt.Sprintf("guess %d.%d", round, i)); code != http.StatusTooManyRequests {
				checked++
			}
		}
		loginFrom(t, f, attacker, "viewer-user", testPassword) // the attacker's own account
	}
	if checked > 10 {
		t.Errorf("%d wrong passwords for admin-user were checked, want at most 10", checked)
	}
	wantLogin(t, f, attacker, "admin-user", testPassword, http.StatusTooManyRequests, "admin-user after the rounds")
}

// rotatingNames spread guesses over the fixture's accounts, so that none
// reaches its own limit: what stops them is the address's.
var rotatingNames = []string{"admin-user", "viewer-user", "operator-user"}

// Guesses from many addresses of one IPv6 /64 count as one address, and
// an IPv4 address counts the same written as IPv4-mapped IPv6.
func TestSecurityLoginLimitIPv6(t *testing.T) {
	t.Parallel()
	t.Run("one account", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		for i := range 10 {
			wantLogin(t, f, fmt.Sprintf("2001:db8:1:2::%x", i+1), "admin-user", "guess", http.StatusUnauthorized, "guess")
		}
		wantLogin(t, f, "2001:db8:1:2:ffff:ffff:ffff:ffff", "admin-user", testPassword, http.StatusTooManyRequests, "the eleventh from the /64")
	})
	t.Run("many names", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		for i := range 10 {
			wantLogin(t, f, fmt.Sprintf("2001:db8:1:2::%x", i+1), rotatingNames[i%3], "guess", http.StatusUnauthorized, "guess")
		}
		wantLogin(t, f, "2001:db8:1:2::abcd", "nobody", testPassword, http.StatusTooManyRequests, "the eleventh from the /64")
		wantLogin(t, f, "2001:db8:1:3::1", "viewer-user", testPassword, http.StatusSeeOther, "the next /64")
	})
	t.Run("IPv4-mapped", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		for i := range 10 {
			addr := "192.0.2.7"
			if i%2 == 1 {
				addr = "::ffff:192.0.2.7"
			}
			wantLogin(t, f, addr, rotatingNames[i%3], "guess", http.StatusUnauthorized, "guess")
		}
		wantLogin(t, f, "::ffff:192.0.2.7", "nobody", testPassword, http.StatusTooManyRequests, "the eleventh, mapped")
		wantLogin(t, f, "192.0.2.7", "nobody", testPassword, http.StatusTooManyRequests, "the eleventh, IPv4")
	})
}

// An account is limited however many addresses guess its password, and a
// success clears only the failures against its own account.
func TestSecurityLoginLimitPerAccount(t *testing.T) {
	t.Parallel()
	t.Run("many addresses", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		for i := range 10 {
			name := "admin-user"
			if i == 0 {
				name = " Admin-User " // the same account to the limit
			}
			wantLogin(t, f, fmt.Sprintf("198.51.100.%d", i+1), name, "guess", http.StatusUnauthorized, "guess")
		}
		code, body := loginFrom(t, f, "198.51.100.200", "admin-user", testPassword)
		if code != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins for this account: try again in 5 min.") {
			t.Fatalf("the right password after ten guesses from ten addresses: %d\n%s", code, body)
		}
	})
	t.Run("a success keeps the address's failures against other accounts", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		const a = "198.51.100.1"
		for range 6 {
			wantLogin(t, f, a, "admin-user", "guess", http.StatusUnauthorized, "guess at admin-user")
		}
		for range 3 {
			wantLogin(t, f, a, "viewer-user", "typo", http.StatusUnauthorized, "typo at viewer-user")
		}
		wantLogin(t, f, a, "viewer-user", testPassword, http.StatusSeeOther, "viewer-user's own sign-in")
		for range 4 {
			wantLogin(t, f, a, "operator-user", "guess", http.StatusUnauthorized, "guess at operator-user")
		}
		wantLogin(t, f, a, "operator-user", testPassword, http.StatusTooManyRequests, "the eleventh failure that counts")
	})
	t.Run("a success keeps the failures against other accounts from elsewhere", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		for range 5 {
			wantLogin(t, f, "198.51.100.2", "admin-user", "guess", http.StatusUnauthorized, "guess from B")
		}
		for range 9 {
			wantLogin(t, f, "198.51.100.1", "viewer-user", "typo", http.StatusUnauthorized, "typo from A")
		}
		wantLogin(t, f, "198.51.100.1", "viewer-user", testPassword, http.StatusSeeOther, "viewer-user's own sign-in")
		for range 5 {
			wantLogin(t, f, "198.51.100.3", "admin-user", "guess", http.StatusUnauthorized, "guess from C")
		}
		wantLogin(t, f, "198.51.100.4", "admin-user", testPassword, http.StatusTooManyRequests, "admin-user after ten guesses")
	})
	t.Run("a success clears its own account", func(t *testing.T) {
		t.Parallel()
		f := newAuthFixture(t, nil)
		for i := range 9 {
			wantLogin(t, f, fmt.Sprintf("198.51.100.%d", i+1), "viewer-user", "typo", http.StatusUnauthorized, "typo")
		}
		wantLogin(t, f, "198.51.100.1", "viewer-user", testPassword, http.StatusSeeOther, "viewer-user's own sign-in")
		for range 9 {
			wantLogin(t, f, "198.51.100.50", "viewer-user", "typo", http.StatusUnauthorized, "typo after the sign-in")
		}
		wantLogin(t, f, "198.51.100.51", "viewer-user", testPassword, http.StatusSeeOther, "sign-in after nine more")
	})
}

// A failed sign-in never records what was typed as the name: against an
// existing account it is recorded by the account's name, an unknown name
// as "unknown user" with a tag, so a password typed into the name field is
// not shown to every viewer of the audit log.
func TestSecurityLoginFailedAuditName(t *testing.T) {
	f := newAuthFixture(t, nil)
	ctx := context.Background()
	hash, err := bcrypt.GenerateFromPassword([]byte(testPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateUser(atoll.NewUser{Name: "alice", Role: atoll.RoleViewer, Source: atoll.UserSourceLocal, PasswordHash: string(hash)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	const typed = "hunter2-secret"
	wantLogin(t, f, "192.0.2.10", typed, "anything", http.StatusUnauthorized, "the unknown name")
	wantLogin(t, f, "192.0.2.10", "alice", "wrong", http.StatusUnauthorized, "alice's wrong password")

	events, err := f.db.AuditEvents(ctx, atoll.EventFilter{Action: "login_failed", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	var actors []string
	for _, e := range events {
		actors = append(actors, e.Actor)
		if strings.Contains(fmt.Sprintf("%+v", e), typed) {
			t.Errorf("event %+v holds the name typed", e)
		}
	}
	if len(actors) != 2 || actors[0] != "alice" || !strings.HasPrefix(actors[1], "unknown user (") {
		t.Errorf("failed sign-ins recorded against %q, want alice and an unknown user", actors)
	}
	admin := bearer(f.tokens[atoll.RoleAdmin])
	for _, path := range []string{"/audit", "/api/v1/audit", "/api/v1/audit?action=login_failed"} {
		res, body := f.do(t, "GET", path, "", append(admin, "Accept", "text/html")...)
		if res.StatusCode != http.StatusOK || !strings.Contains(body, "unknown user (") {
			t.Errorf("%s: %d, without the unknown user", path, res.StatusCode)
		}
		if strings.Contains(body, typed) {
			t.Errorf("%s shows the name typed", path)
		}
	}
	f.srv.Close()
	f.db.Close()
	for _, path := range []string{f.db.Path, f.db.Path + "-wal"} {
		if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(typed)) {
			t.Errorf("%s holds the name typed", path)
		}
	}
	if f.logs.mu.Lock(); bytes.Contains(f.logs.buf.Bytes(), []byte(typed)) {
		t.Error("the logs hold the name typed")
	}
	f.logs.mu.Unlock()
}
