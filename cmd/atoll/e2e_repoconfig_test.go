package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// allowRepoSettings gives the server a repo config that lets atlantis.yaml
// set requirements and workflows and define its own, for tests whose
// atlantis.yaml does: as in Atlantis, the default config allows neither.
func allowRepoSettings(c *main.Config) {
	c.RepoConfigJSON = `{"repos": [{"id": "/.*/", "allowed_overrides": ["apply_requirements", "plan_requirements", "workflow"], "allow_custom_workflows": true}]}`
}

// A server-side repo config requiring approval applies to a repository
// whose atlantis.yaml says nothing about it: the author cannot drop the
// requirement in their own pull request.
func TestRepoConfigServerRequirementApplies(t *testing.T) {
	repos := filepath.Join(t.TempDir(), "repos.yaml")
	if err := os.WriteFile(repos, []byte("repos:\n  - id: github.com/acme/infra\n    apply_requirements: [approved]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newE2EWith(t, map[string]string{
		"atlantis.yaml":   "version: 3\nprojects:\n  - dir: staging\n",
		"staging/main.tf": tfProject("staging", 1),
	}, func(c *main.Config) { c.RepoConfig = repos })
	sha := e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")

	e.comment(1, "atlantis apply")
	refused := e.waitComment(1, 2)
	mustContain(t, "apply without approval", refused, "must be approved")
	if strings.Contains(refused, "Apply complete!") {
		t.Fatalf("applied without the server's requirement:\n%s", refused)
	}

	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "grow", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}, Approved: true})
	e.comment(1, "atlantis apply")
	mustContain(t, "approved apply", e.waitComment(1, 3), "Apply complete!")
}

// With Atlantis's default server config, atlantis.yaml may not set
// apply_requirements: the pull request is told which key, and nothing is
// planned.
func TestRepoConfigDisallowedKeyCommented(t *testing.T) {
	e := newE2EWith(t, map[string]string{
		"staging/main.tf": tfProject("staging", 1),
	}, nil)
	e.open(1, "grow", map[string]string{
		"atlantis.yaml":   "version: 3\nprojects:\n  - dir: staging\n    apply_requirements: []\n",
		"staging/main.tf": tfProject("staging", 2),
	}, "atlantis.yaml", "staging/main.tf")
	got := e.waitComment(1, 1)
	mustContain(t, "refusal", got, "atlantis.yaml line 4", "projects[0].apply_requirements", "allowed_overrides: [apply_requirements]")
	if strings.Contains(got, "Plan: ") {
		t.Fatalf("planned despite the refused key:\n%s", got)
	}
}

// A repository whose config is named atlantis.yml is told to rename it, as
// Atlantis tells it, instead of being planned as if it had no config:
// nothing is planned or locked.
func TestRepoConfigYmlRefused(t *testing.T) {
	e := newE2EWith(t, map[string]string{
		"staging/main.tf": tfProject("staging", 1),
	}, nil)
	e.open(1, "yml", map[string]string{
		"atlantis.yml":    "version: 3\nprojects:\n  - dir: staging\n",
		"staging/main.tf": tfProject("staging", 2),
	}, "atlantis.yml", "staging/main.tf")
	got := e.waitComment(1, 1)
	mustContain(t, "refusal", got, `found "atlantis.yml" as config file; rename it using the .yaml extension`)
	if strings.Contains(got, "Plan: ") {
		t.Fatalf("planned despite atlantis.yml:\n%s", got)
	}
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobs)
	if len(jobs) != 0 {
		t.Fatalf("atlantis.yml ran jobs: %+v", jobs)
	}
}

// A plan stage of run steps only writes no plan file: as in Atlantis the
// plan succeeds with the steps' output. Its apply runs an apply stage of
// run steps; an apply stage with an apply step (the default one here) is
// refused, saying why, and the plan stays.
func TestCustomWorkflowWithoutPlanFile(t *testing.T) {
	e := newE2EConfigured(t, allowRepoSettings)
	config := `version: 3
projects:
  - name: scripted
    dir: staging
    workflow: scripted
  - name: handmade
    dir: production
    workflow: handmade
workflows:
  scripted:
    plan:
      steps:
        - run: echo "checked by script in $REPO_REL_DIR"
  handmade:
    plan:
      steps:
        - run: 'echo "Plan: 4 to add, 0 to change, 0 to destroy."' 
    apply:
      steps:
        - run: test ! -e "$PLANFILE" && echo "applied by hand in $REPO_REL_DIR"
`
	e.open(1, "scripts", map[string]string{
		"atlantis.yaml":      config,
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	plan := e.waitComment(1, 1)
	mustContain(t, "plan", plan, "checked by script in staging", "Plan: 4 to add")
	if strings.Contains(plan, "wrote no plan file") || strings.Contains(plan, "No changes") {
		t.Fatalf("a plan stage without a plan file failed or claimed no changes:\n%s", plan)
	}

	e.comment(1, "atlantis apply -p scripted")
	mustContain(t, "refused apply", e.waitComment(1, 2), `Workflow "scripted" wrote no plan file when it planned`)
	e.comment(1, "atlantis apply -p handmade")
	mustContain(t, "run-step apply", e.waitComment(1, 3), "applied by hand in production")
}

// Atlantis accepts any step in any stage. A policy_check step in a plan
// stage is left out (Atoll checks policies in its own phase) and the plan
// runs; a plan step in the apply stage, which would replace the reviewed
// plan, does not stop the plan but refuses the apply, saying why.
func TestCustomWorkflowStepsInOtherStages(t *testing.T) {
	e := newE2EConfigured(t, allowRepoSettings)
	config := `version: 3
projects:
  - dir: staging
    workflow: replan
workflows:
  replan:
    plan:
      steps: [init, plan, policy_check]
    apply:
      steps: [plan, apply]
`
	e.open(1, "replan", map[string]string{"atlantis.yaml": config, "staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "plan", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis apply")
	refused := e.waitComment(1, 2)
	mustContain(t, "refused apply", refused, `Workflow "replan", apply stage: a plan step has no place here: it would replace the plan that was reviewed`)
	if strings.Contains(refused, "Apply complete!") {
		t.Fatalf("applied a plan made in the apply stage:\n%s", refused)
	}
}

// --repo-config and --repo-config-json (or ATOLL_REPO_CONFIG_JSON) are
// parsed at start; a bad one stops the server with its file, line and key.
func TestRepoConfigFlags(t *testing.T) {
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := file("repos.yaml", "repos:\n  - id: /.*/\n    apply_requirements: [approved]\n")
	bad := file("bad.yaml", "repos:\n  - id: /.*/\n    apply_requirement: [approved]\n")
	base := []string{"--repo-allowlist", "github.com/acme/*"}

	for _, ok := range []struct {
		name string
		args []string
		env  map[string]string
	}{
		{"file", []string{"--repo-config", good}, nil},
		{"json", []string{"--repo-config-json", `{"repos":[{"id":"/.*/","apply_requirements":["approved"]}]}`}, nil},
		{"json from env", nil, map[string]string{"ATOLL_REPO_CONFIG_JSON": `{"repos":[{"id":"/.*/","apply_requirements":["approved"]}]}`}},
	} {
		t.Run(ok.name, func(t *testing.T) {
			var c main.Config
			if err := c.Parse(append(append([]string{}, base...), ok.args...), envOf(ok.env)); err != nil {
				t.Fatal(err)
			}
			if c.ServerConfig == nil || len(c.ServerConfig.Repos) != 2 || c.ServerConfig.Repos[1].ApplyRequirements[0] != "approved" {
				t.Fatalf("server config %+v", c.ServerConfig)
			}
		})
	}
	for _, b := range []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"unknown key", []string{"--repo-config", bad}, nil, bad + ` line 3: repos[0]: unknown key "apply_requirement"`},
		{"bad json", []string{"--repo-config-json", `{"repos":[{"id":"/.*/","workflow":"nope"}]}`}, nil, `--repo-config-json line 1: repos[0].workflow: workflow "nope" is not defined`},
		{"bad execution_pool", []string{"--repo-config-json", `{"repos":[{"id":"github.com/acme/infra","execution_pool":"EU runners"}]}`}, nil,
			`--repo-config-json line 1: repos[0].execution_pool: repository github.com/acme/infra: "EU runners" is not a valid execution pool name`},
		{"missing file", []string{"--repo-config", filepath.Join(dir, "missing.yaml")}, nil, "missing.yaml"},
		{"both", []string{"--repo-config", good, "--repo-config-json", "{}"}, nil, "--repo-config and --repo-config-json cannot both be given"},
		{"flag and env", []string{"--repo-config", good}, map[string]string{"ATOLL_REPO_CONFIG_JSON": "{}"}, "cannot both be given"},
	} {
		t.Run(b.name, func(t *testing.T) {
			var c main.Config
			err := c.Parse(append(append([]string{}, base...), b.args...), envOf(b.env))
			if err == nil || !strings.Contains(err.Error(), b.want) {
				t.Fatalf("Parse = %v; want an error containing %q", err, b.want)
			}
		})
	}
}
