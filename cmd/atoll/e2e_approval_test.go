package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/store"
)

// The demo's whole production flow on the real server and Terraform: an
// apply while frozen is refused with the freeze's reason; an apply without
// an approval is refused naming the project and linking its plan page,
// and nothing is applied; approved through the API, it applies and the
// comment names the approver.
func TestDemoApprovalFreezeAndApply(t *testing.T) {
	testEnv(t)
	ctx := context.Background()
	m := startDemo(t, t.TempDir())
	staging := demoWaitJob(t, m, atoll.JobPlan, "staging")
	demoComment(t, m, "atlantis plan -d production")
	prod := demoWaitJob(t, m, atoll.JobPlan, "production")
	if prod.State != atoll.JobSucceeded {
		t.Fatalf("production plan = %+v\n%s", prod, dumpComments(t, m))
	}
	var planID, stagingPlanID int64
	for _, p := range demoPull(t, m).Plans {
		switch p.JobID {
		case prod.ID:
			planID = p.ID
		case staging.ID:
			stagingPlanID = p.ID
		}
	}
	if planID == 0 || stagingPlanID == 0 {
		t.Fatalf("no pending plan of production: %+v", demoPull(t, m).Plans)
	}
	demoWaitIdle(t, m)

	// Frozen: the apply is refused with who froze, since when and why, and
	// no apply job is queued.
	setFreeze := func(on bool, reason string) {
		t.Helper()
		err := m.DB.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.SetFreeze(on, "root", reason, "127.0.0.1")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	setFreeze(true, "release week")
	n := len(demoComments(t, m))
	demoComment(t, m, "atlantis apply")
	frozen := demoWaitReply(t, m, n, "reply to the frozen apply")
	t.Logf("reply to the frozen apply:\n%s", frozen)
	if !strings.Contains(frozen, "Applies are frozen by root since ") || !strings.Contains(frozen, ": release week.") {
		t.Fatalf("reply to the frozen apply:\n%s", frozen)
	}
	demoWaitIdle(t, m)
	if jobs := demoJobs(t, m, atoll.JobApply); len(jobs) != 0 {
		t.Fatalf("apply jobs while frozen: %+v", jobs)
	}
	setFreeze(false, "")

	// Not approved: refused, naming the project and its plan page; the
	// plan stays pending and its lock held.
	n = len(demoComments(t, m))
	demoComment(t, m, "atlantis apply -p production")
	refused := demoWaitReply(t, m, n, "reply to the unapproved apply")
	t.Logf("reply to the unapproved apply:\n%s", refused)
	planURL := fmt.Sprintf("%s/plans/%d", m.Server.PublicURL, planID)
	if !strings.Contains(refused, "Project production needs an approval in Atoll") || !strings.Contains(refused, "]("+planURL+")") {
		t.Fatalf("reply to the unapproved apply does not name production and %s:\n%s", planURL, refused)
	}
	demoWaitIdle(t, m)
	for _, j := range demoJobs(t, m, atoll.JobApply) {
		if j.State == atoll.JobSucceeded {
			t.Fatalf("an apply succeeded without approval: %+v", j)
		}
		if log := demoGetText(t, fmt.Sprintf("%s/api/v1/jobs/%d/log", m.URL, j.ID)); strings.Contains(log, "terraform apply") {
			t.Fatalf("refused apply ran Terraform:\n%s", log)
		}
	}
	pending := false
	for _, p := range demoPull(t, m).Plans {
		pending = pending || p.ID == planID
	}
	if !pending || len(demoLocks(t, m)) != 2 {
		t.Fatalf("after the refused apply: plans %+v, locks %+v", demoPull(t, m).Plans, demoLocks(t, m))
	}

	// Staging needs no approval, but a reject still stops its apply.
	err := m.DB.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.DecidePlan(atoll.PlanDecision{PlanID: stagingPlanID, Decision: atoll.DecisionReject, User: "carol", Reason: "wrong size"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	n = len(demoComments(t, m))
	demoComment(t, m, "atlantis apply -p staging")
	if rejected := demoWaitReply(t, m, n, "reply to the rejected apply"); !strings.Contains(rejected, "The plan of project staging was rejected in Atoll by carol: wrong size.") {
		t.Fatalf("reply to the rejected apply:\n%s", rejected)
	}
	demoWaitIdle(t, m)

	// Approved through the API by an operator: a local account "bob",
	// signed in with basic auth over the real server.
	hash, err := bcrypt.GenerateFromPassword([]byte("bob-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.DB.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.CreateUser(atoll.NewUser{Name: "bob", Role: atoll.RoleOperator, Source: atoll.UserSourceLocal, PasswordHash: string(hash)})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/api/v1/plans/%d/approvals", m.URL, planID),
		strings.NewReader(`{"decision":"approve","reason":"checked the diff"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.SetBasicAuth("bob", "bob-password")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("approve = %d %s", res.StatusCode, answer)
	}

	// Now it applies (the approval is also the local pull request's review
	// that production's apply_requirements [approved] asks for), and the
	// comment names the approver.
	n = len(demoComments(t, m))
	demoComment(t, m, "atlantis apply -p production")
	applied := demoWaitReply(t, m, n, "reply to the approved apply")
	var events []atoll.Event
	t.Logf("reply to the approved apply:\n%s", applied)
	if !strings.Contains(applied, "Apply complete!") || !strings.Contains(applied, "Approved by bob: checked the diff") {
		t.Fatalf("reply to the approved apply:\n%s", applied)
	}
	events, err = m.DB.AuditEvents(ctx, atoll.EventFilter{Action: "apply"})
	if err != nil || len(events) != 1 || !strings.Contains(events[0].Detail, "approved by bob: checked the diff") {
		t.Fatalf("apply audit events = %+v, %v", events, err)
	}
	waitApplied(t, m, planID)
}

// waitApplied waits until the plan is no longer pending.
func waitApplied(t *testing.T, m *main.Main, planID int64) {
	t.Helper()
	eventually(t, 30*time.Second, "plan applied", func() bool {
		for _, p := range demoPull(t, m).Plans {
			if p.ID == planID {
				return false
			}
		}
		return true
	})
}

// On GitHub, through pull request comments (webhooks): a frozen apply is
// answered with the freeze's reason; an unapproved one with the project and
// a link to its plan page; an approved one applies, names the approver,
// and its audit event says it came from a pull request comment.
func TestGitHubCommentApplyFrozenThenApproved(t *testing.T) {
	testEnv(t)
	ctx := context.Background()
	e := &e2e{t: t, gh: newFakeGitHub(t), dataDir: t.TempDir()}
	e.repo = newGitRepo(t, map[string]string{"staging/main.tf": tfProject("staging", 1)})
	e.base = e.repo.git("rev-parse", "main")
	e.cloneURL, _ = serveGit(t, e.repo, "gh-test-token")
	e.m = startMain(t, e.dataDir, func(c *main.Config) {
		c.GHToken, c.GHUser, c.GHWebhookSecret, c.GHAPIURL = "gh-test-token", "atoll-bot", webhookSecret, e.gh.URL+"/"
		c.RepoAllowlist = "github.com/acme/*"
		c.PlanApproval = "acme/infra"
	})
	t.Cleanup(func() { e.m.Close() })

	e.open(1, "scale-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "autoplan comment", e.waitComment(1, 1), "Plan: 2 to add")
	plans := demoPullPlans(t, e.m, "/api/v1/repos/acme/infra/pulls/1")
	if len(plans) != 1 {
		t.Fatalf("pending plans = %+v", plans)
	}

	freeze := func(on bool, reason string) {
		t.Helper()
		err := e.m.DB.Update(ctx, func(tx *store.Tx) error {
			_, err := tx.SetFreeze(on, "root", reason, "127.0.0.1")
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	freeze(true, "change freeze")
	e.comment(1, "atlantis apply")
	mustContain(t, "frozen apply comment", e.waitComment(1, 2), "**Apply refused**: Applies are frozen by root since ", ": change freeze.")
	freeze(false, "")

	e.comment(1, "atlantis apply")
	planURL := fmt.Sprintf("%s/plans/%d", e.m.Server.PublicURL, plans[0].ID)
	mustContain(t, "unapproved apply comment", e.waitComment(1, 3), "Project staging/default needs an approval in Atoll", "]("+planURL+")")

	err := e.m.DB.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.DecidePlan(atoll.PlanDecision{PlanID: plans[0].ID, Decision: atoll.DecisionApprove, User: "bob", Reason: "LGTM", Source: "192.0.2.5"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.comment(1, "atlantis apply")
	mustContain(t, "approved apply comment", e.waitComment(1, 4), "Apply complete!", "Approved by bob: LGTM")
	events, err := e.m.DB.AuditEvents(ctx, atoll.EventFilter{Action: "apply.start"})
	if err != nil || len(events) != 1 || events[0].Source != atoll.SourcePRComment || !strings.Contains(events[0].Detail, "approved by bob: LGTM") {
		t.Fatalf("apply events = %+v, %v", events, err)
	}
}

// demoPullPlans returns the pending plans of the pull request at path.
func demoPullPlans(t *testing.T, m *main.Main, path string) []atoll.Plan {
	t.Helper()
	var d demoPullDetail
	if st := getJSON(t, m.URL+path, &d); st != http.StatusOK {
		t.Fatalf("GET %s: %d", path, st)
	}
	return d.Plans
}
