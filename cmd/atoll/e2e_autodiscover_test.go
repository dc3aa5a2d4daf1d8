package main_test

import (
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// --autodiscover-mode, as Atlantis's flag: the mode when neither the
// server-side repo config nor atlantis.yaml sets autodiscover; bad values
// stop the server at start.
func TestAutodiscoverModeFlag(t *testing.T) {
	cfg := main.NewMain().Config
	err := cfg.Parse([]string{"--repo-allowlist", "github.com/acme/*", "--autodiscover-mode", "sometimes"}, envOf(nil))
	if err == nil || !strings.Contains(err.Error(), `"sometimes" is not one of auto, enabled, disabled`) {
		t.Fatalf("Parse error = %v", err)
	}

	files := map[string]string{
		"atlantis.yaml":      "version: 3\nprojects:\n  - dir: staging\n",
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	}
	if err := cfg.Parse([]string{"--repo-allowlist", "github.com/acme/*", "--autodiscover-mode", "enabled"}, envOf(nil)); err != nil {
		t.Fatal(err)
	} else if cfg.AutodiscoverMode != "enabled" {
		t.Fatalf("AutodiscoverMode = %q", cfg.AutodiscoverMode)
	}
	e := newE2EWith(t, files, func(c *main.Config) { c.AutodiscoverMode = "enabled" })
	e.open(1, "both", map[string]string{
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	// The listed project and, discovered beside it, production.
	mustContain(t, "autoplan", e.waitComment(1, 1), "Ran Plan for 2 projects", "atlantis apply -d staging", "atlantis apply -d production")
}
