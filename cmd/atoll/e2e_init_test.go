package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// initE2E is a server on one GitHub repository, with plans of one pull
// request running one at a time, so that they share one checkout.
type initE2E struct {
	t        *testing.T
	repo     *gitRepo
	gh       *fakeGitHub
	cloneURL string
	base     string
	m        *main.Main
}

func newInitE2E(t *testing.T, files map[string]string) *initE2E {
	testEnv(t)
	e := &initE2E{t: t, gh: newFakeGitHub(t), repo: newGitRepo(t, files)}
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	e.m = startMain(t, t.TempDir(), func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, e.gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		allowRepoSettings(c) // the tests' atlantis.yaml define workflows
	})
	t.Cleanup(func() { e.m.Close() })
	return e
}

// open opens pull request 1 from branch with files changed.
func (e *initE2E) open(branch string, files map[string]string) {
	sha := e.repo.branch(branch, files)
	var changed []string
	for f := range files {
		changed = append(changed, f)
	}
	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: branch, BaseSHA: e.base, BaseRef: "main", Files: changed})
	webhook(e.t, e.m.URL, "pull_request", "pull_request.opened.json", webhookSecret, pullEvent(e.cloneURL, 1, "opened", branch, sha, e.base))
}

// push commits files on top of branch and updates pull request 1.
func (e *initE2E) push(branch string, files map[string]string) {
	e.repo.git("checkout", "--quiet", branch)
	sha := e.repo.commit("more on "+branch, files)
	e.repo.git("checkout", "--quiet", "main")
	e.gh.setPull(1, fakePull{HeadSHA: sha, HeadRef: branch, BaseSHA: e.base, BaseRef: "main"})
}

// run comments body on pull request 1 and returns Atoll's answer.
func (e *initE2E) run(body string) string {
	e.t.Helper()
	n := len(e.gh.pullComments(1))
	webhook(e.t, e.m.URL, "issue_comment", "issue_comment.created.json", webhookSecret, commentEvent(e.cloneURL, 1, body))
	return waitFor(e.t, e.gh, 1, n+1)
}

// Two projects share a dir and differ only in their backend config. Planned
// one after the other in the same checkout, each must use its own state:
// init must run again (with -reconfigure) when the project changes.
func TestProjectsSharingADirUseTheirOwnBackend(t *testing.T) {
	states := t.TempDir()
	stg, prd := filepath.Join(states, "stg.tfstate"), filepath.Join(states, "prd.tfstate")
	e := newInitE2E(t, map[string]string{
		"atlantis.yaml": `version: 3
projects:
- name: stg
  dir: app
  workflow: stg
  autoplan: {enabled: false}
- name: prd
  dir: app
  workflow: prd
  autoplan: {enabled: false}
workflows:
  stg:
    plan:
      steps:
      - init: {extra_args: ["-backend-config=path=` + stg + `"]}
      - plan
  prd:
    plan:
      steps:
      - init: {extra_args: ["-backend-config=path=` + prd + `"]}
      - plan
`,
		"app/main.tf": "terraform {\n  backend \"local\" {}\n}\n\n" + tfProject("app", 0),
	})
	e.open("grow", map[string]string{"app/main.tf": "terraform {\n  backend \"local\" {}\n}\n\n" + tfProject("app", 1)})

	mustContain(t, "stg plan", e.run("atlantis plan -p stg"), "Plan: 1 to add")
	mustContain(t, "stg apply", e.run("atlantis apply -p stg"), "Apply complete!")
	if b, err := os.ReadFile(stg); err != nil || !strings.Contains(string(b), "terraform_data") {
		t.Fatalf("stg state after applying stg: %v\n%s", err, b)
	}

	// prd's state is empty: its plan must create what stg already has.
	mustContain(t, "prd plan after applying stg", e.run("atlantis plan -p prd"), "Plan: 1 to add")
	mustContain(t, "prd plan log", e.lastLog("plan"), "$ terraform init -reconfigure -backend-config=path="+prd+" -input=false -no-color")
	mustContain(t, "stg plan after planning prd", e.run("atlantis plan -p stg"), "No changes")
	mustContain(t, "prd apply", e.run("atlantis apply -p prd"), "Apply complete!")
	for _, f := range []string{stg, prd} {
		if b, err := os.ReadFile(f); err != nil || strings.Count(string(b), `"type": "terraform_data"`) != 1 {
			t.Fatalf("%s after applying both: %v\n%s", filepath.Base(f), err, b)
		}
	}
}

// A module call added inside a local module changes nothing in the project
// dir itself; init must still run, or terraform fails with "Module not
// installed".
func TestModuleAddedInALocalModuleIsInstalled(t *testing.T) {
	e := newInitE2E(t, map[string]string{
		"atlantis.yaml":         "version: 3\nprojects:\n- dir: app\n",
		"app/main.tf":           "module \"a\" {\n  source = \"./modules/a\"\n}\n",
		"app/modules/a/main.tf": tfProject("a", 1),
		"app/modules/b/main.tf": tfProject("b", 1),
	})
	e.open("nested", map[string]string{"app/modules/a/main.tf": tfProject("a", 2)})
	mustContain(t, "autoplan", waitFor(t, e.gh, 1, 1), "Plan: 2 to add")

	e.push("nested", map[string]string{"app/modules/a/main.tf": tfProject("a", 2) + "\nmodule \"b\" {\n  source = \"../b\"\n}\n"})
	mustContain(t, "plan after adding a nested module", e.run("atlantis plan -d app"), "Plan: 3 to add")
	// Unchanged inputs: the next plan skips init, and still works.
	mustContain(t, "plan again", e.run("atlantis plan -d app"), "Plan: 3 to add")
	mustContain(t, "log of the last plan", e.lastLog("plan"), "skipping terraform init")
}

// lastLog is the stored log of pull request 1's latest job of kind.
func (e *initE2E) lastLog(kind string) string {
	e.t.Helper()
	var jobs []atoll.Job
	getJSON(e.t, e.m.URL+"/api/v1/jobs?pull=1&kind="+kind, &jobs)
	if len(jobs) == 0 {
		e.t.Fatalf("no %s jobs", kind)
	}
	last := jobs[0]
	for _, j := range jobs {
		if j.ID > last.ID {
			last = j
		}
	}
	resp, err := authClient.Get(fmt.Sprintf("%s/api/v1/jobs/%d/log", e.m.URL, last.ID))
	if err != nil {
		e.t.Fatal(err)
	}
	return readAll(e.t, resp)
}

// The workspace one project selected in a shared checkout need not exist in
// the next project's backend: init must not trip over it.
func TestProjectsSharingADirInOtherWorkspaces(t *testing.T) {
	states := t.TempDir()
	backend := func(env string) string {
		return `["-backend-config=path=` + filepath.Join(states, env+".tfstate") + `", "-backend-config=workspace_dir=` + filepath.Join(states, env+".d") + `"]`
	}
	e := newInitE2E(t, map[string]string{
		"atlantis.yaml": `version: 3
projects:
- {name: stg, dir: app, workspace: blue, workflow: stg, autoplan: {enabled: false}}
- {name: prd, dir: app, workspace: green, workflow: prd, autoplan: {enabled: false}}
workflows:
  stg: {plan: {steps: [{init: {extra_args: ` + backend("stg") + `}}, plan]}}
  prd: {plan: {steps: [{init: {extra_args: ` + backend("prd") + `}}, plan]}}
`,
		"app/main.tf": "terraform {\n  backend \"local\" {}\n}\n\n" + tfProject("app", 0),
	})
	e.open("grow", map[string]string{"app/main.tf": "terraform {\n  backend \"local\" {}\n}\n\n" + tfProject("app", 1)})
	for _, p := range []string{"stg", "prd", "stg", "prd"} {
		mustContain(t, p+" plan", e.run("atlantis plan -p "+p), "Plan: 1 to add")
	}
	for _, ws := range []string{"stg.d/blue", "prd.d/green"} {
		if _, err := os.Stat(filepath.Join(states, ws)); err != nil {
			t.Errorf("workspace %s: %v", ws, err)
		}
	}
}

// Under parallel_plan and parallel_apply, two projects of one dir (and
// workspace) still run one after the other: they share a checkout, and one
// project's init would switch the backend under the other's plan.
func TestParallelProjectsSharingADirTakeTurns(t *testing.T) {
	states := t.TempDir()
	stg, prd := filepath.Join(states, "stg.tfstate"), filepath.Join(states, "prd.tfstate")
	workflow := func(state string) string {
		return "    plan:\n      steps:\n      - init: {extra_args: [\"-backend-config=path=" + state + "\"]}\n      - plan\n"
	}
	e := newInitE2E(t, map[string]string{
		"atlantis.yaml": "version: 3\nparallel_plan: true\nparallel_apply: true\nprojects:\n" +
			"- {name: stg, dir: app, workflow: stg, autoplan: {enabled: false}}\n" +
			"- {name: prd, dir: app, workflow: prd, autoplan: {enabled: false}}\n" +
			"workflows:\n  stg:\n" + workflow(stg) + "  prd:\n" + workflow(prd),
		"app/main.tf": "terraform {\n  backend \"local\" {}\n}\n\n" + tfProject("app", 0),
	})
	e.open("grow", map[string]string{"app/main.tf": "terraform {\n  backend \"local\" {}\n}\n\n" + tfProject("app", 1)})
	mustContain(t, "plan of both", e.run("atlantis plan"), "Ran Plan for 2 projects", "Plan: 1 to add")
	mustContain(t, "apply of both", e.run("atlantis apply"), "Ran Apply for 2 projects", "Apply complete!")
	for _, f := range []string{stg, prd} {
		if b, err := os.ReadFile(f); err != nil || strings.Count(string(b), `"type": "terraform_data"`) != 1 {
			t.Fatalf("%s after applying both: %v\n%s", filepath.Base(f), err, b)
		}
	}
	var jobs []atoll.Job
	getJSON(t, e.m.URL+"/api/v1/jobs?repo=acme/infra&pull=1", &jobs)
	if len(jobs) != 4 {
		t.Fatalf("jobs = %+v, want two plans and two applies", jobs)
	}
	for i := 0; i < len(jobs); i += 2 {
		a, b := jobs[i], jobs[i+1]
		if a.StartedAt.Before(*b.FinishedAt) && b.StartedAt.Before(*a.FinishedAt) {
			t.Fatalf("%s jobs %d and %d of one dir overlapped in time", a.Kind, a.ID, b.ID)
		}
	}
}
