package main_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// A person signs in through the login form of the real server and reads a
// page; without a session, pages send the browser to the login page and
// logs and the API answer 401.
func TestLoginThroughTheServer(t *testing.T) {
	testEnv(t)
	m := startMain(t, t.TempDir(), func(c *main.Config) { c.RepoAllowlist = "github.com/acme/*" })
	t.Cleanup(func() { m.Close() })
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	get := func(c *http.Client, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", m.URL+path, nil)
		req.Header.Set("Accept", "text/html")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}
	login := func(password string) (*http.Response, string) {
		t.Helper()
		res, err := browser.PostForm(m.URL+"/login", url.Values{"name": {"admin"}, "password": {password}, "next": {"/"}})
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	// Signed out, the index leads to the login form.
	res, body := get(browser, "/")
	if res.StatusCode != 200 || res.Request.URL.Path != "/login" || !strings.Contains(body, `name="password"`) {
		t.Fatalf("index signed out: %d at %s", res.StatusCode, res.Request.URL)
	}
	if res, body := login("not the password"); res.StatusCode != 401 || !strings.Contains(body, "Wrong name or password.") {
		t.Fatalf("wrong password: %d", res.StatusCode)
	}
	res, body = login(testAdminPassword)
	if res.StatusCode != 200 || res.Request.URL.Path != "/" || !strings.Contains(body, "Sign out") || !strings.Contains(body, "admin") {
		t.Fatalf("after signing in: %d at %s", res.StatusCode, res.Request.URL)
	}
	if res, _ := get(browser, "/jobs/1"); res.StatusCode != 404 || res.Request.URL.Path != "/jobs/1" {
		t.Errorf("job page signed in: %d at %s, want the page's own 404", res.StatusCode, res.Request.URL)
	}

	// Nobody signed in: no log, no page, no API.
	anonymous := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, p := range []string{"/jobs/1/log", "/api/v1/jobs/1/log", "/api/v1/locks", "/metrics", "/jobs/1/ws"} {
		req, _ := http.NewRequest("GET", m.URL+p, nil)
		res, err := anonymous.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 401 {
			t.Errorf("GET %s signed out: %d, want 401", p, res.StatusCode)
		}
	}
	if res, _ := get(anonymous, "/jobs/1"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next=%2Fjobs%2F1" {
		t.Errorf("job page signed out: %d Location %q", res.StatusCode, res.Header.Get("Location"))
	}

	// Signing out ends the session.
	res, err := browser.PostForm(m.URL+"/logout", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res, _ := get(browser, "/"); res.Request.URL.Path != "/login" {
		t.Errorf("after signing out, the index is at %s", res.Request.URL)
	}
}

// Without --admin-password and without a local admin, the server sets a
// one-time password on "admin" and prints it once to stderr, outside the
// logs; only its hash is stored, and the next start prints nothing.
func TestOneTimeAdminPassword(t *testing.T) {
	testEnv(t)
	dataDir := t.TempDir()
	start := func() (*main.Main, *bytes.Buffer, *bytes.Buffer) {
		m := main.NewMain()
		m.Config.Addr, m.Config.DataDir, m.Config.TerraformBin = "127.0.0.1:0", dataDir, terraformBin(t)
		m.Config.RepoAllowlist = "github.com/acme/*"
		var stderr, logs bytes.Buffer
		m.Stderr = &stderr
		m.Logger = slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		if err := m.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return m, &stderr, &logs
	}
	m, stderr, logs := start()
	match := regexp.MustCompile(`Sign in to Atoll as "admin" with the one-time password:\s+(\S+)`).FindStringSubmatch(stderr.String())
	if match == nil {
		m.Close()
		t.Fatalf("no password printed: %q", stderr.String())
	}
	password := match[1]
	req, _ := http.NewRequest("GET", m.URL+"/api/v1/me", nil)
	req.SetBasicAuth("admin", password)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(string(b), `"role": "admin"`) {
		t.Fatalf("me as admin: %d %s", res.StatusCode, b)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m, stderr, logs2 := start()
	defer m.Close()
	if stderr.Len() != 0 {
		t.Errorf("second start printed %q", stderr.String())
	}
	for _, f := range []string{"atoll.db", "atoll.db-wal"} {
		b, _ := os.ReadFile(filepath.Join(dataDir, f))
		if bytes.Contains(b, []byte(password)) {
			t.Errorf("%s holds the password", f)
		}
	}
	if bytes.Contains(logs.Bytes(), []byte(password)) || bytes.Contains(logs2.Bytes(), []byte(password)) {
		t.Error("the logs hold the password")
	}
}
