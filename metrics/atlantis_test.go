package metrics_test

import (
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll/metrics"
)

func TestAtlantisNamesAndLabels(t *testing.T) {
	a := metrics.New()
	p := metrics.Project{BaseRepo: "acme/infra", PullNumber: "7", ProjectPath: "staging", Workspace: "default", TerraformVersion: "1.5.7"}
	a.ProjectRun("plan", p, metrics.Success, 2*time.Second)
	a.ProjectRun("plan", p, metrics.Success, 4*time.Second)
	a.ProjectRun("state rm", p, metrics.Failure, time.Second)
	a.Command("cmd_comment_plan", metrics.Error, 3*time.Second)
	var b strings.Builder
	if _, err := a.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	labels := `base_repo="acme/infra",pr_number="7",project="",project_path="staging",terraform_distribution="",terraform_version="1.5.7",workspace="default"`
	for _, want := range []string{
		"# TYPE atlantis_project_plan_execution_success counter\natlantis_project_plan_execution_success{" + labels + "} 2\n",
		"atlantis_project_state_rm_execution_failure{" + labels + "} 1\n",
		"# TYPE atlantis_project_plan_execution_time summary\n",
		"atlantis_project_plan_execution_time{" + labels + `,quantile="0.5"} 2` + "\n",
		"atlantis_project_plan_execution_time{" + labels + `,quantile="0.99"} 4` + "\n",
		"atlantis_project_plan_execution_time_sum{" + labels + "} 6\n",
		"atlantis_project_plan_execution_time_count{" + labels + "} 2\n",
		"atlantis_cmd_comment_plan_execution_error 1\n",
		"atlantis_cmd_comment_plan_execution_success 0\n", // initialised, as Atlantis
		"atlantis_cmd_autoplan_execution_success 0\n",
		"atlantis_cmd_comment_plan_execution_time_count 1\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %q in:\n%s", want, got)
		}
	}
	var nilA *metrics.Atlantis
	nilA.ProjectRun("plan", p, metrics.Success, time.Second) // records nothing, no panic
}
