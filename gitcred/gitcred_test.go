package gitcred_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll/gitcred"
	"github.com/atollhq/atoll/vcs"
)

const token = "ghs_secretTOKENforTests42"

// TestMain lets the test binary be the credential helper git runs, as the
// atoll executable is in production (`atoll git-credential get`).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == "git-credential" {
		if err := gitcred.RunHelper(os.Args[2:], os.Stdin, os.Stdout, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, "atoll:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func listen(t *testing.T) *gitcred.Server {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s, err := gitcred.Listen(filepath.Join(t.TempDir(), "credentials"), []string{exe, "git-credential"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func source(url string) gitcred.Source {
	return gitcred.Source{URL: url, Get: func(context.Context) (vcs.GitCredential, error) {
		return vcs.GitCredential{URL: url, Username: "x-access-token", Password: token}, nil
	}}
}

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func TestHelperProtocol(t *testing.T) {
	s := listen(t)
	env, revoke := s.Grant(source("https://github.com"), gitcred.Source{URL: "http://127.0.0.1:8080", Get: func(context.Context) (vcs.GitCredential, error) {
		return vcs.GitCredential{}, errors.New("minting failed")
	}})
	defer revoke()
	granted := envMap(env)
	old, oldRevoke := s.Grant(source("https://github.com"))
	oldRevoke()

	tests := []struct {
		name    string
		args    []string
		stdin   string
		env     map[string]string
		want    string
		wantErr string
	}{
		{"served host", []string{"get"}, "protocol=https\nhost=github.com\npath=acme/m.git\n\n", granted, "username=x-access-token\npassword=" + token + "\n", ""},
		{"host case and CRLF", []string{"get"}, "protocol=https\r\nhost=GitHub.com\r\n\r\n", granted, "username=x-access-token\npassword=" + token + "\n", ""},
		{"unknown host: no answer, git tries its other helpers", []string{"get"}, "protocol=https\nhost=gitlab.com\n\n", granted, "", ""},
		{"other scheme: no answer", []string{"get"}, "protocol=http\nhost=github.com\n\n", granted, "", ""},
		{"source failing", []string{"get"}, "protocol=http\nhost=127.0.0.1:8080\n\n", granted, "", "unavailable"},
		{"bad nonce", []string{"get"}, "protocol=https\nhost=github.com\n\n", map[string]string{gitcred.EnvSocket: s.Path(), gitcred.EnvNonce: "0123"}, "", "not valid"},
		{"revoked nonce", []string{"get"}, "protocol=https\nhost=github.com\n\n", envMap(old), "", "revoked"},
		{"socket missing", []string{"get"}, "protocol=https\nhost=github.com\n\n", map[string]string{gitcred.EnvSocket: filepath.Join(t.TempDir(), "none.sock"), gitcred.EnvNonce: granted[gitcred.EnvNonce]}, "", "asking Atoll"},
		{"not run by Atoll", []string{"get"}, "protocol=https\nhost=github.com\n\n", nil, "", "must be set"},
		{"store is a no-op", []string{"store"}, "protocol=https\nhost=github.com\nusername=u\npassword=p\n\n", granted, "", ""},
		{"erase is a no-op", []string{"erase"}, "protocol=https\nhost=github.com\n\n", granted, "", ""},
		{"unknown action ignored", []string{"frobnicate"}, "", granted, "", ""},
		{"no action", nil, "", granted, "", "usage"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			err := gitcred.RunHelper(tt.args, strings.NewReader(tt.stdin), &out, func(k string) string { return tt.env[k] })
			if tt.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), token) {
				t.Fatalf("error shows the token: %v", err)
			}
			if out.String() != tt.want {
				t.Fatalf("output = %q, want %q", out.String(), tt.want)
			}
		})
	}
}

func TestGrantEnvironment(t *testing.T) {
	s := listen(t)
	if env, _ := s.Grant(); env != nil {
		t.Fatalf("no sources granted env %q", env)
	}
	var nilServer *gitcred.Server
	if env, _ := nilServer.Grant(source("https://github.com")); env != nil {
		t.Fatalf("nil server granted env %q", env)
	}
	env, revoke := s.Grant(source("https://github.com"), source("http://127.0.0.1:8080"))
	defer revoke()
	if s.Active() != 1 {
		t.Fatalf("Active = %d after one grant", s.Active())
	}
	m := envMap(env)
	exe, _ := os.Executable()
	want := map[string]string{
		"GIT_CONFIG_COUNT":    "4",
		"GIT_CONFIG_KEY_0":    "credential.https://github.com.helper",
		"GIT_CONFIG_VALUE_0":  "", // clears the helpers of config files
		"GIT_CONFIG_KEY_1":    "credential.https://github.com.helper",
		"GIT_CONFIG_VALUE_1":  "!'" + exe + "' 'git-credential'",
		"GIT_CONFIG_KEY_2":    "credential.http://127.0.0.1:8080.helper",
		"GIT_CONFIG_VALUE_2":  "",
		"GIT_CONFIG_KEY_3":    "credential.http://127.0.0.1:8080.helper",
		"GIT_CONFIG_VALUE_3":  "!'" + exe + "' 'git-credential'",
		"GIT_TERMINAL_PROMPT": "0",
		gitcred.EnvSocket:     s.Path(),
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %q, want %q", k, m[k], v)
		}
	}
	if len(m[gitcred.EnvNonce]) != 64 {
		t.Errorf("nonce = %q, want 32 random bytes in hex", m[gitcred.EnvNonce])
	}
	env2, revoke2 := s.Grant(source("https://github.com"))
	defer revoke2()
	if envMap(env2)[gitcred.EnvNonce] == m[gitcred.EnvNonce] {
		t.Error("two grants share a nonce")
	}
	if strings.Contains(strings.Join(env, "\n"), token) {
		t.Fatalf("env holds the token: %q", env)
	}
	for path, mode := range map[string]os.FileMode{filepath.Dir(s.Path()): 0o700, s.Path(): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != mode {
			t.Errorf("%s mode %v, want %v", path, st.Mode().Perm(), mode)
		}
	}
}

func TestListenLongPath(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 120))
	s, err := gitcred.Listen(long, []string{"atoll", "git-credential"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.Path())
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("socket dir %s: %v %v", dir, st, err)
	}
	s.Close()
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("temporary socket dir %s left after Close: %v", dir, err)
	}
}

// privateGit serves the repositories under root over git's smart HTTP
// protocol (the real git http-backend) to basic auth with the token only.
func privateGit(t *testing.T, root string) *httptest.Server {
	t.Helper()
	gitPath, err := exec.LookPath("git")
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{Path: gitPath, Args: []string{"http-backend"},
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// moduleRepo makes root/acme/modules.git holding module m, tagged v1.
func moduleRepo(t *testing.T, root string) {
	t.Helper()
	work := t.TempDir()
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(baseEnv(t), "GIT_AUTHOR_NAME=T", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=T", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.MkdirAll(filepath.Join(work, "m"), 0o755)
	os.WriteFile(filepath.Join(work, "m", "main.tf"), []byte("output \"v\" {\n  value = \"from the private module\"\n}\n"), 0o644)
	run(work, "init", "--quiet", "--initial-branch=main")
	run(work, "add", "-A")
	run(work, "commit", "--quiet", "-m", "module")
	run(work, "tag", "v1")
	os.MkdirAll(filepath.Join(root, "acme"), 0o755)
	run(root, "clone", "--quiet", "--bare", work, filepath.Join(root, "acme", "modules.git"))
}

// baseEnv is a clean environment: no user or system git config.
func baseEnv(t *testing.T) []string {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "terraformrc"), nil, 0o644)
	return []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"TF_CLI_CONFIG_FILE=" + filepath.Join(home, "terraformrc"), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1"}
}

func TestGitCloneThroughHelper(t *testing.T) {
	root := t.TempDir()
	moduleRepo(t, root)
	srv := privateGit(t, root)
	s := listen(t)
	env, revoke := s.Grant(source(srv.URL))
	// The user's own helper stores what works: it must not see Atoll's.
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[credential]\n\thelper = store\n"), 0o644)
	clone := func(env []string) (string, string, error) {
		dst := filepath.Join(t.TempDir(), "clone")
		cmd := exec.Command("git", "clone", "--quiet", srv.URL+"/acme/modules.git", dst)
		cmd.Env = append(append(baseEnv(t), "HOME="+home), env...)
		out, err := cmd.CombinedOutput()
		return dst, string(out), err
	}
	dst, out, err := clone(env)
	if err != nil {
		t.Fatalf("clone with the helper: %v\n%s", err, out)
	}
	cfg, err := os.ReadFile(filepath.Join(dst, ".git", "config"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(cfg, []byte(token)) {
		t.Fatalf(".git/config holds the token:\n%s", cfg)
	}
	if b, err := os.ReadFile(filepath.Join(home, ".git-credentials")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the user's credential helper stored Atoll's credential: %q %v", b, err)
	}

	revoke()
	if _, out, err := clone(env); err == nil || !strings.Contains(out, "revoked or never granted") {
		t.Fatalf("clone after the run's grant was revoked: err %v, want the helper's message:\n%s", err, out)
	}
	if _, out, err := clone([]string{"GIT_TERMINAL_PROMPT=0"}); err == nil {
		t.Fatalf("clone without the helper succeeded:\n%s", out)
	}
}

func TestTerraformInitPrivateModule(t *testing.T) {
	tf := os.Getenv("ATOLL_TEST_TERRAFORM")
	if tf == "" {
		t.Skip("ATOLL_TEST_TERRAFORM is not set")
	}
	root := t.TempDir()
	moduleRepo(t, root)
	srv := privateGit(t, root)
	s := listen(t)
	init := func(env []string) (string, error) {
		dir := t.TempDir()
		main := fmt.Sprintf("module \"m\" {\n  source = \"git::%s/acme/modules.git//m?ref=v1\"\n}\n", srv.URL)
		os.WriteFile(filepath.Join(dir, "main.tf"), []byte(main), 0o644)
		cmd := exec.Command(tf, "init", "-input=false")
		cmd.Dir = dir
		cmd.Env = append(baseEnv(t), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	env, revoke := s.Grant(source(srv.URL))
	if out, err := init(env); err != nil {
		t.Fatalf("terraform init with the helper: %v\n%s", err, out)
	}
	revoke()
	out, err := init(env)
	if err == nil || !strings.Contains(out, "revoked or never granted") {
		t.Fatalf("terraform init after the grant was revoked: err %v, want the helper's message:\n%s", err, out)
	}
	t.Logf("init with a revoked grant says:\n%s", out)
	if out, err := init([]string{"GIT_TERMINAL_PROMPT=0"}); err == nil {
		t.Fatalf("terraform init without the helper succeeded:\n%s", out)
	}
}
