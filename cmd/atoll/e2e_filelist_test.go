package main_test

import (
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// --autoplan-file-list: with **/*.hcl, a change to an .hcl file autoplans
// its (Terraform) directory while a .tf change no longer does; with
// --enable-diff-markdown-format=false the plan shows Terraform's markers
// where Terraform printed them. Bad patterns stop the server at start.
func TestAutoplanFileListFlag(t *testing.T) {
	cfg := main.NewMain().Config
	if !cfg.EnableDiffMarkdownFormat {
		t.Fatal("EnableDiffMarkdownFormat is off by default, want on (Atoll's behaviour before the flag)")
	}
	err := cfg.Parse([]string{"--repo-allowlist", "github.com/acme/*", "--autoplan-file-list", "**/*.tf,[a"}, envOf(nil))
	if err == nil || !strings.Contains(err.Error(), `invalid pattern "[a"`) {
		t.Fatalf("Parse error = %v", err)
	}
	args := []string{"--repo-allowlist", "github.com/acme/*", "--autoplan-file-list", "**/*.hcl", "--enable-diff-markdown-format=false"}
	if err := cfg.Parse(args, envOf(nil)); err != nil {
		t.Fatal(err)
	} else if cfg.AutoplanFileList != "**/*.hcl" || cfg.EnableDiffMarkdownFormat {
		t.Fatalf("AutoplanFileList = %q, EnableDiffMarkdownFormat = %v", cfg.AutoplanFileList, cfg.EnableDiffMarkdownFormat)
	}

	files := map[string]string{
		"app/main.tf":   tfProject("app", 1),
		"other/main.tf": tfProject("other", 1),
	}
	e := newE2EWith(t, files, func(c *main.Config) {
		c.AutoplanFileList, c.EnableDiffMarkdownFormat = "**/*.hcl", false
	})
	e.open(1, "hcl", map[string]string{
		"app/terragrunt.hcl": "# inputs\n",
		"other/main.tf":      tfProject("other", 2),
	}, "app/terragrunt.hcl", "other/main.tf")
	c := e.waitComment(1, 1)
	mustContain(t, "autoplan", c, "atlantis apply -d app", "\n  + resource \"terraform_data\" \"app\"")
	if strings.Contains(c, "-d other") || strings.Contains(c, "\n+   resource") {
		t.Errorf("autoplan comment planned other/ or moved markers:\n%s", c)
	}
}
