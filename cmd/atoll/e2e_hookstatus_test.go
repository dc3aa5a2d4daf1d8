package main_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// Each workflow hook sets a commit status, as in Atlantis: named
// "<--vcs-status-name>/pre_workflow_hook: <description>" (or Atlantis's
// "Pre workflow hook #N" without one), pending while it runs, then success
// with what the hook wrote to $OUTPUT_STATUS_FILE, or failure.
func TestWorkflowHookStatuses(t *testing.T) {
	cfg, _ := json.Marshal(map[string]any{"repos": []any{map[string]any{
		"id": "/.*/",
		"pre_workflow_hooks": []any{
			map[string]any{"run": `echo "generated 3 configs" > "$OUTPUT_STATUS_FILE"`, "description": "generate"},
			map[string]any{"run": "exit 2"},
		},
		"post_workflow_hooks": []any{
			map[string]any{"run": "true", "description": "notify"},
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
	e.waitStatus(sha, "infra-bot/post_workflow_hook: notify", "success", "succeeded.")
	for _, c := range []string{"infra-bot/pre_workflow_hook: generate", "infra-bot/post_workflow_hook: notify"} {
		if h := e.gh.statusHistory(sha, c); len(h) != 2 || h[0].State != "pending" || h[0].Description != "in progress..." {
			t.Fatalf("%s: history %+v, want pending (in progress...) then the outcome", c, h)
		}
	}
	if st := e.gh.status(sha, "atlantis/pre_workflow_hook: generate"); st != "" {
		t.Fatalf("atlantis/pre_workflow_hook: generate = %q, want unset under --vcs-status-name", st)
	}
}
