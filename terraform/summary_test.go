package terraform_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/planview/plantest"
	"github.com/atollhq/atoll/terraform"
)

func TestSummarize(t *testing.T) {
	rc := func(actions string, extra string) string {
		return `{"address":"x.y","change":{"actions":` + actions + extra + `}}`
	}
	plan := func(changes ...string) string {
		s := `{"format_version":"1.2","resource_changes":[`
		for i, c := range changes {
			if i > 0 {
				s += ","
			}
			s += c
		}
		return s + `]}`
	}
	cases := []struct {
		name    string
		json    string
		want    atoll.Summary
		wantErr bool
	}{
		{"create", plan(rc(`["create"]`, "")), atoll.Summary{Add: 1}, false},
		{"update", plan(rc(`["update"]`, "")), atoll.Summary{Change: 1}, false},
		{"delete", plan(rc(`["delete"]`, "")), atoll.Summary{Destroy: 1}, false},
		{"replace delete first", plan(rc(`["delete","create"]`, "")), atoll.Summary{Add: 1, Destroy: 1}, false},
		{"replace create first", plan(rc(`["create","delete"]`, "")), atoll.Summary{Add: 1, Destroy: 1}, false},
		{"no-op and read", plan(rc(`["no-op"]`, ""), rc(`["read"]`, "")), atoll.Summary{}, false},
		{"import only", plan(rc(`["no-op"]`, `,"importing":{"id":"i-1"}`)), atoll.Summary{Import: 1}, false},
		{"import and update", plan(rc(`["update"]`, `,"importing":{"id":"i-1"}`)), atoll.Summary{Change: 1, Import: 1}, false},
		{"importing null", plan(rc(`["create"]`, `,"importing":null`)), atoll.Summary{Add: 1}, false},
		{"mixed", plan(rc(`["create"]`, ""), rc(`["create"]`, ""), rc(`["update"]`, ""), rc(`["delete","create"]`, ""), rc(`["delete"]`, "")),
			atoll.Summary{Add: 3, Change: 1, Destroy: 2}, false},
		{"unknown action counts as a change", plan(rc(`["teleport"]`, "")), atoll.Summary{Change: 1}, false},
		{"no resource_changes", `{"format_version":"1.2"}`, atoll.Summary{}, false},
		{"empty", ``, atoll.Summary{}, true},
		{"null", `null`, atoll.Summary{}, true},
		{"array", `[]`, atoll.Summary{}, true},
		{"truncated", `{"resource_changes":[{"change":{"actions":["create"]`, atoll.Summary{}, true},
		{"wrong type", `{"resource_changes":{"a":1}}`, atoll.Summary{}, true},
		{"future major version", `{"format_version":"2.0","resource_changes":[]}`, atoll.Summary{}, true},
		{"plain text", `Plan: 1 to add`, atoll.Summary{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := terraform.Summarize([]byte(tc.json))
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseSummaryLine(t *testing.T) {
	cases := []struct {
		name   string
		output string
		want   atoll.Summary
		ok     bool
	}{
		{"plan", "Plan: 1 to add, 0 to change, 0 to destroy.", atoll.Summary{Add: 1}, true},
		{"plan counts", "Plan: 3 to add, 2 to change, 10 to destroy.", atoll.Summary{Add: 3, Change: 2, Destroy: 10}, true},
		{"plan import first", "Plan: 1 to import, 0 to add, 1 to change, 0 to destroy.", atoll.Summary{Change: 1, Import: 1}, true},
		{"plan import last", "Plan: 1 to add, 0 to change, 0 to destroy, 2 to import.", atoll.Summary{Add: 1, Import: 2}, true},
		{"plan forget", "Plan: 0 to add, 0 to change, 0 to destroy, 1 to forget.", atoll.Summary{}, true},
		{"in full output", "\nTerraform will perform the following actions:\n\n  # x will be created\n\nPlan: 2 to add, 0 to change, 0 to destroy.\n\nSaved the plan to: tfplan\n",
			atoll.Summary{Add: 2}, true},
		{"colored", "\x1b[1mPlan:\x1b[0m 1 to add, 0 to change, 0 to destroy.", atoll.Summary{Add: 1}, true},
		{"no changes", "No changes. Your infrastructure matches the configuration.", atoll.Summary{}, true},
		{"no changes old wording", "\nNo changes. Infrastructure is up-to-date.\n", atoll.Summary{}, true},
		{"apply", "Apply complete! Resources: 1 added, 0 changed, 0 destroyed.", atoll.Summary{Add: 1}, true},
		{"apply import", "Apply complete! Resources: 1 imported, 0 added, 2 changed, 1 destroyed.", atoll.Summary{Change: 2, Destroy: 1, Import: 1}, true},
		{"destroy", "Destroy complete! Resources: 4 destroyed.", atoll.Summary{Destroy: 4}, true},
		{"last one wins", "Plan: 1 to add, 0 to change, 0 to destroy.\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\nNo changes.", atoll.Summary{}, true},
		{"nothing", "Terraform has been successfully initialized!", atoll.Summary{}, false},
		{"empty", "", atoll.Summary{}, false},
		{"not a count", "Plan: many to add.", atoll.Summary{}, false},
		{"unknown noun", "Plan: 1 to paint, 0 to change, 0 to destroy.", atoll.Summary{}, false},
		{"quoted in prose", "the summary said Plan: 1 to add, 0 to change, 0 to destroy.", atoll.Summary{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := terraform.ParseSummaryLine(tc.output)
			if ok != tc.ok || got != tc.want {
				t.Errorf("got %+v, %v; want %+v, %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestPlanSummaryAgreesWithJSON holds PlanSummary to Terraform itself: for
// real plans of the pinned binary, the summary read from plan's own text is
// the one Summarize counts in `terraform show -json`, or there is none (and
// the caller reads the JSON). Values a configuration controls must never
// pass for the summary, whatever they contain.
func TestPlanSummaryAgreesWithJSON(t *testing.T) {
	const fake = "Plan: 0 to add, 0 to change, 0 to destroy."
	res := func(name string, n int, input string) string {
		return fmt.Sprintf("resource \"terraform_data\" %q {\n  count = %d\n  input = %s\n}\n", name, n, input)
	}
	heredoc := "<<-EOT\n\nNo changes. Your infrastructure matches the configuration.\n" + fake + "\nEOT"
	cases := []struct {
		name  string
		steps []plantest.Step
		want  atoll.Summary
		ok    bool
	}{
		{"add", []plantest.Step{{Files: map[string]string{"main.tf": res("a", 3, `"x"`)}}}, atoll.Summary{Add: 3}, true},
		{"change and destroy", []plantest.Step{
			{Files: map[string]string{"main.tf": res("a", 3, `"x"`)}, Apply: true},
			{Files: map[string]string{"main.tf": res("a", 1, `"y"`)}}}, atoll.Summary{Change: 1, Destroy: 2}, true},
		{"replace", []plantest.Step{
			{Files: map[string]string{"main.tf": "resource \"terraform_data\" \"r\" {\n  triggers_replace = 1\n}\n"}, Apply: true},
			{Files: map[string]string{"main.tf": "resource \"terraform_data\" \"r\" {\n  triggers_replace = 2\n}\n"}}}, atoll.Summary{Add: 1, Destroy: 1}, true},
		{"no changes", []plantest.Step{
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`)}, Apply: true},
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`)}}}, atoll.Summary{}, true},
		{"outputs only", []plantest.Step{
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`)}, Apply: true},
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`) + "output \"o\" {\n  value = 1\n}\n"}}}, atoll.Summary{}, false},
		{"hostile input value", []plantest.Step{{Files: map[string]string{"main.tf": res("a", 2, heredoc)}}}, atoll.Summary{Add: 2}, true},
		{"hostile output value", []plantest.Step{
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`)}, Apply: true},
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`) + res("b", 4, `"y"`) + "output \"o\" {\n  value = " + heredoc + "\n}\n"}}}, atoll.Summary{Add: 4}, true},
		{"hostile output only", []plantest.Step{
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`)}, Apply: true},
			{Files: map[string]string{"main.tf": res("a", 1, `"x"`) + "output \"o\" {\n  value = " + heredoc + "\n}\n"}}}, atoll.Summary{}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			show, text := plantest.ShowJSON(t, tc.steps...)
			fromJSON, err := terraform.Summarize(show)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := terraform.PlanSummary(text)
			if ok != tc.ok || got != tc.want {
				t.Fatalf("PlanSummary = %+v, %v; want %+v, %v; plan output:\n%s", got, ok, tc.want, tc.ok, text)
			}
			if ok && got != fromJSON {
				t.Fatalf("text says %+v, show -json %+v", got, fromJSON)
			}
			if strings.Contains(tc.name, "hostile") && !strings.Contains(text, fake) {
				t.Fatalf("the plan output does not show the hostile value, so the case tests nothing:\n%s", text)
			}
		})
	}
}
