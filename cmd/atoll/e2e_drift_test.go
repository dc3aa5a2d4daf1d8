package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
)

// Drift checks end to end: the real server, real git, real Terraform 1.5.7
// with a state every checkout shares (a local backend at one path, as a
// remote backend would be), changed behind Atoll's back by Terraform itself.

// driftProject is a project whose state lives at state.
func driftProject(state, input string) string {
	return fmt.Sprintf(`terraform {
  backend "local" {
    path = %q
  }
}

resource "terraform_data" "app" {
  input = %q
}
`, state, input)
}

// terraformOutside runs Terraform on dir as someone outside Atoll would.
func terraformOutside(t *testing.T, dir string, args ...string) {
	t.Helper()
	for _, a := range [][]string{{"init", "-input=false", "-no-color"}, args} {
		cmd := exec.Command(terraformBin(t), a...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("terraform %v: %v\n%s", a, err, out)
		}
	}
}

// checkDrift runs a drift check of main and waits for its request to end.
func checkDrift(t *testing.T, e *e2e, projects ...string) []*atoll.DriftProject {
	t.Helper()
	req, err := e.m.Runner.CheckDrift(context.Background(), atoll.DriftCheck{
		Repo:   atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra", CloneURL: e.cloneURL},
		Branch: "main", Projects: projects, User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 90*time.Second, "the drift check done", func() bool {
		r, err := e.m.DB.Request(context.Background(), req.ID)
		return err == nil && r.State == atoll.RequestDone
	})
	drift, err := e.m.DB.DriftProjects(context.Background(), atoll.DriftFilter{Repo: "acme/infra"})
	if err != nil {
		t.Fatal(err)
	}
	return drift
}

func TestDriftCheckFindsStateChangedOutside(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	hooks := make(chan []byte, 8)
	hookSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		hooks <- b
	}))
	t.Cleanup(hookSrv.Close)
	config := filepath.Join(t.TempDir(), "webhooks.yaml")
	os.WriteFile(config, []byte("webhooks:\n- {event: drift, kind: http, url: '"+hookSrv.URL+"/drift'}\n- {event: apply, kind: http, url: '"+hookSrv.URL+"/apply'}\n"), 0o600)
	e := newE2EWith(t, map[string]string{"app/main.tf": driftProject(state, "v1")}, func(c *main.Config) { c.WebhooksConfig = config })

	// Never applied: everything is to add.
	drift := checkDrift(t, e)
	if len(drift) != 1 || drift[0].State != atoll.DriftDrifted || drift[0].Add != 1 || drift[0].Dir != "app" || drift[0].Branch != "main" {
		t.Fatalf("first check: %+v", *drift[0])
	}
	first := drift[0]
	// Its webhook: Atlantis's drift payload, through the outbox.
	select {
	case b := <-hooks:
		var got struct {
			Repository        string `json:"repository"`
			Ref               string `json:"ref"`
			DetectionID       string `json:"detection_id"`
			ProjectsWithDrift int    `json:"projects_with_drift"`
			Projects          []struct {
				Path    string `json:"path"`
				ToAdd   int    `json:"to_add"`
				Summary string `json:"summary"`
			} `json:"projects"`
		}
		if err := json.Unmarshal(b, &got); err != nil || got.ProjectsWithDrift != 1 || len(got.Projects) != 1 || got.Projects[0].Path != "app" ||
			got.Projects[0].ToAdd != 1 || got.Repository != "acme/infra" || got.Ref != "main" || got.DetectionID == "" || got.Projects[0].Summary != "Plan: 1 to add, 0 to change, 0 to destroy." {
			t.Fatalf("drift webhook %s: %v", b, err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no drift webhook")
	}

	// Applied outside, as the base branch says: in sync.
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "main.tf"), []byte(driftProject(state, "v1")), 0o644)
	terraformOutside(t, outside, "apply", "-auto-approve", "-input=false", "-no-color")
	drift = checkDrift(t, e)
	if len(drift) != 1 || drift[0].State != atoll.DriftInSync || drift[0].Add+drift[0].Change+drift[0].Destroy != 0 || drift[0].JobID == first.JobID {
		t.Fatalf("after the apply outside: %+v", drift)
	}
	inSync := drift[0]

	// Changed behind Atoll's back: the branch's config now replaces it.
	os.WriteFile(filepath.Join(outside, "main.tf"), []byte(driftProject(state, "v2")), 0o644)
	terraformOutside(t, outside, "apply", "-auto-approve", "-input=false", "-no-color")
	drift = checkDrift(t, e, "app")
	if len(drift) != 1 || drift[0].State != atoll.DriftDrifted || drift[0].Change != 1 || !drift[0].Since.After(inSync.Since) {
		t.Fatalf("after the change outside: %+v (in sync since %v)", *drift[0], inSync.Since)
	}

	// A drift check tells the host nothing and takes no lock; its jobs are
	// plans like any other, which no one may apply from a pull request.
	if calls := e.gh.Calls(); len(calls) != 0 {
		var got []string
		for _, c := range calls {
			got = append(got, c.Method+" "+c.Path)
		}
		t.Fatalf("the drift checks called GitHub: %s", strings.Join(got, ", "))
	}
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 0 {
		t.Fatalf("locks %+v", locks)
	}
	job, err := e.m.DB.Job(context.Background(), drift[0].JobID)
	if err != nil || job.Kind != atoll.JobPlan || job.State != atoll.JobSucceeded || !job.Spec.Drift || job.Pull >= 0 {
		t.Fatalf("the check's job %+v, %v", job, err)
	}
}

// DriftOutcome gives a finished check's projects with their plan output,
// for Atlantis's synchronous detect.
func TestDriftOutcome(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	e := newE2EWith(t, map[string]string{"app/main.tf": driftProject(state, "v1"), "other/main.tf": driftProject(state+"2", "x")}, nil)
	req, err := e.m.Runner.CheckDrift(context.Background(), atoll.DriftCheck{
		Repo:   atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra", CloneURL: e.cloneURL},
		Branch: "main", Projects: []string{"app"}, User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := e.m.Runner.DriftOutcome(ctx, req.ID)
	if err != nil {
		t.Fatal(err)
	}
	if out.Branch != "main" || len(out.HeadSHA) != 40 || len(out.Projects) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	p := out.Projects[0]
	if p.Job.Dir != "app" || p.Result.State != atoll.DriftDrifted || p.Result.Add != 1 || !strings.Contains(p.Output, "Plan: 1 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("project %+v\n%s", p.Result, p.Output)
	}
	// A project the branch does not have: the check fails, nothing runs.
	unknown, err := e.m.Runner.CheckDrift(context.Background(), atoll.DriftCheck{
		Repo:   atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra", CloneURL: e.cloneURL},
		Branch: "main", Projects: []string{"nope"}, User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := e.m.Runner.DriftOutcome(ctx, unknown.ID); err != nil || len(out.Projects) != 0 || !strings.Contains(out.Request.Error, `No project "nope" at the head of main.`) {
		t.Fatalf("an unknown project: %+v, %v", out, err)
	}
	for _, bad := range []atoll.DriftCheck{
		{Repo: atoll.Repo{VCS: "github", Host: "github.com", Owner: "evil", Name: "infra"}, Branch: "main"},
		{Repo: atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"}, Branch: "--upload-pack=x"},
		{Repo: atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"}, Branch: "main", Projects: []string{" "}},
	} {
		if _, err := e.m.Runner.CheckDrift(context.Background(), bad); err == nil {
			t.Errorf("CheckDrift(%+v) queued", bad)
		}
	}
}

// Reconcile: a drifted project's fresh plan of the branch waits for an
// approval (whatever --plan-approval says); its apply without one changes
// nothing; approved, it applies under the project's lock, which a pull
// request holding it would refuse; the next check is in sync.
func TestDriftReconcile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	e := newE2EWith(t, map[string]string{"app/main.tf": driftProject(state, "v1")}, nil)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "main.tf"), []byte(driftProject(state, "v2")), 0o644)
	terraformOutside(t, outside, "apply", "-auto-approve", "-input=false", "-no-color")

	repo := atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra", CloneURL: e.cloneURL}
	run := func(c atoll.DriftCheck) *atoll.Request {
		t.Helper()
		c.Repo, c.Branch, c.User, c.Source = repo, "main", "alice", "test"
		req, err := e.m.Runner.CheckDrift(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 90*time.Second, "the drift request done", func() bool {
			r, err := e.m.DB.Request(context.Background(), req.ID)
			return err == nil && r.State == atoll.RequestDone
		})
		return req
	}
	reconcile := run(atoll.DriftCheck{Reconcile: true, Projects: []string{"app"}})
	drift, _ := e.m.DB.DriftProjects(context.Background(), atoll.DriftFilter{Repo: "acme/infra"})
	if len(drift) != 1 || drift[0].State != atoll.DriftDrifted || drift[0].Change != 1 {
		t.Fatalf("after the reconcile's plan: %+v", drift)
	}
	jobs, err := e.m.DB.RequestJobs(context.Background(), reconcile.ID)
	if err != nil || len(jobs) != 1 || jobs[0].Kind != atoll.JobPlan {
		t.Fatalf("the reconcile's jobs %+v, %v", jobs, err)
	}

	// No approval: refused, nothing applied.
	refused := run(atoll.DriftCheck{Apply: true, Projects: []string{"app"}})
	jobs, _ = e.m.DB.RequestJobs(context.Background(), refused.ID)
	if len(jobs) != 1 || jobs[0].Kind != atoll.JobApply || jobs[0].State != atoll.JobFailed || !strings.Contains(jobs[0].Error, "approv") {
		t.Fatalf("an apply without approval: %+v", jobs)
	}

	plans, err := e.m.DB.PendingPlans(context.Background(), jobs[0].PullID)
	if err != nil || len(plans) != 1 {
		t.Fatalf("pending plans %v, %v", plans, err)
	}
	if _, err := e.m.DB.DecidePlan(context.Background(), atoll.PlanDecision{PlanID: plans[0].ID, Decision: atoll.DecisionApprove, User: "bob", Reason: "reconcile", Source: "test"}); err != nil {
		t.Fatal(err)
	}
	// A pull request holds the project's lock: the reconcile waits for it.
	e.open(1, "change-app", map[string]string{"app/main.tf": driftProject(state, "v3")}, "app/main.tf")
	e.waitComment(1, 1)
	locked := run(atoll.DriftCheck{Apply: true, Projects: []string{"app"}})
	jobs, _ = e.m.DB.RequestJobs(context.Background(), locked.ID)
	if len(jobs) != 1 || jobs[0].State != atoll.JobFailed || !strings.Contains(jobs[0].Error, "locked by pull request #1") {
		t.Fatalf("an apply while a pull request holds the lock: %+v", jobs)
	}
	pr, err := e.m.DB.PullByNumber(context.Background(), "acme/infra", 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.m.DB.ReleaseLocksWhere(context.Background(), atoll.LockSelector{PullID: pr.ID}, "bob", "test", "locks.unlock", "test"); err != nil {
		t.Fatal(err)
	}
	applied := run(atoll.DriftCheck{Apply: true, Projects: []string{"app"}})
	jobs, _ = e.m.DB.RequestJobs(context.Background(), applied.ID)
	if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
		t.Fatalf("the approved apply: %+v", jobs)
	}
	var locks []atoll.Lock
	getJSON(t, e.m.URL+"/api/v1/locks", &locks)
	if len(locks) != 0 {
		t.Fatalf("the reconcile kept its lock: %+v", locks)
	}
	drift = checkDrift(t, e)
	if len(drift) != 1 || drift[0].State != atoll.DriftInSync {
		t.Fatalf("after the reconcile: %+v", *drift[0])
	}
	if n := len(e.gh.pullComments(1)); n != 1 {
		t.Fatalf("pull request #1 got %d comments: the reconcile told it something", n)
	}
}

// remediation: auto (server side only): a reconcile applies at once,
// without an approval, and the audit log names the config entry that
// turned it on.
func TestDriftAutoRemediation(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	cfg := `{"repos":[{"id":"github.com/acme/infra","drift_detection":{"enabled":true,"schedule":"@daily","remediation":"auto"}}]}`
	e := newE2EWith(t, map[string]string{"app/main.tf": driftProject(state, "v1")}, func(c *main.Config) { c.RepoConfigJSON = cfg })
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "main.tf"), []byte(driftProject(state, "v2")), 0o644)
	terraformOutside(t, outside, "apply", "-auto-approve", "-input=false", "-no-color")

	req, err := e.m.Runner.CheckDrift(context.Background(), atoll.DriftCheck{
		Repo:   atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra", CloneURL: e.cloneURL},
		Branch: "main", Reconcile: true, Projects: []string{"app"}, User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := e.m.Runner.DriftOutcome(ctx, req.ID); err != nil {
		t.Fatal(err)
	}
	jobs, _ := e.m.DB.RequestJobs(context.Background(), req.ID)
	if len(jobs) != 2 || jobs[1].Kind != atoll.JobApply || jobs[1].State != atoll.JobSucceeded {
		t.Fatalf("an automatic reconcile: %+v", jobs)
	}
	if drift := checkDrift(t, e); len(drift) != 1 || drift[0].State != atoll.DriftInSync {
		t.Fatalf("after it: %+v", *drift[0])
	}
	events, err := e.m.DB.AuditEvents(context.Background(), atoll.EventFilter{Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range events {
		found = found || ev.Action == "drift.remediation.auto" && strings.Contains(ev.Detail, "repos entry github.com/acme/infra (line 1)")
	}
	if !found {
		t.Fatalf("no audit event of the automatic remediation: %+v", events)
	}
}

// A repository's atlantis.yaml sets its drift schedule where the server
// allows it (allowed_overrides: [drift_detection]): the active node reads
// it from the default branch and keeps the schedule.
func TestDriftScheduleFromRepositoryFile(t *testing.T) {
	state := filepath.Join(t.TempDir(), "app.tfstate")
	cfg := `{"repos":[{"id":"github.com/acme/infra","allowed_overrides":["drift_detection"]}]}`
	e := newE2EWith(t, map[string]string{
		"app/main.tf":   driftProject(state, "v1"),
		"atlantis.yaml": "version: 3\ndrift_detection:\n  enabled: true\n  schedule: \"0 6 * * 1-5\"\n",
	}, func(c *main.Config) { c.RepoConfigJSON = cfg })
	// A webhook makes the repository known.
	e.open(1, "noop", map[string]string{"README.md": "x\n"}, "README.md")
	var got []*atoll.DriftSchedule
	eventually(t, 40*time.Second, "the repository's schedule", func() bool {
		got, _ = e.m.DB.DriftSchedules(context.Background())
		return len(got) == 1
	})
	if got[0].Branch != "main" || got[0].Schedule != "0 6 * * 1-5" || got[0].NextDueAt.Hour() != 6 {
		t.Fatalf("schedule %+v", *got[0])
	}
}

// A project whose plan stage writes no plan file cannot be checked for
// drift: whatever its steps print, the check fails and says why, rather
// than calling the project in sync.
func TestDriftFilelessPlanFails(t *testing.T) {
	yaml := `version: 3
projects:
- {dir: app, workflow: scripted}
workflows:
  scripted:
    plan:
      steps: [{run: 'echo "No changes. Your infrastructure matches the configuration."'}]
`
	e := newE2EWith(t, map[string]string{"atlantis.yaml": yaml, "app/main.tf": tfProject("app", 1)}, allowRepoSettings)
	drift := checkDrift(t, e)
	if len(drift) != 1 || drift[0].State != atoll.DriftFailed || !strings.Contains(drift[0].Error, `Drift detection needs a plan file, and workflow "scripted" wrote none`) {
		t.Fatalf("drift of a fileless plan: %+v", drift)
	}
}
