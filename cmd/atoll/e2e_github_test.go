package main_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

func tfProject(name string, count int) string {
	return fmt.Sprintf(`resource "terraform_data" "app" {
  count = %d
  input = "%s-${count.index}"
}
`, count, name)
}

type e2e struct {
	t        *testing.T
	repo     *gitRepo
	cloneURL string
	gh       *fakeGitHub
	dataDir  string
	m        *main.Main
	base     string
	// configure, if set, is applied to the Config at each start.
	configure func(*main.Config)
}

func newE2E(t *testing.T) *e2e { return newE2EConfigured(t, nil) }

// newE2EConfigured is newE2E with more Config (a server-side repo config).
func newE2EConfigured(t *testing.T, configure func(*main.Config)) *e2e {
	testEnv(t)
	e := &e2e{t: t, gh: newFakeGitHub(t), dataDir: t.TempDir(), configure: configure}
	e.repo = newGitRepo(t, map[string]string{
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
		"modules/x/main.tf":  "output \"x\" {\n  value = 1\n}\n",
	})
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	e.start()
	return e
}

func (e *e2e) start() {
	e.m = startMain(e.t, e.dataDir, func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, e.gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.APISecret = "api-secret-for-tests"
		if e.configure != nil {
			e.configure(c)
		}
	})
	e.t.Cleanup(func() { e.m.Close() })
}

// open opens pull number from a new branch changing files.
func (e *e2e) open(number int, branch string, files map[string]string, changed ...string) string {
	sha := e.repo.branch(branch, files)
	e.gh.setPull(number, fakePull{HeadSHA: sha, HeadRef: branch, BaseSHA: e.base, BaseRef: "main", Files: changed})
	resp := webhook(e.t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, number, "opened", branch, sha, e.base))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("opened webhook: status %d", resp.StatusCode)
	}
	return sha
}

func (e *e2e) comment(number int, body string) {
	resp := webhook(e.t, e.m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(e.cloneURL, number, body))
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("comment webhook: status %d", resp.StatusCode)
	}
}

// waitComment waits for the n-th comment (1-based) on pull and returns it.
func (e *e2e) waitComment(pull, n int) string {
	e.t.Helper()
	eventually(e.t, 90*time.Second, fmt.Sprintf("comment %d on #%d", n, pull), func() bool { return len(e.gh.pullComments(pull)) >= n })
	return e.gh.pullComments(pull)[n-1]
}

func mustContain(t *testing.T, what, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Fatalf("%s does not contain %q:\n%s", what, sub, s)
		}
	}
}

func TestGitHubPullRequestWorkflow(t *testing.T) {
	e := newE2EConfigured(t, func(c *main.Config) { c.HidePrevPlanComments = true })

	// Opening a pull request autoplans the modified project, sets statuses
	// and takes the lock.
	sha1 := e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	plan := e.waitComment(1, 1)
	t.Logf("autoplan comment:\n%s", plan)
	mustContain(t, "autoplan comment", plan, "staging", "Plan: 2 to add, 0 to change, 0 to destroy", "atlantis apply -d staging", "<details>")
	eventually(t, 10*time.Second, "plan statuses", func() bool {
		return e.gh.status(sha1, "atlantis/plan: staging/default") == "success" && e.gh.status(sha1, "atlantis/plan") == "success"
	})
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 1 || locks[0].Dir != "staging" || locks[0].Pull != 1 || locks[0].Repo != "acme/infra" {
		t.Fatalf("locks after autoplan = %+v", locks)
	}
	// The comment went out on plan's own summary; the plan's JSON (the
	// plan page's resource view) follows it.
	var planJobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &planJobs)
	if len(planJobs) != 1 {
		t.Fatalf("plan jobs = %+v", planJobs)
	}
	eventually(t, 10*time.Second, "the plan's JSON stored after its comment", func() bool {
		p, err := e.m.DB.PlanByJob(context.Background(), planJobs[0].ID)
		if err != nil {
			t.Fatal(err)
		}
		full, err := e.m.DB.Plan(context.Background(), p.ID)
		return err == nil && strings.Contains(string(full.ShowJSON), `"terraform_data.app[1]"`)
	})

	// A plan comment for another dir plans it and, with
	// --hide-prev-plan-comments, hides the older plan comment.
	e.comment(1, "atlantis plan -d production --verbose")
	plan = e.waitComment(1, 2)
	mustContain(t, "plan -d comment", plan, "production", "Plan: 1 to add", "atlantis apply -d production", "$ terraform plan")
	// Hidden right after the new results are posted.
	eventually(t, 10*time.Second, "the earlier plan comment hidden", func() bool { return e.gh.minimizeCalls() > 0 })

	// A second pull request touching staging is refused the lock, with a link.
	e.open(2, "other-staging", map[string]string{"staging/main.tf": tfProject("staging", 3)}, "staging/main.tf")
	conflict := e.waitComment(2, 1)
	mustContain(t, "lock conflict comment", conflict, "#1", "https://github.com/acme/infra/pull/1")

	// Bad input gets a clear answer and runs nothing.
	e.comment(1, "atlantis plan -d ../etc")
	bad := e.waitComment(1, 3)
	mustContain(t, "bad -d comment", bad, "..", "Usage")

	// Restart: locks, plans and logs survive, and apply uses the stored plans.
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &jobs)
	if len(jobs) != 2 {
		t.Fatalf("plan jobs = %+v", jobs)
	}
	e.m.Close()
	e.start()
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 2 {
		t.Fatalf("locks after restart = %+v", locks)
	}
	var job atoll.Job
	getJSON(t, fmt.Sprintf("%s/api/v1/jobs/%d", e.m.URL, jobs[1].ID), &job)
	if job.State != atoll.JobSucceeded || job.Summary == nil || job.Summary.Add != 2 {
		t.Fatalf("staging plan job after restart = %+v", job)
	}
	logResp, err := authClient.Get(fmt.Sprintf("%s/api/v1/jobs/%d/log", e.m.URL, job.ID))
	if err != nil {
		t.Fatal(err)
	}
	logText := readAll(t, logResp)
	mustContain(t, "job log after restart", logText, "terraform_data.app[1] will be created", "Plan: 2 to add")

	e.comment(1, "atlantis apply")
	apply := e.waitComment(1, 4)
	mustContain(t, "apply comment", apply, "Apply complete!", "staging", "production")
	eventually(t, 10*time.Second, "apply status", func() bool { return e.gh.status(sha1, "atlantis/apply") == "success" })
	var applied []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?pull=1&kind=apply&state=succeeded", &applied)
	if len(applied) != 2 {
		t.Fatalf("succeeded apply jobs = %+v", applied)
	}

	// Applying again finds nothing to apply: a plan applies once.
	e.comment(1, "atlantis apply")
	again := e.waitComment(1, 5)
	mustContain(t, "second apply", again, "0 projects")

	// Closing the pull request releases its locks; #2 can then plan.
	resp := webhook(t, e.m.URL, "pull_request", "pull_request.closed.json", webhookSecret, pullEvent(e.cloneURL, 1, "closed", "scale-staging", sha1, e.base))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("closed webhook: %d", resp.StatusCode)
	}
	eventually(t, 10*time.Second, "locks released", func() bool {
		getJSON(t, e.m.URL+"/api/v1/locks", &locks)
		return len(locks) == 0
	})
	e.comment(2, "atlantis plan")
	mustContain(t, "plan after unlock", e.waitComment(2, 2), "Plan: ", "atlantis apply -d staging")
}

func TestWebhookSignatureRejected(t *testing.T) {
	e := newE2E(t)
	count := func() int {
		n, err := e.m.DB.CountRequests(t.Context(), atoll.RequestQueued)
		if err != nil {
			t.Fatal(err)
		}
		m, _ := e.m.DB.CountRequests(t.Context(), atoll.RequestDone)
		return n + m
	}
	before := count()
	cases := []struct{ name, secret, sig string }{
		{"wrong secret", "not-the-secret", ""},
		{"missing signature", "", "-"},
		{"sha1 prefix", "", "sha1=0123"},
		{"garbage", "", "sha256=zz"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := []byte(`{"action":"opened"}`)
			sig := c.sig
			switch {
			case c.secret != "":
				raw := webhookBody(t, "pull_request.opened.json", pullEvent(e.cloneURL, 9, "opened", "x", "abc", e.base))
				body, sig = raw, sign(raw, c.secret)
			case sig == "-":
				sig = ""
			}
			resp := postWebhook(t, e.m.URL, "pull_request", body, sig)
			if resp.StatusCode != http.StatusUnauthorized {
				t.Fatalf("status = %d, want 401", resp.StatusCode)
			}
		})
	}
	if after := count(); after != before {
		t.Fatalf("requests queued by rejected webhooks: %d -> %d", before, after)
	}
	var pulls []map[string]any
	getJSON(t, e.m.URL+"/api/v1/pulls", &pulls)
	if len(pulls) != 0 {
		t.Fatalf("pulls recorded from rejected webhooks: %v", pulls)
	}
}

func TestNewCommitMakesPlanStale(t *testing.T) {
	e := newE2E(t)
	e.open(1, "feature", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan", e.waitComment(1, 1), "Plan: 2 to add")
	// A commit lands on the branch; GitHub reports the new head.
	e.repo.git("checkout", "--quiet", "feature")
	sha2 := e.repo.commit("more", map[string]string{"staging/main.tf": tfProject("staging", 4)})
	e.repo.git("checkout", "--quiet", "main")
	e.gh.setPull(1, fakePull{HeadSHA: sha2, HeadRef: "feature", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}})
	e.comment(1, "atlantis apply")
	stale := e.waitComment(1, 2)
	mustContain(t, "stale apply", stale, "was made for commit", "Run `atlantis plan` again")
	var applied []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?kind=apply&state=succeeded", &applied)
	if len(applied) != 0 {
		t.Fatalf("a stale plan was applied: %+v", applied)
	}
}

func webhookBody(t testing.TB, name string, edit func(map[string]any)) []byte {
	t.Helper()
	raw := mustRead(t, fixture(name))
	var p map[string]any
	jsonUnmarshal(t, raw, &p)
	edit(p)
	return jsonMarshal(t, p)
}

// A broken atlantis.yaml is reported on the pull request with its line, and
// nothing is planned or locked.
func TestInvalidConfigIsCommented(t *testing.T) {
	e := newE2E(t)
	e.open(1, "bad-config", map[string]string{
		"atlantis.yaml":   "version: 3\nprojects:\n  - dir: staging\n    workspace: default\n  - dir: ../escape\n",
		"staging/main.tf": tfProject("staging", 2),
	}, "atlantis.yaml", "staging/main.tf")
	c := e.waitComment(1, 1)
	mustContain(t, "config error comment", c, "atlantis.yaml line 5", "..")
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobs)
	if len(locks) != 0 || len(jobs) != 0 {
		t.Fatalf("a bad config planned or locked: locks %+v jobs %+v", locks, jobs)
	}
	eventually(t, 10*time.Second, "failure status", func() bool {
		return e.gh.status(e.repo.git("rev-parse", "bad-config"), "atlantis/plan") == "failure"
	})
}

// Pull requests from forks are refused unless --allow-fork-prs: their author
// could otherwise run code through Terraform with the server's credentials.
func TestForkPullRequestRefused(t *testing.T) {
	e := newE2E(t)
	sha := e.repo.branch("from-fork", map[string]string{"staging/main.tf": tfProject("staging", 2)})
	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: "from-fork", BaseSHA: e.base, BaseRef: "main", Files: []string{"staging/main.tf"}, ForkOwner: "mallory"})
	webhook(t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, 1, "opened", "from-fork", sha, e.base))
	mustContain(t, "fork refusal", e.waitComment(1, 1), "forks", "--allow-fork-prs")
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs", &jobs)
	if len(jobs) != 0 {
		t.Fatalf("a fork pull request ran jobs: %+v", jobs)
	}
}

// Custom workflows: extra_args and env steps of the built-in steps are
// honoured; terraform_version is checked; run steps run.
func TestCustomWorkflowsAndVersions(t *testing.T) {
	e := newE2EConfigured(t, func(c *main.Config) {
		allowRepoSettings(c)
		c.TFDownload = false
	})
	withVar := `variable "n" {
  type = number
}
variable "label" {
  type = string
}
resource "terraform_data" "app" {
  count = var.n
  input = var.label
}
`
	config := `version: 3
projects:
  - name: sized
    dir: staging
    workflow: sized
  - name: scripted
    dir: production
    workflow: scripted
  - name: pinned
    dir: modules/x
    terraform_version: "~> 1.4.0"
workflows:
  sized:
    plan:
      steps:
        - env:
            name: TF_VAR_label
            value: from-env-step
        - init
        - plan:
            extra_args: ["-var", "n=3"]
  scripted:
    plan:
      steps:
        - run: echo hello
        - plan
`
	e.open(1, "workflows", map[string]string{"atlantis.yaml": config, "staging/main.tf": withVar}, "staging/main.tf")
	c := e.waitComment(1, 1)
	mustContain(t, "workflow plan", c, "Plan: 3 to add", "from-env-step")
	e.comment(1, "atlantis plan -p scripted")
	mustContain(t, "run step", e.waitComment(1, 2), "hello", "Plan: 1 to add")
	e.comment(1, "atlantis plan -p pinned")
	mustContain(t, "version refused", e.waitComment(1, 3), "asks for Terraform ~> 1.4.0 (terraform_version)", "installed: 1.5.7; downloads are off")
}

// A plan too long for one GitHub comment (65,536 characters) is split into
// several, each accepted by the API, with the summary and apply command.
func TestLongPlanIsSplit(t *testing.T) {
	e := newE2E(t)
	big := `resource "terraform_data" "many" {
  count = 300
  input = "${count.index}-` + strings.Repeat("x", 200) + `"
}
`
	e.open(1, "big", map[string]string{"staging/main.tf": big}, "staging/main.tf")
	first := e.waitComment(1, 1)
	eventually(t, 30*time.Second, "all parts", func() bool {
		cs := e.gh.pullComments(1)
		return len(cs) > 1 && strings.Contains(cs[len(cs)-1], "atlantis apply -d staging")
	})
	parts := e.gh.pullComments(1)
	mustContain(t, "first part", first, "Ran Plan for dir: `staging`")
	all := strings.Join(parts, "\n")
	mustContain(t, "split plan", all, "Plan: 300 to add", "terraform_data.many[299] will be created")
	for i, p := range parts {
		if len(p) > 65536 {
			t.Fatalf("part %d is %d characters", i+1, len(p))
		}
	}
}
