package metrics_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/atollhq/atoll/metrics"
)

// projectLabels are the labels of a project run below, as the exposition
// writes them: sorted by name, as tally's reporter and every Prometheus
// client do.
const projectLabels = `base_repo="acme/infra",pr_number="7",project="",project_path="staging",terraform_distribution="",terraform_version="1.5.7",workspace="default"`

// emptyProject are the labels of Atlantis's project counters at start.
const emptyProject = `base_repo="",pr_number="",project="",project_path="",terraform_distribution="",terraform_version="",workspace=""`

// Atlantis's names, types, help texts and labels after a project run and
// a command: what an Atlantis dashboard queries.
func TestAtlantisNamesAndLabels(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a := metrics.New(reg)
	p := metrics.Project{BaseRepo: "acme/infra", PullNumber: "7", ProjectPath: "staging", Workspace: "default", TerraformVersion: "1.5.7"}
	a.ProjectRun("plan", p, metrics.Success, 2*time.Second)
	a.ProjectRun("plan", p, metrics.Success, 4*time.Second)
	a.ProjectRun("state rm", p, metrics.Failure, time.Second)
	a.Command("cmd_comment_plan", metrics.Error, 3*time.Second)

	want := counter("atlantis_project_plan_execution_success", projectLabels, 2) +
		counter("atlantis_project_state_rm_execution_failure", projectLabels, 1) +
		counter("atlantis_project_execution_success", emptyProject, 0) + // as Atlantis starts
		counter("atlantis_project_execution_failure", emptyProject, 0) +
		counter("atlantis_cmd_comment_plan_execution_error", "", 1) +
		counter("atlantis_cmd_comment_plan_execution_success", "", 0) +
		counter("atlantis_cmd_autoplan_execution_success", "", 0) +
		counter("atlantis_pullclosed_cleanup_execution_error", "", 0) + `
# HELP atlantis_cmd_comment_plan_execution_time atlantis_cmd_comment_plan_execution_time summary
# TYPE atlantis_cmd_comment_plan_execution_time summary
atlantis_cmd_comment_plan_execution_time{quantile="0.5"} 3
atlantis_cmd_comment_plan_execution_time{quantile="0.75"} 3
atlantis_cmd_comment_plan_execution_time{quantile="0.95"} 3
atlantis_cmd_comment_plan_execution_time{quantile="0.99"} 3
atlantis_cmd_comment_plan_execution_time{quantile="0.999"} 3
atlantis_cmd_comment_plan_execution_time_sum 3
atlantis_cmd_comment_plan_execution_time_count 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"atlantis_project_plan_execution_success", "atlantis_project_state_rm_execution_failure",
		"atlantis_project_execution_success", "atlantis_project_execution_failure",
		"atlantis_cmd_comment_plan_execution_error", "atlantis_cmd_comment_plan_execution_success",
		"atlantis_cmd_autoplan_execution_success", "atlantis_pullclosed_cleanup_execution_error",
		"atlantis_cmd_comment_plan_execution_time"); err != nil {
		t.Error(err)
	}

	// The project timer: a summary with tally's quantiles, the project's
	// labels, and the runs' count and sum.
	mf := family(t, reg, "atlantis_project_plan_execution_time")
	if mf.GetType() != dto.MetricType_SUMMARY || len(mf.Metric) != 1 {
		t.Fatalf("project timer = %v with %d series, want one summary", mf.GetType(), len(mf.Metric))
	}
	m := mf.Metric[0]
	if got := labelText(m); got != projectLabels {
		t.Errorf("project timer labels = %s, want %s", got, projectLabels)
	}
	s := m.GetSummary()
	if s.GetSampleCount() != 2 || s.GetSampleSum() != 6 {
		t.Errorf("project timer count %d sum %g, want 2 and 6", s.GetSampleCount(), s.GetSampleSum())
	}
	var qs []float64
	for _, q := range s.Quantile {
		qs = append(qs, q.GetQuantile())
		if v := q.GetValue(); v != 2 && v != 4 {
			t.Errorf("quantile %g = %g, want one of the runs' times", q.GetQuantile(), v)
		}
	}
	if want := []float64{0.5, 0.75, 0.95, 0.99, 0.999}; !slices.Equal(qs, want) {
		t.Errorf("quantiles %v, want tally's %v", qs, want)
	}

	var nilA *metrics.Atlantis
	nilA.ProjectRun("plan", p, metrics.Success, time.Second) // records nothing, no panic
	nilA.Command("cmd_autoplan", metrics.Success, time.Second)
}

// A name a scope would take twice with other labels is not recorded, and
// the registry stays consistent.
func TestAtlantisConflictingNameDropped(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	a := metrics.New(reg)
	a.Command("project", metrics.Success, time.Second) // atlantis_project_execution_success has project labels
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
	mf := family(t, reg, "atlantis_project_execution_success")
	if len(mf.Metric) != 1 || mf.Metric[0].GetCounter().GetValue() != 0 || len(mf.Metric[0].Label) != 7 {
		t.Errorf("atlantis_project_execution_success = %v, want its one project series at 0", mf.Metric)
	}
}

// counter is a counter's exposition as tally's reporter writes it: the
// name and its type as help text; labels are written within braces.
func counter(name, labels string, value int) string {
	if labels != "" {
		labels = "{" + labels + "}"
	}
	return fmt.Sprintf("# HELP %s %s counter\n# TYPE %s counter\n%s%s %d\n", name, name, name, name, labels, value)
}

func family(t *testing.T, g prometheus.Gatherer, name string) *dto.MetricFamily {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf
		}
	}
	t.Fatalf("no %s gathered", name)
	return nil
}

func labelText(m *dto.Metric) string {
	var parts []string
	for _, l := range m.Label {
		parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
	}
	return strings.Join(parts, ",")
}
