package main_test

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// atlantisFlags are the server flags of Atlantis v0.47.1 (cmd/server.go).
var atlantisFlags = []string{
	"allow-commands", "allow-draft-prs", "allow-fork-prs", "api-secret", "atlantis-url", "autodiscover-mode",
	"automerge", "automerge-method", "autoplan-file-list", "autoplan-modules", "autoplan-modules-from-projects",
	"azuredevops-hostname", "azuredevops-token", "azuredevops-user", "azuredevops-webhook-password",
	"azuredevops-webhook-user", "bitbucket-api-user", "bitbucket-base-url", "bitbucket-token", "bitbucket-user",
	"bitbucket-webhook-secret", "blocked-extra-args", "checkout-depth", "checkout-strategy", "config",
	"data-dir", "default-tf-distribution", "default-tf-version", "disable-apply-all", "disable-automerge-label",
	"disable-autoplan", "disable-autoplan-label", "disable-global-apply-lock", "disable-markdown-folding",
	"disable-repo-locking", "disable-unlock-label", "discard-approval-on-plan", "emoji-reaction",
	"enable-diff-markdown-format", "enable-drift-detection", "enable-drift-remediation",
	"enable-external-stores", "enable-policy-checks", "enable-profiling-api", "enable-regexp-cmd",
	"executable-name", "fail-on-pre-workflow-hook-error", "gh-allow-mergeable-bypass-apply", "gh-app-id",
	"gh-app-installation-id", "gh-app-key", "gh-app-key-file", "gh-app-slug", "gh-hostname", "gh-org",
	"gh-team-allowlist", "gh-token", "gh-token-file", "gh-user", "gh-webhook-secret", "gitea-base-url",
	"gitea-page-size", "gitea-token", "gitea-user", "gitea-webhook-secret", "gitlab-group-allowlist",
	"gitlab-hostname", "gitlab-status-retry-enabled", "gitlab-token", "gitlab-user", "gitlab-webhook-secret",
	"hide-prev-plan-comments", "hide-unchanged-plan-comments", "ignore-vcs-status-names",
	"include-git-untracked-files", "language", "language-config-file", "locking-db-type", "log-level",
	"markdown-template-overrides-dir", "max-comments-per-command", "parallel-apply", "parallel-plan",
	"parallel-pool-size", "pending-apply-status", "port", "quiet-policy-checks", "redis-cluster-addresses",
	"redis-db", "redis-host", "redis-insecure-skip-verify", "redis-password", "redis-port", "redis-tls-enabled",
	"redis-username", "repo-allowlist", "repo-config", "repo-config-json", "restrict-file-list",
	"share-plan-dir", "silence-allowlist-errors", "silence-fork-pr-errors", "silence-no-projects",
	"silence-vcs-status-no-plans", "silence-vcs-status-no-projects", "skip-clone-no-changes", "slack-token",
	"ssl-cert-file", "ssl-key-file", "stats-namespace", "tf-distribution", "tf-download", "tf-download-url",
	"tfe-hostname", "tfe-local-execution-mode", "tfe-token", "use-tf-plugin-cache", "var-file-allowlist",
	"vcs-status-name", "web-basic-auth", "web-password", "web-username", "webhook-http-headers",
	"websocket-check-origin", "write-git-creds",
}

// documentedFlags returns the flags a doc names as `--flag` (alone or in a
// list such as `--a`, `--b`).
func documentedFlags(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The reference generated from the flag table (flags_test.go) names
	// every flag: each must be documented outside it too.
	if i, j := bytes.Index(b, []byte("<!-- flags:begin")), bytes.Index(b, []byte("<!-- flags:end -->")); i >= 0 && j > i {
		b = append(b[:i:i], b[j:]...)
	}
	found := map[string]bool{}
	for _, m := range regexp.MustCompile("`--([a-z0-9-]+)").FindAllStringSubmatch(string(b), -1) {
		found[m[1]] = true
	}
	return found
}

// Docs and code agree: every flag of atoll server is documented in
// docs/configuration.md, and every Atlantis flag is accounted for in
// docs/migrating-from-atlantis.md (supported, different, or not yet).
func TestFlagsDocumented(t *testing.T) {
	documented := documentedFlags(t, "../../docs/configuration.md")
	for _, name := range main.FlagNames() {
		// "Secrets from files" covers --FLAG-file for every secret flag.
		if base, ok := strings.CutSuffix(name, "-file"); ok && documented[base] {
			continue
		}
		if !documented[name] {
			t.Errorf("--%s is not in docs/configuration.md", name)
		}
	}
	migrating := documentedFlags(t, "../../docs/migrating-from-atlantis.md")
	for _, name := range atlantisFlags {
		if !migrating[name] {
			t.Errorf("Atlantis's --%s is not in docs/migrating-from-atlantis.md", name)
		}
	}
}
