package main_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// openLabeled is e2e.open for a pull request that carries labels.
func (e *e2e) openLabeled(number int, branch string, labels []string, files map[string]string, changed ...string) string {
	e.t.Helper()
	sha := e.repo.branch(branch, files)
	e.gh.setPull(number, fakePull{HeadSHA: sha, HeadRef: branch, BaseSHA: e.base, BaseRef: "main", Files: changed, Labels: labels})
	resp := webhook(e.t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, number, "opened", branch, sha, e.base))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("opened webhook: status %d", resp.StatusCode)
	}
	return sha
}

// setLabels changes the labels of pull request number on the fake GitHub.
func (e *e2e) setLabels(number int, labels ...string) {
	e.t.Helper()
	e.gh.mu.Lock()
	defer e.gh.mu.Unlock()
	e.gh.pulls[number].Labels = labels
}

// synchronize sends a pull request's synchronize webhook (its head is
// unchanged: autoplan runs again).
func (e *e2e) synchronize(number int, branch, sha string) {
	e.t.Helper()
	resp := webhook(e.t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, number, "synchronize", branch, sha, e.base))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("synchronize webhook: status %d", resp.StatusCode)
	}
}

func (e *e2e) locks() []atoll.Lock {
	e.t.Helper()
	var locks []atoll.Lock
	getJSON(e.t, e.m.URL+"/api/v1/locks", &locks)
	return locks
}

// --disable-autoplan-label: a labeled pull request is not autoplanned (no
// comment, no status); a plan comment still plans, and without the label
// autoplan plans again.
func TestDisableAutoplanLabel(t *testing.T) {
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)},
		func(c *main.Config) { c.DisableAutoplanLabel = "no-autoplan" })
	sha := e.openLabeled(1, "grow", []string{"bug", "no-autoplan"}, map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	// A pull request's requests run in order: the reply to this comment
	// comes after whatever the opened event did.
	e.comment(1, "atlantis unlock")
	mustContain(t, "first comment (no autoplan before it)", e.waitComment(1, 1), "There were no locks or plans")
	if h := e.gh.statusHistory(sha, "atlantis/plan"); len(h) != 0 {
		t.Fatalf("atlantis/plan statuses of the unplanned pull request: %+v", h)
	}

	e.comment(1, "atlantis plan")
	mustContain(t, "plan comment on the labeled pull request", e.waitComment(1, 2), "Plan: 2 to add")

	e.setLabels(1, "bug")
	e.synchronize(1, "grow", sha)
	mustContain(t, "autoplan without the label", e.waitComment(1, 3), "Plan: 2 to add")
}

// --disable-unlock-label: the unlock comment is refused while the label is
// on, and the locks stay; without it, it unlocks.
func TestDisableUnlockLabel(t *testing.T) {
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)},
		func(c *main.Config) { c.DisableUnlockLabel = "keep-locks" })
	e.openLabeled(1, "grow", []string{"keep-locks"}, map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	if n := len(e.locks()); n != 1 {
		t.Fatalf("locks after the plan = %d, want 1", n)
	}

	e.comment(1, "atlantis unlock")
	mustContain(t, "unlock with the label", e.waitComment(1, 2), "Unlock refused", "`keep-locks`")
	if n := len(e.locks()); n != 1 {
		t.Fatalf("locks after the refused unlock = %d, want 1", n)
	}

	e.setLabels(1)
	e.comment(1, "atlantis unlock")
	mustContain(t, "unlock without the label", e.waitComment(1, 3), "Released the 1 lock")
	if n := len(e.locks()); n != 0 {
		t.Fatalf("locks after the unlock = %d, want 0", n)
	}
}

// --disable-automerge-label: all plans applied, but the labeled pull
// request is not merged; once the label is gone, the next apply merges.
func TestDisableAutomergeLabel(t *testing.T) {
	const cfg = "version: 3\nautomerge: true\nprojects:\n- dir: a\n- dir: b\n"
	e := newE2EWith(t, map[string]string{"atlantis.yaml": cfg, "a/main.tf": tfProject("a", 1), "b/main.tf": tfProject("b", 1)},
		func(c *main.Config) { c.DisableAutomergeLabel = "hold" })
	e.openLabeled(1, "grow", []string{"hold"}, map[string]string{"a/main.tf": tfProject("a", 2), "b/main.tf": tfProject("b", 2)}, "a/main.tf", "b/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")

	e.comment(1, "atlantis apply -d a")
	mustContain(t, "apply of a", e.waitComment(1, 2), "Apply complete!")
	e.comment(1, "atlantis apply -d b")
	mustContain(t, "apply of b", e.waitComment(1, 3), "Apply complete!")
	// Requests run in order: an automerge reply would come before this.
	e.comment(1, "atlantis unlock")
	if c := e.waitComment(1, 4); strings.Contains(c, "merged") {
		t.Fatalf("comment after the last apply: %s", c)
	}
	if m := e.gh.mergesOf(1); len(m) != 0 {
		t.Fatalf("merges of the labeled pull request: %+v", m)
	}
}

// Without the label, the same pull request is merged (the control of
// TestDisableAutomergeLabel).
func TestDisableAutomergeLabelOther(t *testing.T) {
	const cfg = "version: 3\nautomerge: true\nprojects:\n- dir: a\n"
	e := newE2EWith(t, map[string]string{"atlantis.yaml": cfg, "a/main.tf": tfProject("a", 1)},
		func(c *main.Config) { c.DisableAutomergeLabel = "hold" })
	e.openLabeled(1, "grow", []string{"bug"}, map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis apply")
	mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
	mustContain(t, "automerge", e.waitComment(1, 3), "Automatically merged")
	if m := e.gh.mergesOf(1); len(m) != 1 {
		t.Fatalf("merges = %+v, want 1", m)
	}
}
