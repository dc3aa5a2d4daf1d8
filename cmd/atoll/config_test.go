package main_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// Secrets can come from files (--FLAG-file or ATOLL_FLAG_FILE), keeping them
// out of argv; the trailing newline is trimmed.
func TestSecretFlagsFromFiles(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	token, hook, api := file("token", "ghp_tok\n"), file("hook", "hook secret\r\n"), file("api", "api-secret")
	empty := file("empty", "\n")

	var c main.Config
	err := c.Parse([]string{"--repo-allowlist", "github.com/acme/*", "--gh-token-file", token, "--gh-webhook-secret-file", hook},
		envOf(map[string]string{"ATOLL_API_SECRET_FILE": api}))
	if err != nil {
		t.Fatal(err)
	}
	if c.GHToken != "ghp_tok" || c.GHWebhookSecret != "hook secret" || c.APISecret != "api-secret" {
		t.Fatalf("secrets = %q %q %q", c.GHToken, c.GHWebhookSecret, c.APISecret)
	}

	bad := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"flag and file", []string{"--gh-token", "x", "--gh-token-file", token}, nil, "--gh-token and --gh-token-file are both set"},
		{"env and file flag", []string{"--api-secret-file", api}, map[string]string{"ATOLL_API_SECRET": "x"}, "--api-secret and --api-secret-file are both set"},
		{"flag and env file", []string{"--gh-webhook-secret", "x"}, map[string]string{"ATOLL_GH_WEBHOOK_SECRET_FILE": hook}, "both set"},
		{"missing file", []string{"--gh-token-file", filepath.Join(dir, "missing")}, nil, "--gh-token-file"},
		{"empty file", []string{"--api-secret-file", empty}, nil, "is empty"},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			var c main.Config
			err := c.Parse(append([]string{"--repo-allowlist", "github.com/acme/*"}, b.args...), envOf(b.env))
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Fatalf("Parse = %v; want an error containing %q", err, b.want)
			}
		})
	}
}

// The demo's API is open: it refuses VCS credentials and listens on
// 127.0.0.1 unless --addr says otherwise.
func TestDemoIsLocalOnly(t *testing.T) {
	for _, args := range [][]string{
		{"--demo", "--gh-token", "x", "--gh-webhook-secret", "y"},
		{"--demo", "--gh-app-id", "1", "--gh-app-key-file", "k.pem", "--gh-webhook-secret", "y"},
		{"--demo", "--gh-webhook-secret", "y"},
	} {
		var c main.Config
		if err := c.Parse(args, envOf(nil)); err == nil || !strings.Contains(err.Error(), "--demo takes no VCS credentials") {
			t.Errorf("Parse(%v) = %v; want a refusal", args, err)
		}
	}

	testEnv(t)
	m := main.NewMain()
	m.Config.Demo, m.Config.Port, m.Config.DataDir = true, 0, t.TempDir()
	m.Config.TerraformBin, m.Config.LogLevel = terraformBin(t), "warn"
	m.Config.GHToken, m.Config.GHWebhookSecret = "x", "y"
	if err := m.Run(context.Background()); err == nil || !strings.Contains(err.Error(), "--demo takes no VCS credentials") {
		m.Close()
		t.Fatalf("Run with --demo and a token = %v; want a refusal", err)
	}
	m.Close()
	m.Config.GHToken, m.Config.GHWebhookSecret = "", ""
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	host, _, _ := net.SplitHostPort(m.Server.Addr())
	if host != "127.0.0.1" {
		t.Fatalf("the demo listens on %s; want 127.0.0.1", m.Server.Addr())
	}
}

// The sign-in flags: the admin password from the environment or a file,
// the OIDC flags together, the role lists split.
func TestAuthFlags(t *testing.T) {
	dir := t.TempDir()
	pw := filepath.Join(dir, "pw")
	os.WriteFile(pw, []byte("from-a-file-123\n"), 0o600)
	secret := filepath.Join(dir, "oidc")
	os.WriteFile(secret, []byte("client-secret\n"), 0o600)
	base := []string{"--repo-allowlist", "github.com/acme/*"}
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		want  string // error, or "" for none
		check func(c *main.Config) bool
	}{
		{"env", nil, map[string]string{"ATOLL_ADMIN_PASSWORD": "from-the-env"}, "", func(c *main.Config) bool { return c.AdminPassword == "from-the-env" }},
		{"file", []string{"--admin-password-file", pw}, nil, "", func(c *main.Config) bool { return c.AdminPassword == "from-a-file-123" }},
		{"too short", []string{"--admin-password", "short"}, nil, "8 to 72 bytes", nil},
		{"oidc", []string{"--oidc-issuer", "https://id.example", "--oidc-client-id", "atoll", "--oidc-client-secret-file", secret,
			"--oidc-admin-users", "a@example.com, sub-1", "--oidc-operator-users", "b@example.com"}, nil, "",
			func(c *main.Config) bool {
				return c.OIDCClientSecret == "client-secret" && c.OIDCAdminUsers == "a@example.com, sub-1"
			}},
		{"oidc without issuer", []string{"--oidc-client-id", "atoll"}, nil, "need --oidc-issuer", nil},
		{"vcs login claim without issuer", []string{"--oidc-vcs-login-claim", "github_login"}, nil, "need --oidc-issuer", nil},
		{"vcs login claim from the env", nil, map[string]string{"ATOLL_OIDC_ISSUER": "https://id.example", "ATOLL_OIDC_CLIENT_ID": "atoll",
			"ATOLL_OIDC_VCS_LOGIN_CLAIM": "github_login"}, "", func(c *main.Config) bool { return c.OIDCVCSLoginClaim == "github_login" }},
		{"four-eyes from the env", nil, map[string]string{"ATOLL_APPROVAL_FOUR_EYES": "true"}, "", func(c *main.Config) bool { return c.ApprovalFourEyes }},
		{"four-eyes off by default", nil, nil, "", func(c *main.Config) bool { return !c.ApprovalFourEyes }},
		{"oidc without client id", []string{"--oidc-issuer", "https://id.example"}, nil, "needs --oidc-client-id", nil},
		{"checks with a token", []string{"--gh-checks", "--gh-token", "x", "--gh-webhook-secret", "y"}, nil, "--gh-checks needs a GitHub App (--gh-app-id", nil},
		{"checks alone", []string{"--gh-checks"}, nil, "--gh-checks needs a GitHub App", nil},
		{"drift remediation without detection", []string{"--enable-drift-remediation"}, nil, "--enable-drift-remediation requires --enable-drift-detection", nil},
		{"drift off by default", nil, nil, "", func(c *main.Config) bool { return !c.EnableDriftDetection && !c.EnableDriftRemediation }},
		{"drift from the env", nil, map[string]string{"ATOLL_ENABLE_DRIFT_DETECTION": "true", "ATOLL_ENABLE_DRIFT_REMEDIATION": "true"}, "",
			func(c *main.Config) bool { return c.EnableDriftDetection && c.EnableDriftRemediation }},
		{"drift from Atlantis's env", nil, map[string]string{"ATLANTIS_ENABLE_DRIFT_DETECTION": "true"}, "",
			func(c *main.Config) bool { return c.EnableDriftDetection }},
		{"checks from the env", nil, map[string]string{"ATOLL_GH_CHECKS": "true", "ATOLL_GH_APP_ID": "9", "ATOLL_GH_APP_KEY_FILE": "k.pem", "ATOLL_GH_WEBHOOK_SECRET": "y"}, "",
			func(c *main.Config) bool { return c.GHChecks && c.GHAppID == 9 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var cfg main.Config
			err := cfg.Parse(append(append([]string{}, base...), c.args...), envOf(c.env))
			switch {
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("Parse = %v; want an error containing %q", err, c.want)
			case c.want == "" && err != nil:
				t.Fatal(err)
			case c.check != nil && !c.check(&cfg):
				t.Fatalf("config = %+v", cfg)
			}
		})
	}
}
