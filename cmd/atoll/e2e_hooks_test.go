package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// The server-side repo config's workflow hooks run around plan and apply:
// a pre hook writes atlantis.yaml before the projects are read (the
// terragrunt-atlantis-config pattern), a failing one is told in a comment
// and the plan goes on, and a post hook runs after the results with
// Atlantis's variables; a hook with commands runs for those only.
func TestWorkflowHooks(t *testing.T) {
	out := filepath.Join(t.TempDir(), "post.log")
	cfg, _ := json.Marshal(map[string]any{"repos": []any{map[string]any{
		"id": "/.*/",
		"pre_workflow_hooks": []any{
			map[string]any{"run": `printf 'version: 3\nprojects:\n- name: generated-staging\n  dir: staging\n' > atlantis.yaml`, "description": "generate"},
			map[string]any{"run": "echo broken hook output; exit 3", "description": "broken"},
		},
		"post_workflow_hooks": []any{
			// Atlantis's commands: this one runs after applies only (it
			// comes first, so after a plan its absence is certain).
			map[string]any{"run": `echo "apply-only hook" >> ` + out, "commands": "apply"},
			map[string]any{"run": `echo "$COMMAND_NAME pull=$PULL_NUM user=$USER_NAME args=$COMMENT_ARGS dir=$(basename "$DIR")" >> ` + out},
		},
	}}})
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)}, func(c *main.Config) { c.RepoConfigJSON = string(cfg) })
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")

	var all string
	eventually(t, 90*time.Second, "the failed hook's comment and the plan", func() bool {
		all = strings.Join(e.gh.pullComments(1), "\n")
		return strings.Contains(all, "Pre workflow hook failed") && strings.Contains(all, "Plan: 2 to add")
	})
	mustContain(t, "comments", all, "broken (exit code 3)", "broken hook output", "generated-staging")
	eventually(t, 10*time.Second, "the post hook", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "plan pull=1 user=")
	})

	if b, _ := os.ReadFile(out); strings.Contains(string(b), "apply-only") {
		t.Fatalf("a hook for apply ran after a plan:\n%s", b)
	}
	n := len(e.gh.pullComments(1))
	e.comment(1, "atlantis apply -p generated-staging")
	mustContain(t, "apply", e.waitComment(1, n+2), "Apply complete!")
	eventually(t, 10*time.Second, "the post hook after apply", func() bool {
		b, _ := os.ReadFile(out)
		return strings.Contains(string(b), "apply pull=1") && strings.Contains(string(b), "apply-only hook")
	})
}

// With --fail-on-pre-workflow-hook-error a failing pre hook stops the
// command: the failure is commented, no project is planned or locked and
// the post hooks do not run.
func TestFailOnPreWorkflowHookError(t *testing.T) {
	post := filepath.Join(t.TempDir(), "post.log")
	cfg, _ := json.Marshal(map[string]any{"repos": []any{map[string]any{
		"id":                  "/.*/",
		"pre_workflow_hooks":  []any{map[string]any{"run": "echo policy gate says no; exit 4", "description": "gate"}},
		"post_workflow_hooks": []any{map[string]any{"run": "echo ran >> " + post}},
	}}})
	e := newE2EConfigured(t, func(c *main.Config) {
		c.RepoConfigJSON = string(cfg)
		c.FailOnPreWorkflowHookError = true
	})
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "the hook's comment", e.waitComment(1, 1), "Pre workflow hook failed", "gate (exit code 4)",
		"policy gate says no", "The plan was not run (--fail-on-pre-workflow-hook-error)")

	// Requests of a pull request run one at a time: unlock's answer comes
	// after the plan request ended, and there was nothing to unlock.
	e.comment(1, "atlantis unlock")
	mustContain(t, "unlock", e.waitComment(1, 2), "no locks or plans")
	jobs, err := e.m.DB.Jobs(t.Context(), atoll.JobFilter{Pull: 1})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("jobs after a failed pre hook = %v, %v; want none", jobs, err)
	}
	if _, err := os.Stat(post); !os.IsNotExist(err) {
		t.Fatalf("the post hook ran after the command was stopped (stat: %v)", err)
	}
	if comments := e.gh.pullComments(1); len(comments) != 2 {
		t.Fatalf("comments = %d, want the hook's and unlock's:\n%s", len(comments), strings.Join(comments, "\n---\n"))
	}
}
