package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/runner"
)

// Each workflow hook sets a commit status, as in Atlantis: named
// "<--vcs-status-name>/pre_workflow_hook: <description>" (or Atlantis's
// "Pre workflow hook #N" without one), pending while it runs, then success
// with what the hook wrote to $OUTPUT_STATUS_FILE, or failure. The first
// failure ends the phase's hooks.
func TestWorkflowHookStatuses(t *testing.T) {
	skipped := filepath.Join(t.TempDir(), "skipped")
	cfg, _ := json.Marshal(map[string]any{"repos": []any{map[string]any{
		"id": "/.*/",
		"pre_workflow_hooks": []any{
			map[string]any{"run": `echo "generated 3 configs" > "$OUTPUT_STATUS_FILE"`, "description": "generate"},
			map[string]any{"run": "exit 2"},
			// After a failure the phase's hooks stop, as in Atlantis.
			map[string]any{"run": "touch " + skipped, "description": "never"},
		},
		"post_workflow_hooks": []any{
			// Not run for a plan, but counted in the numbering.
			map[string]any{"run": "true", "commands": "apply"},
			map[string]any{"run": "true"},
		},
	}}})
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)}, func(c *main.Config) {
		c.RepoConfigJSON = string(cfg)
		c.VCSStatusName = "infra-bot"
	})
	sha := e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	eventually(t, 90*time.Second, "the plan", func() bool {
		return strings.Contains(strings.Join(e.gh.pullComments(1), "\n"), "Plan: 2 to add")
	})

	e.waitStatus(sha, "infra-bot/pre_workflow_hook: generate", "success", "generated 3 configs")
	e.waitStatus(sha, "infra-bot/pre_workflow_hook: Pre workflow hook #1", "failure", "failed.")
	e.waitStatus(sha, "infra-bot/post_workflow_hook: Post workflow hook #1", "success", "succeeded.")
	for _, c := range []string{"infra-bot/pre_workflow_hook: generate", "infra-bot/post_workflow_hook: Post workflow hook #1"} {
		if h := e.gh.statusHistory(sha, c); len(h) != 2 || h[0].State != "pending" || h[0].Description != "in progress..." {
			t.Fatalf("%s: history %+v, want pending (in progress...) then the outcome", c, h)
		}
	}
	if _, err := os.Stat(skipped); err == nil || e.gh.status(sha, "infra-bot/pre_workflow_hook: never") != "" {
		t.Fatalf("a pre hook after a failed one ran (status %q)", e.gh.status(sha, "infra-bot/pre_workflow_hook: never"))
	}
	if st := e.gh.status(sha, "infra-bot/post_workflow_hook: Post workflow hook #0"); st != "" {
		t.Fatalf("the apply-only post hook has a status after a plan: %q", st)
	}
	if st := e.gh.status(sha, "atlantis/pre_workflow_hook: generate"); st != "" {
		t.Fatalf("atlantis/pre_workflow_hook: generate = %q, want unset under --vcs-status-name", st)
	}
}

// authzScript is a team_authz command in Atlantis's contract: its args,
// then the command, owner/repo and owner/team per team; "pass" on the
// last line allows. Only members of acme/prod-deployers apply project
// prod; mallory may run nothing. It logs its argv and keeps its env.
const authzScript = `#!/bin/sh
echo "argv=$* user=$USER_NAME project=$PROJECT_NAME dir=$REPO_REL_PATH pull=$PULL_NUM" >> "$(dirname "$0")/calls.log"
env > "$(dirname "$0")/env.log"
[ "$1" = --mode ] && [ "$2" = strict ] || { echo "args missing"; exit 0; }
shift 2
if [ "$USER_NAME" = mallory ]; then echo "checking..."; echo "mallory is on leave"; exit 0; fi
if [ "$1" = apply ] && [ "$PROJECT_NAME" = prod ]; then
  for t in "$@"; do [ "$t" = acme/prod-deployers ] && { echo PASS; exit 0; }; done
  echo "only acme/prod-deployers may apply prod"
  exit 0
fi
echo pass
`

// team_authz (server-side repo config) decides who runs what, as
// Atlantis's external team authorizer: once for the command (refused:
// nothing runs, the reason is commented), then once per project (refused
// projects are left out and told); it replaces --gh-team-allowlist.
func TestTeamAuthz(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "authz.sh")
	if err := os.WriteFile(script, []byte(authzScript), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"team_authz": map[string]any{"command": script, "args": []string{"--mode", "strict"}}})
	config := "version: 3\nprojects:\n  - name: staging\n    dir: staging\n  - name: prod\n    dir: production\n"
	e, x := newE2EExtras(t, map[string]string{
		"atlantis.yaml":      config,
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	}, func(c *main.Config) {
		c.RepoConfigJSON = string(cfg)
		var err error
		// Ignored: team_authz replaces it (it would refuse every apply).
		if c.GHTeamAllowlist, err = runner.ParseTeamAllowlist("nobody:apply,*:plan"); err != nil {
			t.Fatal(err)
		}
	})
	x.setTeam("prod-deployers", "", "carol")
	x.setTeam("devs", "", "alice")

	e.open(1, "grow", map[string]string{
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "atlantis apply -p staging", "atlantis apply -p prod")

	e.commentAs("mallory", 1, "atlantis plan")
	refused := e.waitComment(1, 2)
	mustContain(t, "mallory's plan", refused, "@mallory is not allowed to run `plan` on this repository", "mallory is on leave", "Nothing was run")
	if strings.Contains(refused, "checking...") {
		t.Fatalf("the refusal quotes more than the last line:\n%s", refused)
	}

	e.commentAs("alice", 1, "atlantis apply")
	mustContain(t, "alice's refused project", e.waitComment(1, 3), "team_authz refused some projects",
		"@alice is not allowed to run `apply` for project `prod`", "only acme/prod-deployers may apply prod")
	applied := e.waitComment(1, 4)
	mustContain(t, "alice's apply", applied, "Apply complete!", "staging")
	if strings.Contains(applied, "`production`") {
		t.Fatalf("prod was applied for alice:\n%s", applied)
	}

	e.commentAs("carol", 1, "atlantis apply -p prod")
	mustContain(t, "carol's apply", e.waitComment(1, 5), "Apply complete!")

	calls, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "the command's calls", string(calls),
		"argv=--mode strict plan acme/infra user=mallory project= dir= pull=1",
		"argv=--mode strict apply acme/infra acme/devs user=alice project=prod dir=production pull=1",
		"argv=--mode strict apply acme/infra acme/prod-deployers user=carol project=prod dir=production pull=1")
	env, _ := os.ReadFile(filepath.Join(dir, "env.log"))
	if strings.Contains(string(env), "gh-test-token") || strings.Contains(string(env), webhookSecret) {
		t.Fatalf("a secret reached the team_authz command's environment:\n%s", env)
	}
}

// --enable-regexp-cmd: -p is a regular expression over whole project
// names, for plan and apply; one that does not compile is answered.
func TestEnableRegexpCmdE2E(t *testing.T) {
	config := "version: 3\nprojects:\n  - name: dev-a\n    dir: dev/a\n  - name: dev-b\n    dir: dev/b\n  - name: prod\n    dir: prod\n"
	e := newE2EWith(t, map[string]string{
		"atlantis.yaml": config,
		"dev/a/main.tf": tfProject("a", 1), "dev/b/main.tf": tfProject("b", 1), "prod/main.tf": tfProject("prod", 1),
	}, func(c *main.Config) { c.EnableRegexpCmd = true })
	e.open(1, "grow", map[string]string{
		"dev/a/main.tf": tfProject("a", 2), "dev/b/main.tf": tfProject("b", 2), "prod/main.tf": tfProject("prod", 2),
	}, "dev/a/main.tf", "dev/b/main.tf", "prod/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "atlantis apply -p dev-a", "atlantis apply -p dev-b", "atlantis apply -p prod")

	e.comment(1, "atlantis apply -p dev-.*")
	applied := e.waitComment(1, 2)
	mustContain(t, "apply -p dev-.*", applied, "dev/a", "dev/b", "Apply complete!")
	if strings.Contains(applied, "`prod`") {
		t.Fatalf("prod was applied:\n%s", applied)
	}
	e.comment(1, "atlantis plan -p pro.")
	mustContain(t, "plan -p pro.", e.waitComment(1, 3), "prod", "Plan: 2 to add")
	e.comment(1, "atlantis plan -p dev-(")
	mustContain(t, "invalid regexp", e.waitComment(1, 4), "not a regular expression")
}

// --restrict-file-list: a plan may target only what the pull request
// modifies, as in Atlantis.
func TestRestrictFileListE2E(t *testing.T) {
	e := newE2EConfigured(t, func(c *main.Config) { c.RestrictFileList = true })
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")

	e.comment(1, "atlantis plan -d production")
	refused := e.waitComment(1, 2)
	mustContain(t, "plan -d production", refused, `the dir "production" is not in the plan list of this pull request`)
	if strings.Contains(refused, "Plan:") {
		t.Fatalf("production was planned:\n%s", refused)
	}
	e.comment(1, "atlantis plan -d staging")
	mustContain(t, "plan -d staging", e.waitComment(1, 3), "Plan: 2 to add")
}

// The flags parse from the command line and the environment.
func TestHookFlagsParse(t *testing.T) {
	base := []string{"--repo-allowlist", "github.com/acme/*"}
	var c main.Config
	if err := c.Parse(append(base, "--enable-regexp-cmd", "--restrict-file-list"), envOf(nil)); err != nil {
		t.Fatal(err)
	}
	if !c.EnableRegexpCmd || !c.RestrictFileList {
		t.Fatalf("flags: %+v %+v", c.EnableRegexpCmd, c.RestrictFileList)
	}
	var env main.Config
	if err := env.Parse(base, envOf(map[string]string{"ATOLL_ENABLE_REGEXP_CMD": "true", "ATLANTIS_RESTRICT_FILE_LIST": "true"})); err != nil {
		t.Fatal(err)
	}
	if !env.EnableRegexpCmd || !env.RestrictFileList {
		t.Fatalf("environment: %v %v", env.EnableRegexpCmd, env.RestrictFileList)
	}
}
