package repocfg_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// notLoaded are the documentation examples that do not load, each with a
// part of the error it must give (so that the exemption cannot hide
// another failure) and why that is right.
var notLoaded = map[string]struct{ err, why string }{
	// Fragments: "..." stands for the rest of the file.
	"server/upgrading-atlantis-yaml-L138.yaml": {"invalid YAML", "a fragment with ..."},
	"server/upgrading-atlantis-yaml-L154.yaml": {"invalid YAML", "a fragment with ..."},
	"server/upgrading-atlantis-yaml-L182.yaml": {"invalid YAML", "a fragment with ..."},
	"server/upgrading-atlantis-yaml-L227.yaml": {"invalid YAML", "a fragment with ..."},
	// The projects list of a larger file (loaded below with its version).
	"repo/repo-level-atlantis-yaml-L113.yaml": {"version: is required", "a fragment without version"},
	// "my-version" is a placeholder Atlantis rejects too.
	"repo/upgrading-atlantis-yaml-L74.yaml": {`"my-version" is not a Terraform version`, "a placeholder"},
	// The all-keys example's depends_on names a project-1 it does not
	// define: Atoll refuses a dangling depends_on (docs/configuration.md).
	"repo/repo-level-atlantis-yaml-L56.yaml": {`no project is named "project-1"`, "a dangling depends_on"},
}

// docsServerConfig is a server config under which the documentation's
// atlantis.yaml examples may set what they set: every override allowed,
// custom workflows allowed, and the server-side workflows they name.
const docsServerConfig = `
repos:
- id: /.*/
  allowed_overrides: [plan_requirements, apply_requirements, import_requirements, workflow, delete_source_branch_on_merge, repo_locking, repo_locks, policy_check, custom_policy_check, silence_pr_comments, execution_pool, drift_detection]
  allow_custom_workflows: true
workflows:
  staging: {}
  production: {}
  infra: {}
  custom1: {}
  myworkflow: {}
`

// Every whole repos.yaml and atlantis.yaml example of Atlantis's docs loads
// unchanged, but for the ones named in notLoaded.
func TestAtlantisDocsExamples(t *testing.T) {
	server, err := repocfg.ParseServerConfig("repos.yaml", []byte(docsServerConfig))
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/atlantis-docs/*/*.yaml")
	if err != nil || len(files) < 80 {
		t.Fatalf("examples: %d, %v", len(files), err)
	}
	for _, f := range files {
		name := strings.TrimPrefix(filepath.ToSlash(f), "testdata/atlantis-docs/")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(name, "server/") {
				_, err = repocfg.ParseServerConfig("repos.yaml", data)
			} else {
				_, err = loadWith(t, server, "github.com/acme/infra", "main", map[string]string{"atlantis.yaml": string(data)})
			}
			want, exempt := notLoaded[name]
			switch {
			case exempt && (err == nil || !strings.Contains(err.Error(), want.err)):
				t.Fatalf("expected to fail (%s) with %q; got %v", want.why, want.err, err)
			case !exempt && err != nil:
				t.Fatal(err)
			}
		})
	}

	// The fragment of projects with YAML merge keys, given its version.
	data, err := os.ReadFile("testdata/atlantis-docs/repo/repo-level-atlantis-yaml-L113.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := loadWith(t, server, "github.com/acme/infra", "main", map[string]string{"atlantis.yaml": "version: 3\nworkflows:\n  custom: {}\n" + string(data)})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Projects) != 4 || cfg.Projects[3].Name != "ue1-dev-titan" || cfg.Projects[3].Dir != "terraform/titan" ||
		cfg.Projects[3].Workspace != "ue1-dev" || cfg.Projects[3].Workflow != "custom" || len(cfg.Projects[3].Autoplan.WhenModified) != 3 {
		t.Fatalf("projects = %+v", cfg.Projects)
	}
}
