package main_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
)

const webhookSecret = "webhook-secret-for-tests"

// Test servers sign in scripts with the API secret (an admin token) and
// people with the admin account's password.
const (
	testAPISecret     = "api-secret-for-tests"
	testAdminPassword = "admin-password-for-tests"
)

// authTransport signs every request in with the API secret, unless it
// carries credentials of its own.
type authTransport struct{ secret string }

func (a authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("Authorization") == "" && r.Header.Get("X-Atlantis-Token") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+a.secret)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// authClient is http.DefaultClient signed in as the API secret.
var authClient = &http.Client{Transport: authTransport{testAPISecret}}

// authHeader is the API secret as a header, for websocket dials.
func authHeader() http.Header { return http.Header{"Authorization": {"Bearer " + testAPISecret}} }

// terraformBin is the real Terraform the Makefile builds.
func terraformBin(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("ATOLL_TEST_TERRAFORM")
	if bin == "" {
		bin, _ = filepath.Abs("../../bin/terraform")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("terraform not built (run make test): %v", err)
	}
	return bin
}

// testEnv keeps Terraform and git from reading this machine's settings.
func testEnv(t testing.TB) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "terraformrc")
	os.WriteFile(cfg, nil, 0o644)
	t.Setenv("TF_CLI_CONFIG_FILE", cfg)
	t.Setenv("CHECKPOINT_DISABLE", "1")
	t.Setenv("AWS_CA_BUNDLE", "")
}

// gitRepo is a real repository on disk that tests commit to.
type gitRepo struct {
	t   testing.TB
	Dir string
}

func newGitRepo(t testing.TB, files map[string]string) *gitRepo {
	r := &gitRepo{t: t, Dir: filepath.Join(t.TempDir(), "infra")}
	os.MkdirAll(r.Dir, 0o755)
	r.git("init", "--quiet", "--initial-branch=main")
	r.commit("initial", files)
	return r
}

func (r *gitRepo) git(args ...string) string {
	r.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com",
		"GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// commit writes files on the current branch and returns the new commit.
func (r *gitRepo) commit(msg string, files map[string]string) string {
	r.t.Helper()
	for name, body := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git("add", "-A")
	r.git("commit", "--quiet", "-m", msg)
	return r.git("rev-parse", "HEAD")
}

// branch creates branch from main with files changed and returns its head.
func (r *gitRepo) branch(name string, files map[string]string) string {
	r.git("checkout", "--quiet", "-B", name, "main")
	sha := r.commit("change on "+name, files)
	r.git("checkout", "--quiet", "main")
	return sha
}

// serveGit serves the repository over git's smart HTTP protocol (the real
// git http-backend through CGI) and requires GitHub-style token auth.
func serveGit(t testing.TB, repo *gitRepo, token string) (cloneURL string, fetches *atomic.Int64) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	fetches = new(atomic.Int64)
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Dir(repo.Dir), "GIT_HTTP_EXPORT_ALL=1"}}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		if strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			fetches.Add(1)
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/" + filepath.Base(repo.Dir), fetches
}

// startMain starts the real server on a free port.
func startMain(t testing.TB, dataDir string, configure func(*main.Config)) *main.Main {
	t.Helper()
	return startMainWith(t, dataDir, func(m *main.Main) {
		if configure != nil {
			configure(&m.Config)
		}
	})
}

// startMainWith is startMain for tests that set more than the Config (a
// logger, the credential helper).
func startMainWith(t testing.TB, dataDir string, prepare func(*main.Main)) *main.Main {
	t.Helper()
	m := main.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.DataDir = dataDir
	m.Config.TerraformBin = terraformBin(t)
	m.Config.LogLevel = "warn"
	m.Config.Parallelism = 2
	m.Config.StopTimeout = 30 * time.Second
	m.Config.APISecret = testAPISecret
	m.Config.AdminPassword = testAdminPassword
	if prepare != nil {
		prepare(m)
	}
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return m
}

// webhook posts a GitHub webhook built from a real payload fixture, with
// edits applied to its decoded JSON, signed with secret.
func webhook(t testing.TB, url, event, fixtureName, secret string, edit func(map[string]any)) *http.Response {
	t.Helper()
	raw, err := os.ReadFile(fixture(fixtureName))
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]any
	if err := json.Unmarshal(raw, &payload); err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(payload)
	}
	body, _ := json.Marshal(payload)
	return postWebhook(t, url, event, body, sign(body, secret))
}

var deliveries atomic.Int64

func postWebhook(t testing.TB, url, event string, body []byte, signature string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("POST", url+"/events", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("delivery-%d-%d", time.Now().UnixNano(), deliveries.Add(1)))
	if signature != "" {
		req.Header.Set("X-Hub-Signature-256", signature)
	}
	resp, err := authClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

func sign(body []byte, secret string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// setRepo points a payload's repository at the test repository.
func setRepo(p map[string]any, cloneURL string) {
	repo := p["repository"].(map[string]any)
	repo["name"], repo["full_name"], repo["clone_url"] = "infra", "acme/infra", cloneURL
	repo["owner"].(map[string]any)["login"] = "acme"
	repo["html_url"] = "https://github.com/acme/infra"
}

// pullEvent edits a pull_request payload.
func pullEvent(cloneURL string, number int, action, headRef, headSHA, baseSHA string) func(map[string]any) {
	return func(p map[string]any) {
		setRepo(p, cloneURL)
		p["action"], p["number"] = action, number
		pr := p["pull_request"].(map[string]any)
		pr["number"], pr["html_url"] = number, fmt.Sprintf("https://github.com/acme/infra/pull/%d", number)
		pr["head"].(map[string]any)["sha"], pr["head"].(map[string]any)["ref"] = headSHA, headRef
		pr["base"].(map[string]any)["sha"], pr["base"].(map[string]any)["ref"] = baseSHA, "main"
		pr["user"].(map[string]any)["login"] = "alice"
		p["sender"].(map[string]any)["login"] = "alice"
	}
}

// commentEvent edits an issue_comment payload to carry body on pull number.
func commentEvent(cloneURL string, number int, body string) func(map[string]any) {
	return func(p map[string]any) {
		setRepo(p, cloneURL)
		issue := p["issue"].(map[string]any)
		issue["number"] = number
		issue["html_url"] = fmt.Sprintf("https://github.com/acme/infra/pull/%d", number)
		issue["pull_request"].(map[string]any)["html_url"] = issue["html_url"]
		issue["user"].(map[string]any)["login"] = "alice"
		p["comment"].(map[string]any)["body"] = body
		p["comment"].(map[string]any)["user"].(map[string]any)["login"] = "alice"
	}
}

// eventually polls cond until it holds or the timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// getJSON decodes GET url into v and returns the status.
func getJSON(t testing.TB, url string, v any) int {
	t.Helper()
	resp, err := authClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(body, v); err != nil {
			t.Fatalf("GET %s: %v: %s", url, err, body)
		}
	}
	return resp.StatusCode
}
