package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// The Azure DevOps flags: one way to authenticate, webhook credentials
// always, secrets from files, and none of it with --demo.
func TestAzureDevOpsFlags(t *testing.T) {
	dir := t.TempDir()
	secret := filepath.Join(dir, "sp")
	os.WriteFile(secret, []byte("sp-secret\n"), 0o600)
	base := []string{"--repo-allowlist", "dev.azure.com/acme/*"}
	hook := []string{"--azuredevops-webhook-user", "atoll", "--azuredevops-webhook-password", "hook-pw"}
	with := func(args ...string) []string { return append(append([]string{}, hook...), args...) }
	cases := []struct {
		name  string
		args  []string
		env   map[string]string
		want  string // error, or "" for none
		check func(c *main.Config) bool
	}{
		{"pat", with("--azuredevops-token", "pat", "--azuredevops-user", "bot@acme.example"), nil, "",
			func(c *main.Config) bool { return c.AzureToken == "pat" && c.AzureHostname == "dev.azure.com" }},
		{"service principal from files and env", with("--azuredevops-client-secret-file", secret),
			map[string]string{"ATOLL_AZUREDEVOPS_TENANT_ID": "t", "ATOLL_AZUREDEVOPS_CLIENT_ID": "c"}, "",
			func(c *main.Config) bool { return c.AzureClientSecret == "sp-secret" && c.AzureTenantID == "t" }},
		{"managed identity", with("--azuredevops-managed-identity"), nil, "", func(c *main.Config) bool { return c.AzureManagedIdentity }},
		{"server host", with("--azuredevops-token", "pat", "--azuredevops-hostname", "tfs.acme.example/tfs"), nil, "",
			func(c *main.Config) bool { return c.AzureHostname == "tfs.acme.example/tfs" }},
		{"server with a notification url", with("--azuredevops-token", "pat", "--azuredevops-hostname", "tfs.acme.example/tfs"),
			map[string]string{"ATOLL_AZUREDEVOPS_NOTIFICATION_URL": "http://tfs01:8080/tfs"}, "",
			func(c *main.Config) bool { return c.AzureNotificationURL == "http://tfs01:8080/tfs" }},
		{"notification url alone", []string{"--azuredevops-notification-url", "http://tfs01:8080/tfs"}, nil, "--azuredevops-notification-url needs Azure DevOps credentials", nil},
		{"no webhook credentials", []string{"--azuredevops-token", "pat"}, nil, "--azuredevops-webhook-user and --azuredevops-webhook-password are required", nil},
		{"webhook password only", []string{"--azuredevops-token", "pat", "--azuredevops-webhook-password", "x"}, nil, "are required", nil},
		{"webhook without credentials", hook, nil, "need credentials for Azure DevOps", nil},
		{"two ways", with("--azuredevops-token", "pat", "--azuredevops-managed-identity"), nil, "use one of", nil},
		{"secret without tenant", with("--azuredevops-client-secret", "s", "--azuredevops-client-id", "c"), nil, "needs --azuredevops-tenant-id", nil},
		{"tenant alone", []string{"--azuredevops-tenant-id", "t"}, nil, "need --azuredevops-client-secret", nil},
		{"token and its file", with("--azuredevops-token", "x", "--azuredevops-token-file", secret), nil, "both set", nil},
		{"demo", append([]string{"--demo"}, with("--azuredevops-token", "pat")...), nil, "--demo takes no VCS credentials", nil},
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
				t.Fatalf("config = %+v", cfg.AzureHostname)
			}
		})
	}
}
