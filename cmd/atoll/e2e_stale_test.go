package main_test

import (
	"io"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// getPage returns the body of GET url.
func getPage(t *testing.T, url string) string {
	t.Helper()
	resp, err := authClient.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(body)
}

// With the merge checkout strategy and no undiverged requirement, a plan
// whose base branch moved since in the project's files is not applied
// (Atoll is stricter than Atlantis here), and the pull request page says
// why; base commits in other projects' files do not matter, and planning
// again says, as Atlantis, that a new merge was made.
func TestStalePlanIsNotApplied(t *testing.T) {
	files := map[string]string{
		"atlantis.yaml": "version: 3\nprojects:\n  - name: a\n    dir: a\n  - name: b\n    dir: b\n",
		"a/main.tf":     tfProject("a", 1),
		"b/main.tf":     tfProject("b", 1),
	}
	e := newE2EWith(t, files, func(c *main.Config) { c.CheckoutStrategy = "merge" })
	moveMain := func(head string, changed map[string]string) {
		e.base = e.repo.commit("on main", changed)
		e.gh.setPull(1, fakePull{HeadSHA: head, HeadRef: "change-a", BaseSHA: e.base, BaseRef: "main", Files: []string{"a/main.tf"}})
	}
	head := e.open(1, "change-a", map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
	first := e.waitComment(1, 1)
	mustContain(t, "autoplan", first, "Plan: 2 to add", "atlantis apply -p a")
	if strings.Contains(first, "Upstream was modified") {
		t.Fatalf("the first plan says upstream was modified:\n%s", first)
	}
	// The plan links its project's row on the pull request page, whose
	// Unlock button deletes the lock and the plan.
	prefix := "* :put_litter_in_its_place: To **delete** this plan and lock, click [here](" + e.m.Server.PublicURL + "/repos/acme/infra/pulls/1#project-"
	_, rest, ok := strings.Cut(first, prefix)
	if !ok {
		t.Fatalf("the plan has no delete link %q:\n%s", prefix, first)
	}
	anchor, _, _ := strings.Cut(rest, ")")
	row := getPage(t, e.m.URL+"/repos/acme/infra/pulls/1")
	_, row, ok = strings.Cut(row, `id="project-`+anchor+`"`)
	if !ok {
		t.Fatalf("the pull request page has no row project-%s", anchor)
	}
	row, _, _ = strings.Cut(row, "</article>")
	mustContain(t, "project row", row, `action="/locks/unlock"`, ">Unlock</button>")

	// Main moves in b's files only: a's plan is still good.
	moveMain(head, map[string]string{"b/main.tf": tfProject("b", 3)})
	e.comment(1, "atlantis apply -p a")
	mustContain(t, "apply after b moved", e.waitComment(1, 2), "Apply complete!")

	// Planning again merges onto the newer main, and says so.
	e.comment(1, "atlantis plan -p a")
	mustContain(t, "plan on the newer main", e.waitComment(1, 3), "atlantis apply -p a",
		":twisted_rightwards_arrows: Upstream was modified, a new merge was performed.")

	// Main moves in a's files: the apply is refused.
	moveMain(head, map[string]string{"a/extra.tf": `resource "terraform_data" "extra" {}` + "\n"})
	e.comment(1, "atlantis apply -p a")
	refused := e.waitComment(1, 4)
	mustContain(t, "stale apply", refused, "plan is stale: the base branch main moved since this project was planned",
		"`a/extra.tf`", "run `atlantis plan` again")
	if strings.Contains(refused, "Apply complete!") {
		t.Fatalf("a stale plan was applied:\n%s", refused)
	}
	page := getPage(t, e.m.URL+"/repos/acme/infra/pulls/1")
	mustContain(t, "pull request page", page, `badge-plan-stale`, "refused to apply it: plan is stale: the base branch main moved")
	// The plan's own page says the same.
	_, rest, ok = strings.Cut(page, `href="/plans/`)
	if !ok {
		t.Fatal("the pull request page links no plan")
	}
	planID, _, _ := strings.Cut(rest, `"`)
	mustContain(t, "plan page", getPage(t, e.m.URL+"/plans/"+planID), "stale", "refused to apply it: plan is stale: the base branch main moved")

	// Planning again makes it applicable.
	e.comment(1, "atlantis plan -p a")
	mustContain(t, "plan again", e.waitComment(1, 5), "Plan: 3 to add")
	e.comment(1, "atlantis apply -p a")
	mustContain(t, "apply after planning again", e.waitComment(1, 6), "Apply complete!")
}
