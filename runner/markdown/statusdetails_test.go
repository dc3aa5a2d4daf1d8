package markdown_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

func TestStatusDetails(t *testing.T) {
	var many strings.Builder
	for i := range 25 {
		fmt.Fprintf(&many, "  # null_resource.r[%d] will be created\n  + resource \"null_resource\" \"r\" {}\n", i)
	}
	many.WriteString("\nPlan: 25 to add, 0 to change, 0 to destroy.\n")
	tests := []struct {
		name       string
		res        markdown.ProjectResult
		want       []string
		wantAbsent []string
	}{
		{"plan", markdown.ProjectResult{Command: atoll.JobPlan, Summary: &atoll.Summary{Add: 1, Change: 2, Destroy: 3},
			Output: "Terraform will perform the following actions:\n\n  # aws_s3_bucket.b will be updated in-place\n  ~ resource \"aws_s3_bucket\" \"b\" {\n      ~ tags = {}\n    }\n"},
			[]string{"**+1 ~2 -3**", "```\n# aws_s3_bucket.b will be updated in-place\nPlan: 1 to add, 2 to change, 3 to destroy.\n```"},
			[]string{"~ tags"}},
		{"many resources", markdown.ProjectResult{Command: atoll.JobPlan, Summary: &atoll.Summary{Add: 25}, Output: many.String()},
			[]string{"**+25 ~0 -0**", "# null_resource.r[19] will be created\n... and 5 more\nPlan: 25 to add"},
			[]string{"r[20]"}},
		{"no changes", markdown.ProjectResult{Command: atoll.JobPlan, Summary: &atoll.Summary{}, Output: "No changes."},
			[]string{"**+0 ~0 -0**", "No changes. Your infrastructure matches the configuration."}, nil},
		{"failure", markdown.ProjectResult{Command: atoll.JobPlan, Error: "exit status 1\n\nError: Invalid resource type\n\n  on main.tf line 1"},
			[]string{"```\nexit status 1\n\nError: Invalid resource type\n\n  on main.tf line 1\n```"},
			[]string{"**+"}},
		{"apply", markdown.ProjectResult{Command: atoll.JobApply, Summary: &atoll.Summary{Add: 1}, Output: "Apply complete! Resources: 1 added, 0 changed, 0 destroyed."},
			[]string{"**+1 ~0 -0**"}, []string{"Plan:", "```"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := markdown.StatusDetails(tc.res)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("missing %q in:\n%s", w, got)
				}
			}
			for _, w := range tc.wantAbsent {
				if strings.Contains(got, w) {
					t.Errorf("unexpected %q in:\n%s", w, got)
				}
			}
		})
	}
}
