package main_test

import (
	"strings"
	"testing"
	"time"
)

// /metrics has Atlantis's metric names and labels, so an Atlantis Grafana
// dashboard keeps working: per-project plan outcomes (a lock conflict is a
// failure, as in Atlantis) and the autoplan and plan comment commands.
func TestAtlantisMetricsAfterPlans(t *testing.T) {
	e := newE2E(t)
	e.open(1, "one", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis plan -d staging")
	mustContain(t, "plan comment", e.waitComment(1, 2), "Plan: 2 to add")
	// Another pull request meets staging's lock.
	e.open(2, "two", map[string]string{"staging/main.tf": tfProject("staging", 3)}, "staging/main.tf")
	mustContain(t, "locked autoplan", e.waitComment(2, 1), "currently locked")

	labels := func(pull string) string {
		return `{base_repo="acme/infra",pr_number="` + pull + `",project="",project_path="staging",terraform_distribution="",terraform_version="",workspace="default"}`
	}
	want := []string{
		"# TYPE atlantis_project_plan_execution_success counter\n",
		"atlantis_project_plan_execution_success" + labels("1") + " 2\n",
		"atlantis_project_plan_execution_failure" + labels("2") + " 1\n",
		"atlantis_project_plan_execution_time_count" + labels("1") + " 2\n",
		"# TYPE atlantis_project_plan_execution_time summary\n",
		"atlantis_cmd_autoplan_execution_success 1\n",
		"atlantis_cmd_autoplan_execution_error 1\n", // pull request 2's
		"atlantis_cmd_comment_plan_execution_success 1\n",
		"atlantis_cmd_comment_plan_execution_error 0\n",
		"atlantis_cmd_autoplan_execution_time_count 2\n",
		"atlantis_cmd_comment_plan_execution_time_count 1\n",
		"atlantis_cmd_comment_apply_execution_success 0\n",
	}
	var page string
	eventually(t, 30*time.Second, "Atlantis metrics", func() bool {
		page = getPage(t, e.m.URL+"/metrics")
		for _, w := range want {
			if !strings.Contains(page, w) {
				return false
			}
		}
		return true
	})
	for _, w := range want {
		if !strings.Contains(page, w) {
			t.Errorf("/metrics lacks %q", w)
		}
	}
	if strings.Contains(page, "atlantis_project_plan_execution_error") {
		t.Errorf("a plan counted as an error:\n%s", page)
	}
}
