package markdown_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

func TestApplyNamesItsApproval(t *testing.T) {
	got := one(t, markdown.Renderer{}, "apply", markdown.ProjectResult{
		Project: "production", Dir: "production", Workspace: "default", Command: "apply",
		Summary: &atoll.Summary{Add: 1}, ApprovedBy: "bob: checked the diff",
	})
	mustContain(t, got, "Approved by bob: checked the diff")

	// A reason is one escaped line: no headings, links, mentions or HTML.
	got = one(t, markdown.Renderer{}, "apply", markdown.ProjectResult{
		Dir: "x", Command: "apply", Summary: &atoll.Summary{}, ApprovedBy: "bob: ok\n# [x](http://evil) @team <b>",
	})
	line := got[strings.Index(got, "Approved by"):]
	line = line[:strings.IndexByte(line, '\n')]
	if want := `Approved by bob: ok \# \[x\]\(http://evil\) \@team \<b\>`; line != want {
		t.Fatalf("approval line = %q, want %q", line, want)
	}

	// A refused apply links the plan's page outside the error block.
	got = one(t, markdown.Renderer{}, "apply", markdown.ProjectResult{
		Dir: "production", Command: "apply", Error: "Project production needs an approval in Atoll.",
		ApprovalURL: "http://atoll.example/plans/2",
	})
	mustContain(t, got, "**Apply Error**", "[Review and approve the plan in Atoll](http://atoll.example/plans/2)")
	if strings.Contains(got, "Approved by") {
		t.Fatalf("a refused apply names an approver:\n%s", got)
	}
}
