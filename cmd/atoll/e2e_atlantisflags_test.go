package main_test

import (
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// --silence-no-projects: a plan comment that finds no projects is not
// answered (the statuses still say 0/0); without it, it is.
func TestSilenceNoProjects(t *testing.T) {
	for _, silence := range []bool{true, false} {
		e := newE2EConfigured(t, func(c *main.Config) { c.SilenceNoProjects = silence })
		sha := e.open(1, "docs", map[string]string{"README.md": "hello\n"}, "README.md")
		e.comment(1, "atlantis plan")
		e.comment(1, "atlantis unlock")
		first := e.waitComment(1, 1)
		if silence {
			mustContain(t, "the first comment", first, "no locks or plans")
		} else {
			mustContain(t, "the first comment", first, "Ran Plan for 0 projects")
		}
		e.waitStatus(sha, "atlantis/plan", "success", "0/0 projects planned: no Terraform changes.")
	}
}

// --silence-fork-pr-errors: a fork's pull request is still refused, without
// a comment; the next command's answer is the first comment.
func TestSilenceForkPRErrors(t *testing.T) {
	e := newE2EConfigured(t, func(c *main.Config) { c.SilenceForkPRErrors = true })
	sha := e.repo.branch("from-fork", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "from-fork", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}, ForkOwner: "mallory"})
	webhook(t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, 1, "opened", "from-fork", sha, e.base))
	e.comment(1, "atlantis plan")
	e.comment(1, "atlantis unlock")
	mustContain(t, "the first comment", e.waitComment(1, 1), "no locks or plans")
	jobs, err := e.m.DB.Jobs(t.Context(), atoll.JobFilter{Pull: 1})
	if err != nil || len(jobs) != 0 {
		t.Fatalf("a fork pull request ran jobs: %v, %v", jobs, err)
	}
}

// --automerge merges repositories whose atlantis.yaml says nothing about
// it, with --automerge-method; one that says automerge: false is not
// merged.
func TestServerAutomergeDefault(t *testing.T) {
	for _, tc := range []struct {
		config string
		merged bool
	}{
		{"version: 3\nprojects:\n- dir: a\n", true},
		{"version: 3\nautomerge: false\nprojects:\n- dir: a\n", false},
	} {
		files := map[string]string{"atlantis.yaml": tc.config, "a/main.tf": tfProject("a", 1)}
		e := newE2EWith(t, files, func(c *main.Config) { c.Automerge, c.AutomergeMethod = true, "rebase" })
		e.open(1, "scale-a", map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
		mustContain(t, "plan", e.waitComment(1, 1), "Plan: 2 to add")
		e.comment(1, "atlantis apply")
		mustContain(t, "apply", e.waitComment(1, 2), "Apply complete!")
		e.comment(1, "atlantis version")
		third := e.waitComment(1, 3)
		merges := e.gh.mergesOf(1)
		if (len(merges) == 1) != tc.merged || strings.Contains(third, "Automatically merged") != tc.merged || (tc.merged && merges[0].Method != "rebase") {
			t.Fatalf("%q: merges %+v, third comment:\n%s", tc.config, merges, third)
		}
	}
}

// --vcs-status-name renames the status contexts, aggregate and per
// project; no atlantis/* status is set.
func TestVCSStatusName(t *testing.T) {
	e := newE2EConfigured(t, func(c *main.Config) { c.VCSStatusName = "infra-bot" })
	sha := e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "plan", e.waitComment(1, 1), "Plan: 2 to add")
	eventually(t, 30*time.Second, "the renamed statuses", func() bool {
		return e.gh.status(sha, "infra-bot/plan") == "success" && e.gh.status(sha, "infra-bot/plan: staging/default") == "success"
	})
	if st := e.gh.status(sha, "atlantis/plan"); st != "" {
		t.Fatalf("atlantis/plan = %q, want unset", st)
	}
}

// A comment's -var-file outside the repository and a flag of
// --blocked-extra-args are answered with the reason and run nothing.
func TestCommentExtraArgsRefused(t *testing.T) {
	e := newE2EConfigured(t, func(c *main.Config) { c.BlockedExtraArgs = []string{"-target"} })
	e.open(1, "grow", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	e.comment(1, "atlantis plan -d staging -- -var-file=/etc/passwd")
	mustContain(t, "var-file reply", e.waitComment(1, 2), `-var-file "/etc/passwd" is not allowed`, "inside the repository")
	e.comment(1, "atlantis plan -d staging -- -target=terraform_data.app")
	mustContain(t, "blocked flag reply", e.waitComment(1, 3), `terraform flag "-target" is not allowed on this server`)
	jobs, err := e.m.DB.Jobs(t.Context(), atoll.JobFilter{Pull: 1})
	if err != nil || len(jobs) != 1 {
		t.Fatalf("jobs = %d, %v; want the autoplan's only", len(jobs), err)
	}
}

// --discard-approval-on-plan dismisses the pull request's approval before a
// plan comment's plans run (not on autoplan, as in Atlantis); without the
// flag it stands.
func TestDiscardApprovalOnPlan(t *testing.T) {
	for _, discard := range []bool{true, false} {
		e := newE2EConfigured(t, func(c *main.Config) { c.DiscardApprovalOnPlan = discard })
		sha := e.repo.branch("grow", map[string]string{"staging/main.tf": tfProject("staging", 2)})
		e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "grow", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}, Approved: true})
		webhook(t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, 1, "opened", "grow", sha, e.base))
		mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
		if p, _ := e.gh.pullState(1); p.Dismissals != 0 {
			t.Fatalf("discard=%v: autoplan dismissed the approval", discard)
		}
		e.comment(1, "atlantis plan -d staging")
		mustContain(t, "plan comment", e.waitComment(1, 2), "Plan: 2 to add")
		p, _ := e.gh.pullState(1)
		if want := map[bool]int{true: 1, false: 0}[discard]; p.Dismissals != want || p.Approved == discard {
			t.Fatalf("discard=%v: dismissals %d, approved %v", discard, p.Dismissals, p.Approved)
		}
	}
}
