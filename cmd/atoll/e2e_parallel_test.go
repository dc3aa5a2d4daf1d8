package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

const parallelConfig = `version: 3
parallel_plan: true
parallel_apply: true
automerge: true
projects:
- dir: a
- dir: b
- dir: c
`

// parallel_plan, parallel_apply and automerge, for real: three projects
// plan and apply side by side in one request (under -race in make test),
// each stores its own plan and log, and the pull request is merged once
// every plan is applied.
func TestParallelPlanApplyAutomerge(t *testing.T) {
	e := newE2E(t)
	files := map[string]string{"atlantis.yaml": parallelConfig}
	var changed []string
	for i, dir := range []string{"a", "b", "c"} {
		files[dir+"/main.tf"] = tfProject(dir, i+1)
		changed = append(changed, dir+"/main.tf")
	}
	e.open(1, "three", files, changed...)
	plan := e.waitComment(1, 1)
	mustContain(t, "parallel plan comment", plan, "Ran Plan for 3 projects", "Plan: 1 to add", "Plan: 2 to add", "Plan: 3 to add")

	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &jobs)
	if len(jobs) != 3 {
		t.Fatalf("plan jobs = %+v", jobs)
	}
	overlapped := false
	for i, a := range jobs {
		if a.State != atoll.JobSucceeded {
			t.Fatalf("plan job %d is %s: %s", a.ID, a.State, a.Error)
		}
		for _, b := range jobs[i+1:] {
			if a.StartedAt.Before(*b.FinishedAt) && b.StartedAt.Before(*a.FinishedAt) {
				overlapped = true
			}
		}
	}
	if !overlapped {
		t.Log("no two plans overlapped in time (the machine may have run them back to back)")
	}

	e.comment(1, "atlantis apply")
	apply := e.waitComment(1, 2)
	mustContain(t, "parallel apply comment", apply, "Ran Apply for 3 projects", "Apply complete! Resources: 1 added", "Apply complete! Resources: 3 added")
	merged := e.waitComment(1, 3)
	mustContain(t, "automerge comment", merged, "Automatically merged")
	eventually(t, 10*time.Second, "merge", func() bool { return len(e.gh.mergesOf(1)) == 1 })
	if strings.Contains(apply, "Error") {
		t.Fatalf("apply comment has an error:\n%s", apply)
	}
}
