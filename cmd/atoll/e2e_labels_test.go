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
	e.gh.setLabels(number, labels)
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

// --silence-vcs-status-no-plans and --silence-vcs-status-no-projects:
// autoplan that finds no projects sets no status with either; a plan
// comment that finds none (with --silence-no-projects) sets none only with
// the second, as in Atlantis. Without them both set 0/0 successes.
func TestSilenceVCSStatusNoPlansNoProjects(t *testing.T) {
	for _, tc := range []struct {
		name                      string
		noPlans, noProjects       bool
		autoplanSets, commentSets bool
	}{
		{"no-plans", true, false, false, true},
		{"no-projects", false, true, false, false},
		{"neither", false, false, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newE2EConfigured(t, func(c *main.Config) {
				c.SilenceVCSStatusNoPlans, c.SilenceVCSStatusNoProjects, c.SilenceNoProjects = tc.noPlans, tc.noProjects, true
			})
			sha := e.open(1, "docs", map[string]string{"README.md": "hello\n"}, "README.md")
			// Requests of a pull request run in order, each after the
			// statuses of the one before: when the unlock is answered,
			// autoplan's statuses are out.
			e.comment(1, "atlantis unlock")
			mustContain(t, "reply after autoplan", e.waitComment(1, 1), "no locks or plans")
			checkNoProjectStatuses(t, e, sha, "autoplan", tc.autoplanSets)

			e.gh.ClearStatuses()
			e.comment(1, "atlantis plan")
			e.comment(1, "atlantis unlock")
			mustContain(t, "reply after the plan comment", e.waitComment(1, 2), "no locks or plans")
			checkNoProjectStatuses(t, e, sha, "plan comment", tc.commentSets)
		})
	}
}

func checkNoProjectStatuses(t *testing.T, e *e2e, sha, what string, set bool) {
	t.Helper()
	for _, c := range []string{"atlantis/plan", "atlantis/apply"} {
		h := e.gh.statusHistory(sha, c)
		if !set && len(h) != 0 {
			t.Errorf("%s: %s statuses %+v, want none", what, c, h)
		}
		if set && (len(h) == 0 || h[len(h)-1].State != "success" || !strings.Contains(h[len(h)-1].Description, "0/0")) {
			t.Errorf("%s: %s statuses %+v, want a 0/0 success", what, c, h)
		}
	}
}

// --hide-unchanged-plan-comments: a plan of two projects, one without
// changes, shows the changed one only (both are listed at the top).
func TestHideUnchangedPlanComments(t *testing.T) {
	// b manages nothing: its plan has no changes.
	const b = "locals {\n  x = 1\n}\n"
	files := map[string]string{"a/main.tf": tfProject("a", 1), "b/main.tf": b}
	e := newE2EWith(t, files, func(c *main.Config) { c.HideUnchangedPlanComments = true })
	e.open(1, "grow-a", map[string]string{"a/main.tf": tfProject("a", 2), "b/main.tf": b + "# a comment only\n"}, "a/main.tf", "b/main.tf")
	got := e.waitComment(1, 1)
	mustContain(t, "autoplan", got, "Ran Plan for 2 projects", "2. dir: `b` workspace: `default`", "### 1. dir: `a`", "Plan: 2 to add")
	if strings.Contains(got, "### 2.") || strings.Contains(got, "No changes.") {
		t.Fatalf("the unchanged project is shown:\n%s", got)
	}
}

// --disable-markdown-folding: the plan's output is not folded.
func TestDisableMarkdownFolding(t *testing.T) {
	e := newE2EWith(t, map[string]string{"staging/main.tf": tfProject("staging", 1)},
		func(c *main.Config) { c.DisableMarkdownFolding = true })
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	got := e.waitComment(1, 1)
	mustContain(t, "autoplan", got, "```diff\n", "Plan: 2 to add")
	if strings.Contains(got, "<details>") {
		t.Fatalf("folded output:\n%s", got)
	}
}

// silence_pr_comments: a project's results of the commands it names are
// left out of the comments (a command whose every project is silenced gets
// no comment); the other projects' are told, and the jobs run all the same.
func TestSilencePRComments(t *testing.T) {
	const cfg = "version: 3\nprojects:\n- dir: a\n  silence_pr_comments: [plan]\n- dir: b\n  silence_pr_comments: [apply]\n"
	files := map[string]string{"atlantis.yaml": cfg, "a/main.tf": tfProject("a", 1), "b/main.tf": tfProject("b", 1)}
	e := newE2EWith(t, files, func(c *main.Config) {
		c.RepoConfigJSON = `{"repos": [{"id": "/.*/", "allowed_overrides": ["silence_pr_comments"]}]}`
	})
	e.open(1, "grow", map[string]string{"a/main.tf": tfProject("a", 2), "b/main.tf": tfProject("b", 2)}, "a/main.tf", "b/main.tf")
	autoplan := e.waitComment(1, 1)
	mustContain(t, "autoplan", autoplan, "Ran Plan for dir: `b` workspace: `default`", "Plan: 2 to add")
	if strings.Contains(autoplan, "dir: `a`") || strings.Contains(autoplan, "not acted on") {
		t.Fatalf("autoplan comment:\n%s", autoplan)
	}

	// Requests run in order: the apply's answer is the next comment.
	e.comment(1, "atlantis plan -d a")
	e.comment(1, "atlantis apply -d a")
	mustContain(t, "apply of a", e.waitComment(1, 2), "Ran Apply for dir: `a`", "Apply complete!")
	e.comment(1, "atlantis apply -d b")
	e.comment(1, "atlantis unlock")
	mustContain(t, "reply after the apply of b", e.waitComment(1, 3), "to plan again")
	jobs, err := e.m.DB.Jobs(t.Context(), atoll.JobFilter{Pull: 1, Kind: atoll.JobApply})
	if err != nil {
		t.Fatal(err)
	}
	applied := map[string]string{}
	for _, j := range jobs {
		applied[j.Dir] = j.State
	}
	if applied["a"] != atoll.JobSucceeded || applied["b"] != atoll.JobSucceeded {
		t.Fatalf("apply jobs: %v", applied)
	}
	for i, c := range e.gh.pullComments(1) {
		if strings.Contains(c, "Ran Plan for dir: `a`") || strings.Contains(c, "Ran Apply for dir: `b`") {
			t.Fatalf("comment %d tells a silenced result:\n%s", i+1, c)
		}
	}
}
