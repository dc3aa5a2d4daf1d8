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

// A plan links the page where its lock, and with it the plan, is deleted,
// between the apply and plan commands as in Atlantis; without a public URL
// there is no link.
func TestPlanDeleteLockLink(t *testing.T) {
	res := markdown.ProjectResult{Dir: "app", Workspace: "default", Command: "plan", Summary: &atoll.Summary{Add: 1}}
	mustNotContain(t, one(t, markdown.Renderer{}, "plan", res), "To **delete** this plan and lock")
	res.LockURL = "https://atoll.example.com/repos/acme/infra/pulls/7#project-3"
	got := one(t, markdown.Renderer{}, "plan", res)
	mustContain(t, got, "* :arrow_forward: To **apply** this plan, comment: `atlantis apply -d app`\n"+
		"* :put_litter_in_its_place: To **delete** this plan and lock, click [here](https://atoll.example.com/repos/acme/infra/pulls/7#project-3)\n"+
		"* :repeat: To **plan** this project again")
	// A failed plan has no plan to delete.
	res.Error = "Error: boom"
	mustNotContain(t, one(t, markdown.Renderer{}, "plan", res), "To **delete** this plan and lock")
}
