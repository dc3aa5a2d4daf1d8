package terraform_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/terraform"
)

func TestEnviron(t *testing.T) {
	t.Setenv("ATOLL_SESSION_SECRET", "s3cret")
	t.Setenv("GITHUB_TOKEN", "ghp_x")
	t.Setenv("TF_DATA_DIR", "/shared/.terraform")
	t.Setenv("TF_WORKSPACE", "prod")
	t.Setenv("TF_LOG", "WARN")
	t.Setenv("AWS_PROFILE", "ci")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "/creds.json")
	t.Setenv("ARM_CLIENT_ID", "id")
	t.Setenv("TMPDIR", "/tmp/x")
	t.Setenv("VAULT_ADDR", "https://vault.example")
	t.Setenv("KUBECONFIG", "/kube/config")
	t.Setenv("AZURE_TENANT_ID", "tenant")
	t.Setenv("GIT_SSH_COMMAND", "ssh -i /k")
	t.Setenv("ATOLL_REPLICA_SECRET_ACCESS_KEY", "replica-secret")
	t.Setenv("ATOLL_GH_WEBHOOK_SECRET", "hook")
	t.Setenv("atoll_lower_token", "lower")
	t.Setenv("ATLANTIS_GH_TOKEN", "old-token")
	t.Setenv("ATLANTIS_REPO_CONFIG", "/repos.yaml")
	t.Setenv("ATLANTIS_SLACK_TOKEN", "xoxb-slack")
	t.Setenv("ATLANTIS_WEBHOOK_HTTP_HEADERS", `{"Authorization":"Bearer hook"}`)
	t.Setenv("ATOLL_SLACK_TOKEN", "xoxb-atoll")
	t.Setenv("ATOLL_WEBHOOK_HTTP_HEADERS", `{"X-Key":"k"}`)
	r := terraform.Runner{Env: []string{"TF_LOG=DEBUG", "TF_DATA_DIR=/job/7/.terraform"}}
	env := map[string]string{}
	for _, kv := range r.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if _, dup := env[k]; dup {
			t.Errorf("%s appears twice", k)
		}
		env[k] = v
	}
	want := map[string]string{
		"TF_IN_AUTOMATION":               "1",
		"TF_INPUT":                       "0",
		"CHECKPOINT_DISABLE":             "1",
		"TF_LOG":                         "DEBUG", // Env wins
		"TF_DATA_DIR":                    "/job/7/.terraform",
		"AWS_PROFILE":                    "ci",
		"GOOGLE_APPLICATION_CREDENTIALS": "/creds.json",
		"ARM_CLIENT_ID":                  "id",
		"TMPDIR":                         "/tmp/x",
		// As in Atlantis, the server's environment passes through.
		"GITHUB_TOKEN":         "ghp_x",
		"VAULT_ADDR":           "https://vault.example",
		"KUBECONFIG":           "/kube/config",
		"AZURE_TENANT_ID":      "tenant",
		"GIT_SSH_COMMAND":      "ssh -i /k",
		"ATLANTIS_REPO_CONFIG": "/repos.yaml",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"ATOLL_SESSION_SECRET", "ATOLL_REPLICA_SECRET_ACCESS_KEY", "ATOLL_GH_WEBHOOK_SECRET", "atoll_lower_token", "ATLANTIS_GH_TOKEN", "TF_WORKSPACE",
		"ATLANTIS_SLACK_TOKEN", "ATLANTIS_WEBHOOK_HTTP_HEADERS", "ATOLL_SLACK_TOKEN", "ATOLL_WEBHOOK_HTTP_HEADERS"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s inherited", k)
		}
	}
	if env["PATH"] == "" {
		t.Error("PATH missing")
	}
}

// The run's credential helper settings come last: a workflow's env cannot
// point git elsewhere, and the server's own credentials and git settings
// never reach Terraform (only the helper's socket and nonce do).
func TestEnvironRunEnv(t *testing.T) {
	t.Setenv("ATOLL_GH_TOKEN", "ghp_serverSecret")
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "http.extraHeader")
	t.Setenv("GIT_CONFIG_VALUE_0", "Authorization: Basic ghp_serverSecret")
	t.Setenv("GIT_ASKPASS", "/bin/echo")
	r := terraform.Runner{
		Env: []string{"GIT_CONFIG_COUNT=3", "GIT_TERMINAL_PROMPT=1"},
		RunEnv: []string{"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=credential.https://github.com.helper",
			"GIT_CONFIG_VALUE_0=!'/usr/bin/atoll' 'git-credential'", "GIT_TERMINAL_PROMPT=0",
			"ATOLL_CREDENTIAL_SOCKET=/data/credentials/git-credential.sock", "ATOLL_CREDENTIAL_NONCE=abc"},
	}
	environ := r.Environ()
	env := map[string]string{}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	want := map[string]string{
		"GIT_CONFIG_COUNT":        "1",
		"GIT_CONFIG_KEY_0":        "credential.https://github.com.helper",
		"GIT_CONFIG_VALUE_0":      "!'/usr/bin/atoll' 'git-credential'",
		"GIT_TERMINAL_PROMPT":     "0",
		"ATOLL_CREDENTIAL_SOCKET": "/data/credentials/git-credential.sock",
		"ATOLL_CREDENTIAL_NONCE":  "abc",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"ATOLL_GH_TOKEN", "GIT_ASKPASS"} {
		if _, ok := env[k]; ok {
			t.Errorf("%s inherited", k)
		}
	}
	if s := strings.Join(environ, "\n"); strings.Contains(s, "ghp_serverSecret") {
		t.Fatalf("terraform's environment holds the server's token:\n%s", s)
	}
}
