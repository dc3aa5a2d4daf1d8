package main_test

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// /metrics has Atlantis's metric names, types and labels, so an Atlantis
// Grafana dashboard keeps working: per-project plan outcomes (a lock
// conflict is a failure, as in Atlantis) and the autoplan and plan comment
// commands.
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
	counter := func(name, labels, value string) string {
		return "# HELP " + name + " " + name + " counter\n# TYPE " + name + " counter\n" + name + labels + " " + value + "\n"
	}
	want := counter("atlantis_project_plan_execution_success", labels("1"), "2") +
		counter("atlantis_project_plan_execution_failure", labels("2"), "1") +
		counter("atlantis_cmd_autoplan_execution_success", "", "1") +
		counter("atlantis_cmd_autoplan_execution_error", "", "1") + // pull request 2's
		counter("atlantis_cmd_comment_plan_execution_success", "", "1") +
		counter("atlantis_cmd_comment_plan_execution_error", "", "0") +
		counter("atlantis_cmd_comment_apply_execution_success", "", "0")
	names := []string{"atlantis_project_plan_execution_success", "atlantis_project_plan_execution_failure",
		"atlantis_cmd_autoplan_execution_success", "atlantis_cmd_autoplan_execution_error",
		"atlantis_cmd_comment_plan_execution_success", "atlantis_cmd_comment_plan_execution_error",
		"atlantis_cmd_comment_apply_execution_success"}
	var families map[string]*dto.MetricFamily
	var err error
	eventually(t, 30*time.Second, "Atlantis metrics", func() bool {
		families = scrapeMetrics(t, e.m.URL)
		err = testutil.GatherAndCompare(gatherer(families), strings.NewReader(want), names...)
		return err == nil
	})
	if err != nil {
		t.Error(err)
	}
	// The timers: summaries, one series per project and command.
	for name, count := range map[string]uint64{"atlantis_project_plan_execution_time": 2, "atlantis_cmd_autoplan_execution_time": 2, "atlantis_cmd_comment_plan_execution_time": 1} {
		mf := families[name]
		if mf.GetType() != dto.MetricType_SUMMARY {
			t.Errorf("%s is a %v, want a summary", name, mf.GetType())
			continue
		}
		if got := mf.Metric[0].GetSummary().GetSampleCount(); got != count {
			t.Errorf("%s count %d, want %d", name, got, count)
		}
	}
	if mf := families["atlantis_project_plan_execution_error"]; mf != nil {
		t.Errorf("a plan counted as an error: %v", mf)
	}
}

// scrapeMetrics GETs url's /metrics and parses the exposition.
func scrapeMetrics(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(getPage(t, url+"/metrics")))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v", err)
	}
	return families
}

// gatherer gathers families in name order, as a registry does, for
// testutil's comparisons.
func gatherer(families map[string]*dto.MetricFamily) prometheus.Gatherer {
	return prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		var out []*dto.MetricFamily
		for _, name := range slices.Sorted(maps.Keys(families)) {
			out = append(out, families[name])
		}
		return out, nil
	})
}
