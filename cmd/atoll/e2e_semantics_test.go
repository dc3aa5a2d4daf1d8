package main_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// newE2EWith is newE2E with the repository's files and extra server flags.
func newE2EWith(t *testing.T, files map[string]string, configure func(*main.Config)) *e2e {
	testEnv(t)
	e := &e2e{t: t, gh: newFakeGitHub(t), dataDir: t.TempDir()}
	e.repo = newGitRepo(t, files)
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	e.m = startMain(t, e.dataDir, func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, e.gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		if configure != nil {
			configure(c)
		}
	})
	t.Cleanup(func() { e.m.Close() })
	return e
}

// waitStatus waits until context's latest status on sha has state and a
// description containing desc.
func (e *e2e) waitStatus(sha, context, state, desc string) {
	e.t.Helper()
	eventually(e.t, 30*time.Second, context+" "+state+" "+desc, func() bool {
		s := e.gh.latestStatus(sha, context)
		return s.State == state && strings.Contains(s.Description, desc)
	})
}

// atlantis/apply counts the pull request's projects, not the request's jobs:
// it stays pending until every planned change is applied, and passes when
// plans find no changes or no projects. After a plan with changes it is not
// set, as in Atlantis on GitHub.
func TestApplyStatusCountsEveryProjectOfThePull(t *testing.T) {
	e := newE2E(t)
	config := "version: 3\nprojects:\n  - name: a\n    dir: staging\n  - name: b\n    dir: production\n"
	sha := e.open(1, "both", map[string]string{
		"atlantis.yaml":      config,
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "atlantis apply -p a", "atlantis apply -p b")

	e.comment(1, "atlantis apply -p a")
	mustContain(t, "apply -p a", e.waitComment(1, 2), "Apply complete!")
	e.waitStatus(sha, "atlantis/apply", "pending", "1/2 projects applied.")
	// Requests of a pull request run in order: the plan was reported and
	// finished before the apply began, so this is everything the plan set.
	if h := e.gh.statusHistory(sha, "atlantis/apply"); len(h) == 0 || !strings.HasPrefix(h[0].Description, "Applying") {
		t.Fatalf("atlantis/apply was set before the apply: %+v", h)
	}

	e.comment(1, "atlantis apply -p b")
	mustContain(t, "apply -p b", e.waitComment(1, 3), "Apply complete!")
	e.waitStatus(sha, "atlantis/apply", "success", "2/2 projects applied successfully.")

	// Release the locks, then plans without changes and without projects.
	resp := webhook(t, e.m.URL, "pull_request", "pull_request.closed.json", webhookSecret, pullEvent(e.cloneURL, 1, "closed", "both", sha, e.base))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("closed webhook: %d", resp.StatusCode)
	}
	noChange := e.open(2, "no-resources", map[string]string{"staging/main.tf": "locals {\n  x = 1\n}\n"}, "staging/main.tf")
	mustContain(t, "no-change plan", e.waitComment(2, 1), "No changes.")
	e.waitStatus(noChange, "atlantis/apply", "success", "1/1 projects up to date.")

	docs := e.open(3, "docs", map[string]string{"README.md": "docs\n"}, "README.md")
	e.waitStatus(docs, "atlantis/plan", "success", "0/0")
	e.waitStatus(docs, "atlantis/apply", "success", "0/0 projects applied successfully.")
}

// Drafts are not autoplanned (no --allow-draft-prs); marking one ready for
// review autoplans it.
func TestDraftPullRequestAutoplansWhenReady(t *testing.T) {
	e := newE2E(t)
	sha := e.repo.branch("draft", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "draft", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}})
	opened := pullEvent(e.cloneURL, 1, "opened", "draft", sha, e.base)
	resp := webhook(t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, func(p map[string]any) {
		opened(p)
		p["pull_request"].(map[string]any)["draft"] = true
	})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("draft opened webhook: %d", resp.StatusCode)
	}
	// The webhook is answered after its request is committed: none was.
	var requests int
	for _, state := range []string{atoll.RequestQueued, atoll.RequestRunning, atoll.RequestDone} {
		n, err := e.m.DB.CountRequests(t.Context(), state)
		if err != nil {
			t.Fatal(err)
		}
		requests += n
	}
	if requests != 0 {
		t.Fatalf("a draft queued %d request(s)", requests)
	}

	resp = webhook(t, e.m.URL, "pull_request", "octokit/pull_request.ready_for_review.json", webhookSecret,
		pullEvent(e.cloneURL, 1, "ready_for_review", "draft", sha, e.base))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("ready_for_review webhook: %d", resp.StatusCode)
	}
	mustContain(t, "autoplan when ready", e.waitComment(1, 1), "Plan: 2 to add", "atlantis apply -d staging")
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?pull=1&kind=plan", &jobs)
	if len(jobs) != 1 {
		t.Fatalf("plan jobs = %+v, want the one autoplan", jobs)
	}
}

// undiverged, as in Atlantis: only with the merge checkout strategy, and
// only base commits that touch the project's when_modified files count, so
// in a monorepo a merge to main for project b does not block applying a.
func TestUndivergedOnlyCountsTheProjectsFiles(t *testing.T) {
	files := map[string]string{
		"atlantis.yaml": "version: 3\nprojects:\n  - name: a\n    dir: a\n    apply_requirements: [undiverged]\n" +
			"  - name: b\n    dir: b\n    apply_requirements: [undiverged]\n",
		"a/main.tf": tfProject("a", 1),
		"b/main.tf": tfProject("b", 1),
	}
	// moveMain commits on main and tells the fake the base moved.
	moveMain := func(e *e2e, head string, changed map[string]string) {
		e.base = e.repo.commit("on main", changed)
		e.gh.setPull(1, fakePull{HeadSHA: head, HeadRef: "change-a", BaseSHA: e.base, BaseRef: "main", Files: []string{"a/main.tf"}})
	}

	t.Run("merge strategy", func(t *testing.T) {
		e := newE2EWith(t, files, func(c *main.Config) { c.CheckoutStrategy = "merge"; allowRepoSettings(c) })
		head := e.open(1, "change-a", map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
		mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add", "atlantis apply -p a")

		// Another project's change on main does not block a.
		moveMain(e, head, map[string]string{"b/main.tf": tfProject("b", 3)})
		e.comment(1, "atlantis apply -p a")
		mustContain(t, "apply after b moved", e.waitComment(1, 2), "Apply complete!")

		// A change to a's files on main after a's plan does.
		e.comment(1, "atlantis plan -p a")
		mustContain(t, "plan again", e.waitComment(1, 3), "atlantis apply -p a")
		moveMain(e, head, map[string]string{"a/extra.tf": `resource "terraform_data" "extra" {}` + "\n"})
		e.comment(1, "atlantis apply -p a")
		refused := e.waitComment(1, 4)
		t.Logf("refused apply:\n%s", refused)
		mustContain(t, "apply after a moved", refused, "Cannot apply", "main has changed this project since it was planned", "`a/extra.tf`", "atlantis plan")
		if strings.Contains(refused, "Apply complete!") {
			t.Fatalf("a diverged plan was applied:\n%s", refused)
		}

		// Planning again merges the new main: the apply may go ahead.
		e.comment(1, "atlantis plan -p a")
		mustContain(t, "plan on the new main", e.waitComment(1, 5), "Plan: 3 to add")
		e.comment(1, "atlantis apply -p a")
		mustContain(t, "apply after planning again", e.waitComment(1, 6), "Apply complete!")
	})

	t.Run("branch strategy", func(t *testing.T) {
		// A branch checkout plans the head as is: Atlantis never finds it
		// diverged, whatever main does.
		e := newE2EWith(t, files, allowRepoSettings)
		head := e.open(1, "change-a", map[string]string{"a/main.tf": tfProject("a", 2)}, "a/main.tf")
		mustContain(t, "autoplan", e.waitComment(1, 1), "atlantis apply -p a")
		moveMain(e, head, map[string]string{"a/extra.tf": `resource "terraform_data" "extra" {}` + "\n"})
		e.comment(1, "atlantis apply -p a")
		mustContain(t, "apply with branch strategy", e.waitComment(1, 2), "Apply complete!")
	})
}

// A plan comment without -d, -w or -p plans every modified project, those
// with autoplan disabled too; autoplan leaves them out (as in Atlantis).
func TestPlanCommentIncludesAutoplanDisabledProjects(t *testing.T) {
	e := newE2E(t)
	config := "version: 3\nprojects:\n  - name: manual\n    dir: production\n    autoplan:\n      enabled: false\n  - name: auto\n    dir: staging\n"
	e.open(1, "both", map[string]string{
		"atlantis.yaml":      config,
		"staging/main.tf":    tfProject("staging", 2),
		"production/main.tf": tfProject("production", 2),
	}, "staging/main.tf", "production/main.tf")
	autoplan := e.waitComment(1, 1)
	mustContain(t, "autoplan", autoplan, "atlantis apply -p auto")
	if strings.Contains(autoplan, "-p manual") {
		t.Fatalf("autoplan planned a project with autoplan disabled:\n%s", autoplan)
	}
	e.comment(1, "atlantis plan")
	mustContain(t, "plan comment", e.waitComment(1, 2), "atlantis apply -p auto", "atlantis apply -p manual")
}
