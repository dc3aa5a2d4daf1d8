package main_test

import (
	"testing"

	"github.com/atollhq/atoll"
)

// A failed plan gives up its lock, as in Atlantis: one broken pull request
// does not block the others.
func TestFailedPlanReleasesLock(t *testing.T) {
	e := newE2E(t)
	e.open(1, "broken", map[string]string{"staging/main.tf": "resource \"terraform_data\" \"x\" {\n  input = var.missing\n}\n"}, "staging/main.tf")
	mustContain(t, "failed plan comment", e.waitComment(1, 1), "Plan Error", "var.missing")
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 0 {
		t.Fatalf("locks after a failed plan = %+v, want none", locks)
	}
	e.open(2, "fine", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "other pull request's plan", e.waitComment(2, 1), "Plan: 2 to add")
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 1 || locks[0].Pull != 2 {
		t.Fatalf("locks = %+v, want #2's", locks)
	}
}
