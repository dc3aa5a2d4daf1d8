package markdown_test

import (
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

// A plan merged onto a base that moved since the project's previous plan
// says so, as Atlantis's "merged again" line; one that did not stays quiet.
func TestPlanMergedAgain(t *testing.T) {
	res := markdown.ProjectResult{Dir: "app", Workspace: "default", Command: "plan", Summary: &atoll.Summary{Add: 1}}
	quiet := one(t, markdown.Renderer{}, "plan", res)
	mustNotContain(t, quiet, "Upstream was modified")
	res.MergedAgain = true
	got := one(t, markdown.Renderer{}, "plan", res)
	mustContain(t, got, "\n:twisted_rightwards_arrows: Upstream was modified, a new merge was performed.\n")
}
