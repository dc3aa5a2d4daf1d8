package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// locksNow returns every lock held, from the API the dashboard's lock page
// reads.
func locksNow(t *testing.T, e *e2e) []atoll.Lock {
	t.Helper()
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	return locks
}

// pullLocks returns the locks the pull request page shows.
func pullLocks(t *testing.T, e *e2e, number int) []atoll.Lock {
	t.Helper()
	var page struct{ Locks []atoll.Lock }
	if status := getJSON(t, fmt.Sprintf("%s/api/v1/repos/acme/infra/pulls/%d", e.m.URL, number), &page); status != 200 {
		t.Fatalf("pull #%d: status %d", number, status)
	}
	return page.Locks
}

// twoPullsPlanStaging opens pull requests 1 and 2, both changing staging,
// and checks that both plans succeed (no lock stops the second).
func twoPullsPlanStaging(t *testing.T, e *e2e) {
	t.Helper()
	e.open(1, "one", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "#1's plan", e.waitComment(1, 1), "Plan: 2 to add")
	e.open(2, "two", map[string]string{"staging/main.tf": tfProject("staging", 3)}, "staging/main.tf")
	plan2 := e.waitComment(2, 1)
	mustContain(t, "#2's plan", plan2, "Plan: 3 to add")
	if strings.Contains(plan2, "locked") {
		t.Fatalf("#2's plan mentions a lock:\n%s", plan2)
	}
}

var lockModeFiles = map[string]string{"staging/main.tf": tfProject("staging", 1)}

// With repo_locks mode on_apply, plans take and check no lock; the first
// apply takes the project's lock and holds it, and the other pull request's
// apply is refused, naming the holder.
func TestLockModeOnApply(t *testing.T) {
	files := map[string]string{"staging/main.tf": tfProject("staging", 1),
		"atlantis.yaml": "version: 3\nrepo_locks:\n  mode: on_apply\nprojects:\n- dir: staging\n"}
	e := newE2EWith(t, files, func(c *main.Config) {
		c.RepoConfigJSON = `{"repos": [{"id": "/.*/", "allowed_overrides": ["repo_locks"]}]}`
	})
	twoPullsPlanStaging(t, e)
	if l := locksNow(t, e); len(l) != 0 {
		t.Fatalf("locks after on_apply plans = %+v, want none", l)
	}
	if l := pullLocks(t, e, 1); len(l) != 0 {
		t.Fatalf("#1's page shows locks %+v after an on_apply plan", l)
	}

	e.comment(1, "atlantis apply")
	mustContain(t, "#1's apply", e.waitComment(1, 2), "Apply complete!")
	l := locksNow(t, e)
	if len(l) != 1 || l[0].Pull != 1 || l[0].Dir != "staging" {
		t.Fatalf("locks after #1's apply = %+v, want #1's on staging", l)
	}
	if l := pullLocks(t, e, 1); len(l) != 1 {
		t.Fatalf("#1's page shows locks %+v, want its apply's", l)
	}

	e.comment(2, "atlantis apply")
	refused := e.waitComment(2, 2)
	mustContain(t, "#2's apply", refused, "Apply Failed", "locked by", "pull [#1]")
	if strings.Contains(refused, "Apply complete!") {
		t.Fatalf("#2 applied while #1 holds the lock:\n%s", refused)
	}
	var pending []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?pull=2&kind=apply&state=succeeded", &pending)
	if len(pending) != 0 {
		t.Fatalf("#2 has succeeded applies %+v", pending)
	}

	// A plan still takes no lock and does not stop at #1's, as in Atlantis.
	e.comment(2, "atlantis plan")
	mustContain(t, "#2's re-plan", e.waitComment(2, 3), "Plan: 3 to add")
	if l := locksNow(t, e); len(l) != 1 || l[0].Pull != 1 {
		t.Fatalf("locks after #2's re-plan = %+v, want #1's only", l)
	}

	// Unlocking #2 discards its plan, and says so although it held no lock.
	e.comment(2, "atlantis unlock")
	mustContain(t, "#2's unlock", e.waitComment(2, 4), "held no locks; discarded its unapplied plan")
	e.comment(2, "atlantis apply")
	mustContain(t, "#2's apply after unlock", e.waitComment(2, 5), "Ran Apply for 0 projects")
}

// With repo_locks mode disabled, no lock is ever taken or checked: two pull
// requests both apply the same project. A plan still applies once.
func TestLockModeDisabled(t *testing.T) {
	e := newE2EWith(t, lockModeFiles, func(c *main.Config) {
		c.RepoConfigJSON = `{"repos": [{"id": "/.*/", "repo_locks": {"mode": "disabled"}}]}`
	})
	bothApply(t, e)
}

// --disable-repo-locking disables locks whatever the repo configs say.
func TestDisableRepoLockingFlag(t *testing.T) {
	files := map[string]string{"staging/main.tf": tfProject("staging", 1),
		"atlantis.yaml": "version: 3\nprojects:\n- dir: staging\n  repo_locks: {mode: on_plan}\n"}
	e := newE2EWith(t, files, func(c *main.Config) {
		c.RepoConfigJSON = `{"repos": [{"id": "/.*/", "allowed_overrides": ["repo_locks"]}]}`
		c.DisableRepoLocking = true
	})
	bothApply(t, e)
}

func bothApply(t *testing.T, e *e2e) {
	t.Helper()
	twoPullsPlanStaging(t, e)
	for _, n := range []int{1, 2} {
		e.comment(n, "atlantis apply")
		mustContain(t, fmt.Sprintf("#%d's apply", n), e.waitComment(n, 2), "Apply complete!")
		if l := locksNow(t, e); len(l) != 0 {
			t.Fatalf("locks after #%d's apply = %+v, want none", n, l)
		}
	}
	e.comment(1, "atlantis apply")
	mustContain(t, "#1's second apply", e.waitComment(1, 3), "Ran Apply for 0 projects")
	var audit struct{ Events []atoll.Event }
	getJSON(t, e.m.URL+"/api/v1/audit?limit=500", &audit)
	stored := 0
	for _, ev := range audit.Events {
		switch ev.Action {
		case "lock.take":
			t.Fatalf("a lock was taken: %+v", ev)
		case "plan.store":
			stored++
		}
	}
	if stored != 2 {
		t.Fatalf("audit has %d plan.store events, want 2: %+v", stored, audit.Events)
	}
}
