package markdown_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

// --disable-markdown-folding: outputs are code blocks without <details>,
// for plans, failures, applies and imports alike.
func TestDisableFolding(t *testing.T) {
	cases := []struct {
		name string
		res  markdown.ProjectResult
		want string // the code block's first line
	}{
		{"plan", markdown.ProjectResult{Command: "plan", Output: planOutput, HasChanges: true}, "```diff\n"},
		{"plan error", markdown.ProjectResult{Command: "plan", Output: "Error: boom\nmore lines", Error: "exit status 1"}, "```\nError: boom"},
		{"apply", markdown.ProjectResult{Command: "apply", Output: "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."}, "```diff\n"},
		{"import", markdown.ProjectResult{Command: atoll.JobImport, Output: "Import successful!"}, "```diff\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.res.Dir = "app"
			folded := one(t, markdown.Renderer{}, tc.res.Command, tc.res)
			mustContain(t, folded, "<details><summary>Show Output</summary>\n\n"+tc.want)
			got := one(t, markdown.Renderer{DisableFolding: true}, tc.res.Command, tc.res)
			mustContain(t, got, tc.want)
			mustNotContain(t, got, "<details>", "</details>", "Show Output")
		})
	}
}

// --hide-unchanged-plan-comments: a plan comment about several projects
// leaves out the sections of plans without changes (the list still names
// them, numbers keep their place); failures, locks, failing policies and a
// single project's comment are shown.
func TestHideUnchangedPlans(t *testing.T) {
	noChange := "\nNo changes. Your infrastructure matches the configuration.\n"
	results := []markdown.ProjectResult{
		{Dir: "a", Command: "plan", Output: planOutput, Summary: &atoll.Summary{Add: 1}, HasChanges: true},
		{Dir: "b", Command: "plan", Output: noChange, Summary: &atoll.Summary{}},
		{Dir: "c", Command: "plan", Output: "Error: x", Error: "exit status 1"},
		{Dir: "d", Command: "plan", LockedBy: &markdown.LockHolder{Pull: 3}},
		{Dir: "e", Command: "plan", Output: noChange, Summary: &atoll.Summary{}, Policies: []atoll.PolicyCheck{{PolicySet: "p", Passed: false, ApproveCount: 1}}},
	}
	shown := markdown.Renderer{}.Results("plan", results, marker)[0]
	mustContain(t, shown, "### 2. dir: `b`", noChange)

	r := markdown.Renderer{HideUnchangedPlans: true}
	pieces := r.Results("plan", results, marker)
	checkPieces(t, pieces, markdown.DefaultMaxCommentLen)
	got := pieces[0]
	mustContain(t, got, "2. dir: `b` workspace: `default`\n", "### 1. dir: `a`", "### 3. dir: `c`", "### 4. dir: `d`", "### 5. dir: `e`",
		"comment: `atlantis apply`")
	mustNotContain(t, got, "### 2.", "`atlantis apply -d b`")
	// b's section says it twice (output and summary line); e's stays.
	if all, n := strings.Count(shown, "No changes."), strings.Count(got, "No changes."); n != all-2 || n == 0 {
		t.Errorf("\"No changes.\" %d times, %d without hiding; want e's only:\n%s", n, all, got)
	}

	single := one(t, r, "plan", results[1])
	mustContain(t, single, noChange, "`atlantis apply -d b`")
}
