package markdown_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
)

const planOutput = `
Terraform will perform the following actions:

  # terraform_data.a will be created
  + resource "terraform_data" "a" {
      + id     = (known after apply)
      + input  = "hello"
    }

Plan: 1 to add, 0 to change, 0 to destroy.
`

func one(t *testing.T, r markdown.Renderer, command string, res markdown.ProjectResult) string {
	t.Helper()
	pieces := r.Results(command, []markdown.ProjectResult{res}, marker)
	if len(pieces) != 1 {
		t.Fatalf("got %d pieces, want 1", len(pieces))
	}
	checkPieces(t, pieces, markdown.DefaultMaxCommentLen)
	return pieces[0]
}

func TestPlanSingleProject(t *testing.T) {
	got := one(t, markdown.Renderer{}, "plan", markdown.ProjectResult{
		Dir: "envs/prod", Workspace: "default", Command: "plan",
		Output: planOutput, Summary: &atoll.Summary{Add: 1}, HasChanges: true,
		JobURL: "https://atoll.example.com/jobs/7",
	})
	mustContain(t, got,
		marker,
		"Ran Plan for dir: `envs/prod` workspace: `default`\n",
		"<details><summary>Show Output</summary>\n\n```diff\n",
		"+   resource \"terraform_data\" \"a\" {", // signs moved for diff coloring
		"\nPlan: 1 to add, 0 to change, 0 to destroy.\n",
		"`atlantis apply -d envs/prod`",
		"`atlantis plan -d envs/prod`",
		"To **apply** all unapplied plans from this pull request, comment: `atlantis apply`",
		"all plans and locks from this pull request, comment: `atlantis unlock`",
		"(https://atoll.example.com/jobs/7)",
	)
	mustNotContain(t, got, "-w default", "Ran Plan for 1 projects")
}

func TestApplyCommandFlags(t *testing.T) {
	cases := []struct {
		name string
		r    markdown.Renderer
		res  markdown.ProjectResult
		want string
	}{
		{"default workspace omits -w", markdown.Renderer{}, markdown.ProjectResult{Dir: "app", Workspace: "default"}, "`atlantis apply -d app`"},
		{"empty workspace is default", markdown.Renderer{}, markdown.ProjectResult{Dir: "app"}, "`atlantis apply -d app`"},
		{"other workspace", markdown.Renderer{}, markdown.ProjectResult{Dir: "app", Workspace: "staging"}, "`atlantis apply -d app -w staging`"},
		{"root dir", markdown.Renderer{}, markdown.ProjectResult{Dir: "."}, "`atlantis apply -d .`"},
		{"named project", markdown.Renderer{}, markdown.ProjectResult{Dir: "app", Workspace: "staging", Project: "app-staging"}, "`atlantis apply -p app-staging`"},
		{"executable", markdown.Renderer{Executable: "atoll"}, markdown.ProjectResult{Dir: "app"}, "`atoll apply -d app`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.res.Command, tc.res.Output, tc.res.HasChanges = "plan", planOutput, true
			got := one(t, tc.r, "plan", tc.res)
			mustContain(t, got, tc.want)
			if tc.res.Project != "" {
				mustContain(t, got, "Ran Plan for project: `app-staging` dir: `app` workspace: `staging`")
				mustNotContain(t, got, "-d app")
			}
		})
	}
}

func TestPlanSummaryLine(t *testing.T) {
	cases := []struct {
		name string
		res  markdown.ProjectResult
		want string
	}{
		{"from summary", markdown.ProjectResult{Summary: &atoll.Summary{Add: 2, Change: 1, Destroy: 3}, HasChanges: true},
			"Plan: 2 to add, 1 to change, 3 to destroy."},
		{"with imports", markdown.ProjectResult{Summary: &atoll.Summary{Import: 1, Change: 1}, HasChanges: true},
			"Plan: 1 to import, 0 to add, 1 to change, 0 to destroy."},
		{"no changes", markdown.ProjectResult{Summary: &atoll.Summary{}, Output: "\nNo changes. Your infrastructure matches the configuration.\n"},
			"No changes. Your infrastructure matches the configuration."},
		{"parsed from output", markdown.ProjectResult{Output: planOutput, HasChanges: true},
			"Plan: 1 to add, 0 to change, 0 to destroy."},
		{"unknown without changes", markdown.ProjectResult{Output: "something"},
			"No changes. Your infrastructure matches the configuration."},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.res.Dir, tc.res.Command = "app", "plan"
			got := one(t, markdown.Renderer{}, "plan", tc.res)
			mustContain(t, got, "\n"+tc.want+"\n")
		})
	}
}

func TestPlanSeveralProjects(t *testing.T) {
	pieces := markdown.Renderer{}.Results("plan", []markdown.ProjectResult{
		{Dir: "a", Workspace: "default", Command: "plan", Output: planOutput, HasChanges: true},
		{Dir: "b", Workspace: "prod", Command: "plan", Output: "No changes.", Summary: &atoll.Summary{}},
	}, marker)
	if len(pieces) != 1 {
		t.Fatalf("got %d pieces", len(pieces))
	}
	checkPieces(t, pieces, markdown.DefaultMaxCommentLen)
	got := pieces[0]
	mustContain(t, got,
		"Ran Plan for 2 projects:\n\n1. dir: `a` workspace: `default`\n2. dir: `b` workspace: `prod`\n",
		"### 1. dir: `a` workspace: `default`",
		"### 2. dir: `b` workspace: `prod`",
		"`atlantis apply -d a`",
		"`atlantis apply -d b -w prod`",
		"Plan: 1 to add, 0 to change, 0 to destroy.",
		"No changes. Your infrastructure matches the configuration.",
		"comment: `atlantis apply`",
		"comment: `atlantis unlock`",
	)
	if strings.Index(got, "### 1.") > strings.Index(got, "### 2.") {
		t.Error("projects out of order")
	}
	if strings.Count(got, "`atlantis unlock`") != 1 {
		t.Error("footer repeated")
	}
}

func TestPlanError(t *testing.T) {
	got := one(t, markdown.Renderer{}, "plan", markdown.ProjectResult{
		Dir: "app", Command: "plan",
		Error:  "terraform plan: exit code 1\nError: Unsupported block type",
		Output: "Error: Unsupported block type",
	})
	mustContain(t, got, "**Plan Error**\n\n```\nterraform plan: exit code 1\nError: Unsupported block type\n```\n")
	// Nothing was planned, so there is nothing to apply.
	mustNotContain(t, got, "atlantis apply", "Show Output")
}

func TestLockConflict(t *testing.T) {
	got := one(t, markdown.Renderer{}, "plan", markdown.ProjectResult{
		Dir: "app", Command: "plan",
		LockedBy: &markdown.LockHolder{Pull: 17, URL: "https://github.com/acme/infra/pull/17", User: "alice"},
	})
	mustContain(t, got,
		"**Plan Failed**: This project is currently locked by an unapplied plan from pull [#17](https://github.com/acme/infra/pull/17)",
		"delete the lock from [#17](https://github.com/acme/infra/pull/17) or apply that plan and merge the pull request.",
		"@alice",
		"`atlantis plan -d app`",
	)
	mustNotContain(t, got, "atlantis apply")
}

func TestApplyResult(t *testing.T) {
	out := "terraform_data.a: Creating...\nterraform_data.a: Creation complete after 0s\n\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n"
	got := one(t, markdown.Renderer{}, "apply", markdown.ProjectResult{
		Dir: "app", Workspace: "staging", Command: "apply", Output: out,
	})
	mustContain(t, got,
		"Ran Apply for dir: `app` workspace: `staging`\n",
		"<details><summary>Show Output</summary>",
		"terraform_data.a: Creation complete after 0s\n",
		"\nApply complete! Resources: 1 added, 0 changed, 0 destroyed.\n",
	)
	mustNotContain(t, got, "`atlantis unlock`", "To **apply**")

	failed := one(t, markdown.Renderer{}, "apply", markdown.ProjectResult{Dir: "app", Command: "apply", Error: "plan is stale"})
	mustContain(t, failed, "**Apply Error**", "plan is stale")
}

func TestOutputWithFences(t *testing.T) {
	// Heredocs in plans can contain Markdown fences; they must stay inside.
	out := "  + content = <<-EOT\n        ```\n        ````sh\n        EOT\n"
	got := one(t, markdown.Renderer{}, "plan", markdown.ProjectResult{Dir: "d", Command: "plan", Output: out, HasChanges: true})
	mustContain(t, got, "`````diff\n", "        ````sh\n")
	pieces := markdown.Renderer{MaxCommentLen: 300}.Results("plan", []markdown.ProjectResult{
		{Dir: "d", Command: "plan", Output: strings.Repeat(out, 10), HasChanges: true},
	}, marker)
	if len(pieces) < 2 {
		t.Fatalf("want a split, got %d pieces", len(pieces))
	}
	checkPieces(t, pieces, 300)
}

func TestMessages(t *testing.T) {
	r := markdown.Renderer{}
	got := r.Error("apply", "Pull request must be approved before running apply.", marker)
	if !strings.HasPrefix(got, marker+"\n") {
		t.Errorf("no marker: %q", got)
	}
	mustContain(t, got, "**Apply Failed**: Pull request must be approved before running apply.")

	long := markdown.Renderer{MaxCommentLen: 200}.Error("plan", strings.Repeat("é", 500), marker)
	if len(long) > 200 || !strings.HasPrefix(long, marker) || !strings.Contains(long, "truncated") {
		t.Errorf("long error not cut to 200 bytes: %d %q", len(long), long)
	}

	mustContain(t, r.Unlocked(3, marker), marker, "3 locks", "`atlantis plan`")
	mustContain(t, r.Unlocked(1, marker), "1 lock ")
	mustContain(t, r.Unlocked(0, marker), "no locks")
	mustContain(t, r.Closed([]string{"app/default", "web"}, marker), marker, "`app/default`", "`web`")
}
