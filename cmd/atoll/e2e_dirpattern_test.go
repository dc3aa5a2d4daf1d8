package main_test

import (
	"strings"
	"testing"
)

// -d glob patterns, as Atlantis v0.47: plan and apply the projects whose
// dir matches.
func TestDirGlobPattern(t *testing.T) {
	e := newE2E(t)
	e.open(1, "both", map[string]string{
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Ran Plan for 2 projects")

	e.comment(1, "atlantis apply -d 'prod*'")
	applied := e.waitComment(1, 2)
	mustContain(t, "apply -d prod*", applied, "Ran Apply for dir: `production` workspace: `default`", "Apply complete!")
	if strings.Contains(applied, "staging") {
		t.Fatalf("apply -d 'prod*' applied staging:\n%s", applied)
	}

	e.comment(1, "atlantis plan -d '*ing'")
	planned := e.waitComment(1, 3)
	mustContain(t, "plan -d *ing", planned, "Ran Plan for dir: `staging` workspace: `default`", "atlantis apply -d staging")

	e.comment(1, "atlantis plan -d '../*'")
	mustContain(t, "plan -d ../*", e.waitComment(1, 4), `must not contain ".."`)
}
