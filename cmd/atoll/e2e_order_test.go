package main_test

import (
	"testing"

	"github.com/atollhq/atoll"
)

// Through GitHub: with abort_on_execution_order_fail, a failure in the first
// execution_order_group leaves the later group unplanned, and the pull
// request is told why; the unplanned project holds no lock.
func TestExecutionOrderAbortOnGitHub(t *testing.T) {
	e := newE2E(t)
	yaml := "version: 3\nabort_on_execution_order_fail: true\nprojects:\n" +
		"- {name: production, dir: production, execution_order_group: 2}\n" +
		"- {name: staging, dir: staging, execution_order_group: 1}\n"
	e.open(1, "ordered", map[string]string{
		"atlantis.yaml":      yaml,
		"staging/main.tf":    "resource \"terraform_data\" \"x\" {\n  input = file(\"${path.module}/missing.txt\")\n}\n",
		"production/main.tf": tfProject("production", 2),
	}, "atlantis.yaml", "staging/main.tf", "production/main.tf")
	c := e.waitComment(1, 1)
	mustContain(t, "plan comment", c, "staging", "production", "abort_on_execution_order_fail")
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobs)
	states := map[string]string{}
	for _, j := range jobs {
		states[j.Project] = j.State
	}
	if states["staging"] != atoll.JobFailed || states["production"] != atoll.JobCanceled {
		t.Fatalf("job states = %v; want staging failed, production not run (canceled)", states)
	}
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 0 {
		t.Fatalf("locks = %+v; want none: nothing was planned", locks)
	}
}
