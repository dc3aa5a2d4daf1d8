package main_test

// Failover of a real active/standby pair (ha_harness_test.go): kill -9,
// SIGSTOP, stale data dirs, and planned switchovers under webhook streams.

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

// slowPlan is a project whose plan takes seconds of Terraform's own CPU
// (hashing 120,000 strings in a local) without any provider.
const slowPlan = `locals {
  slow = flatten([for i in range(120) : [for j in range(1000) : sha256("${i}-${j}")]])
}

output "n" {
  value = length(local.slow)
}
`

// takeoverBound is how long a standby may take to be ready once the active
// is gone: the lease runs out (TTL), the next try (TTL/3 at most), then the
// promotion (catch up, open, first sync, interrupted jobs told).
const takeoverBound = haTTL + 8*time.Second

// kill -9 of the active while a plan runs, under a stream of webhooks sent
// to both nodes: the standby takes over within the TTL and a few seconds
// with every acknowledged webhook, lock and plan; the running plan is
// interrupted (and said so), the stored plan applies on the new active,
// once; the dead node's Terraform died with it.
func TestFailoverKill9DuringPlan(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"small/main.tf": tfProject("small", 1), "slow/main.tf": ""})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)

	// PR 1 gets a stored plan (opened through B, which forwards to A).
	d, _ := c.openPull(t, 1, "small", map[string]string{"small/main.tf": tfProject("small", 2)}, "small/main.tf")
	mustSend(t, b.URL, d)
	mustContain(t, "PR 1 plan comment", waitPullComment(t, c.GH, 1, "Plan: 2 to add", 60*time.Second), "atlantis apply -d small")
	plansBefore := pullPlans(t, a.URL, 1) // the active: a standby's copy may lag
	if len(plansBefore) != 1 {
		t.Fatalf("PR 1 plans = %+v, want one", plansBefore)
	}

	stream := (&webhookStream{URLs: []string{a.URL, b.URL}, Interval: 150 * time.Millisecond, Next: c.helpStream(1, 100)}).start()

	// PR 2's plan is slow; kill A while it runs.
	d, _ = c.openPull(t, 2, "slow", map[string]string{"slow/main.tf": slowPlan}, "slow/main.tf")
	mustSend(t, a.URL, d)
	var running []atoll.Job
	eventually(t, 60*time.Second, "PR 2's plan running (seen through B)", func() bool {
		getJSONFrom(a.URL+"/api/v1/jobs?state=running&kind=plan&pull=2", &running)
		return len(running) == 1
	})
	// Kill while Terraform itself runs, not while the job checks out.
	var tfBefore []int
	eventually(t, 30*time.Second, "Terraform running under A", func() bool {
		tfBefore = terraformProcs(t, a.DataDir)
		return len(tfBefore) > 0
	})
	var locksBefore []atoll.Lock
	if _, err := getJSONFrom(a.URL+"/api/v1/locks", &locksBefore); err != nil {
		t.Fatal(err)
	}
	if !hasLock(locksBefore, 1, "small") || !hasLock(locksBefore, 2, "slow") {
		t.Fatalf("locks before the kill = %+v, want PR 1's small and PR 2's slow", locksBefore)
	}
	var stillRunning atoll.Job
	if _, err := getJSONFrom(fmt.Sprintf("%s/api/v1/jobs/%d", a.URL, running[0].ID), &stillRunning); err != nil || stillRunning.State != atoll.JobRunning {
		t.Fatalf("PR 2's plan before the kill: %+v %v", stillRunning, err)
	}

	killedAt := time.Now()
	a.kill9(t)
	ackedBeforeKill := 0
	for _, r := range stream.snapshot() {
		if r.OK && r.AnswerAt.Before(killedAt) {
			ackedBeforeKill++
		}
	}
	active := waitActive(t, takeoverBound, b)
	took := time.Since(killedAt)
	t.Logf("kill -9 of the active -> standby ready in %v (lease TTL %v)", took.Round(time.Millisecond), haTTL)
	eventually(t, 5*time.Second, "A's Terraform gone with A", func() bool { return len(terraformProcs(t, a.DataDir)) == 0 })

	// Keep the stream going on the new active for a moment.
	time.Sleep(time.Second)
	results := stream.finish(t)
	toDeadA, toB := 0, 0
	for _, r := range results {
		switch {
		case r.OK:
		case r.Targets[0] == a.URL:
			toDeadA++
		default:
			toB++
		}
	}
	t.Logf("webhook stream: %d sent, %d acknowledged before the kill; not acknowledged: %d sent to A after the kill, %d sent to B during the takeover", len(results), ackedBeforeKill, toDeadA, toB)
	if ackedBeforeKill == 0 {
		t.Fatal("no webhook of the stream was acknowledged before the kill")
	}

	// B serves what A acknowledged: every webhook, with its request.
	db := c.restore(t)
	if n := checkDelivered(t, db, results); n == 0 {
		t.Fatal("no acknowledged webhooks to check")
	}
	checkRequests(t, db, results)
	checkStreamPulls(t, active.URL, results)

	// Locks granted before the kill are held on B; the stored plan is there.
	var locksAfter []atoll.Lock
	if _, err := getJSONFrom(active.URL+"/api/v1/locks", &locksAfter); err != nil {
		t.Fatal(err)
	}
	for _, l := range locksBefore {
		if !hasLock(locksAfter, l.Pull, l.Dir) {
			t.Errorf("lock %+v granted before the kill is missing on B: %+v", l, locksAfter)
		}
	}
	if plans := pullPlans(t, active.URL, 1); len(plans) != 1 || plans[0].ID != plansBefore[0].ID || plans[0].SHA256 != plansBefore[0].SHA256 {
		t.Fatalf("PR 1 plans on B = %+v, want %+v", plans, plansBefore)
	}

	// The plan running on A is interrupted, and PR 2 was told.
	var job atoll.Job
	if _, err := getJSONFrom(fmt.Sprintf("%s/api/v1/jobs/%d", active.URL, running[0].ID), &job); err != nil {
		t.Fatal(err)
	}
	if job.State != atoll.JobInterrupted {
		t.Fatalf("PR 2's plan on B: %+v, want interrupted", job)
	}
	mustContain(t, "PR 2 interrupted comment", waitPullComment(t, c.GH, 2, "interrupted", 10*time.Second), "Plan interrupted", "slow")

	// Every acknowledged comment was worked on (its usage reply quotes it).
	checkHelpReplies(t, c.GH, results, 30*time.Second)

	// The plan stored on A applies on B, once.
	mustSend(t, active.URL, c.commentDelivery(t, 1, "atlantis apply -d small"))
	mustContain(t, "PR 1 apply comment", waitPullComment(t, c.GH, 1, "Apply complete!", 60*time.Second), "small")
	var applies []atoll.Job
	eventually(t, 10*time.Second, "the apply job final", func() bool {
		getJSONFrom(active.URL+"/api/v1/jobs?kind=apply", &applies)
		return len(applies) == 1 && applies[0].Final()
	})
	if applies[0].State != atoll.JobSucceeded || applies[0].Pull != 1 {
		t.Fatalf("apply jobs = %+v, want one succeeded on PR 1", applies)
	}
	time.Sleep(500 * time.Millisecond) // a second apply would show by now
	getJSONFrom(active.URL+"/api/v1/jobs?kind=apply", &applies)
	if len(applies) != 1 || countPullComments(c.GH, 1, "Apply complete!") != 1 {
		t.Fatalf("apply ran %d times (%d Apply complete! comments), want once", len(applies), countPullComments(c.GH, 1, "Apply complete!"))
	}
}

// The same core with a file:// replica: kill -9 the active; the standby
// takes over with the lock and the plan, and applies the plan.
func TestFailoverFileReplica(t *testing.T) {
	c := newHACluster(t, "file", map[string]string{"small/main.tf": tfProject("small", 1)})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)

	d, _ := c.openPull(t, 1, "small", map[string]string{"small/main.tf": tfProject("small", 3)}, "small/main.tf")
	mustSend(t, a.URL, d)
	waitPullComment(t, c.GH, 1, "Plan: 3 to add", 60*time.Second)
	plansBefore := pullPlans(t, a.URL, 1)
	comment := c.commentDelivery(t, 1, "atlantis help f1")
	mustSend(t, b.URL, comment)

	killedAt := time.Now()
	a.kill9(t)
	active := waitActive(t, takeoverBound, b)
	t.Logf("file replica: kill -9 of the active -> standby ready in %v", time.Since(killedAt).Round(time.Millisecond))

	var locks []atoll.Lock
	if _, err := getJSONFrom(active.URL+"/api/v1/locks", &locks); err != nil {
		t.Fatal(err)
	}
	if len(locks) != 1 || !hasLock(locks, 1, "small") {
		t.Fatalf("locks on B = %+v, want PR 1's small", locks)
	}
	if plans := pullPlans(t, active.URL, 1); len(plansBefore) != 1 || len(plans) != 1 || plans[0].ID != plansBefore[0].ID {
		t.Fatalf("PR 1 plans on B = %+v, before the kill %+v", plans, plansBefore)
	}
	if ids := deliveryIDs(t, c.restore(t)); !ids[comment.ID] || !ids[d.ID] {
		t.Fatalf("acknowledged deliveries missing from the replica: %v", ids)
	}
	mustSend(t, active.URL, c.commentDelivery(t, 1, "atlantis apply"))
	mustContain(t, "apply on B", waitPullComment(t, c.GH, 1, "Apply complete!", 60*time.Second), "Resources: 3 added")
}

// A frozen active (SIGSTOP past its lease) is replaced; when it resumes it
// must fence itself and exit, and nothing it writes reaches the replica.
func TestFailoverSIGSTOP(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"small/main.tf": tfProject("small", 1)})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)
	stA, err := a.status()
	if err != nil || stA.Epoch <= 0 {
		t.Fatalf("A's status: %+v %v", stA, err)
	}
	before := c.commentDelivery(t, 1, "atlantis help before")
	mustSend(t, a.URL, before)

	a.sigstop(t)
	frozenAt := time.Now()
	// A webhook sent to A while it is frozen waits in its listen backlog
	// and is handled when it resumes, after the takeover.
	slowClient := &http.Client{Timeout: 60 * time.Second, Transport: authTransport{testAPISecret}}
	type answer struct {
		code int
		err  error
	}
	var whileFrozen []delivery
	frozenAnswers := make(chan answer, 4)
	for i := range 4 {
		d := c.commentDelivery(t, 1, fmt.Sprintf("atlantis help frozen-%d", i))
		whileFrozen = append(whileFrozen, d)
		go func() {
			code, err := d.sendWith(slowClient, a.URL)
			frozenAnswers <- answer{code, err}
		}()
	}

	active := waitActive(t, takeoverBound, b)
	t.Logf("SIGSTOP of the active -> standby ready in %v", time.Since(frozenAt).Round(time.Millisecond))
	stB, err := b.status()
	if err != nil || stB.Epoch <= stA.Epoch || stB.ActiveNode != "b" {
		t.Fatalf("B's status after the takeover: %+v %v; A's epoch was %d", stB, err, stA.Epoch)
	}
	byB := c.commentDelivery(t, 1, "atlantis help by-b")
	mustSend(t, active.URL, byB)

	a.sigcont(t)
	afterResume := c.commentDelivery(t, 1, "atlantis help resumed")
	code, err := afterResume.sendWith(slowClient, a.URL)
	t.Logf("webhook to A right after SIGCONT: %d %v", code, err)
	if code >= 200 && code <= 299 {
		t.Errorf("the deposed active acknowledged a webhook after the takeover (%d)", code)
	}
	for range whileFrozen {
		fa := <-frozenAnswers
		t.Logf("webhook sent to A while frozen: %d %v", fa.code, fa.err)
		if fa.code >= 200 && fa.code <= 299 {
			t.Errorf("the deposed active acknowledged a webhook it received while frozen (%d)", fa.code)
		}
	}
	if code := a.waitExit(t, 20*time.Second); code != 1 {
		t.Errorf("A exited with %d, want 1 (fenced)", code)
	}
	if log := a.log(); !strings.Contains(log, "atoll: fenced: ") {
		t.Errorf("A's stderr does not say it was fenced:\n%s", log)
	}
	// Did A commit them locally? Then only the fence kept them out.
	if local, err := sql.Open("sqlite", filepath.Join(a.DataDir, "atoll.db")); err == nil {
		n := 0
		for _, d := range append(whileFrozen, afterResume) {
			var one int
			local.QueryRow(`SELECT COUNT(*) FROM webhooks WHERE delivery_id = ?`, d.ID).Scan(&one)
			n += one
		}
		local.Close()
		t.Logf("webhooks A committed locally after the takeover: %d", n)
	}

	checkFenced := func(db *sql.DB) {
		t.Helper()
		ids := deliveryIDs(t, db)
		if !ids[before.ID] || !ids[byB.ID] {
			t.Errorf("acknowledged webhooks missing from the replica (before the freeze %v, on B %v)", ids[before.ID], ids[byB.ID])
		}
		for _, d := range append(whileFrozen, afterResume) {
			if ids[d.ID] {
				t.Errorf("webhook %s that the deposed active received reached the replica", d.ID)
			}
		}
	}
	db := c.restore(t)
	checkFenced(db)
	epochs := epochNodes(t, db)
	if len(epochs) < 2 || epochs[len(epochs)-1].node != "b" || epochs[len(epochs)-1].epoch != stB.Epoch || epochs[len(epochs)-2].node != "a" {
		t.Fatalf("epochs = %+v, want ... a, then b at %d", epochs, stB.Epoch)
	}

	// A restarts as a standby of B with a fresh copy; when B dies, A
	// takes over without what it wrote while deposed.
	a = startNode(t, c, "a")
	waitStandbyOf(t, 10*time.Second, a, b)
	byB2 := c.commentDelivery(t, 1, "atlantis help by-b-2")
	mustSend(t, a.URL, byB2) // forwarded to B
	killedAt := time.Now()
	b.kill9(t)
	waitActive(t, takeoverBound, a)
	t.Logf("kill -9 of B -> A ready in %v", time.Since(killedAt).Round(time.Millisecond))
	if st, err := a.status(); err != nil || st.Epoch <= stB.Epoch {
		t.Fatalf("A's status after taking over again: %+v %v; B's epoch was %d", st, err, stB.Epoch)
	}
	db = c.restore(t)
	checkFenced(db)
	if !deliveryIDs(t, db)[byB2.ID] {
		t.Error("the webhook acknowledged through A by B is missing")
	}
}

// A node restarted with an old copy of the database must not promote it:
// it would roll the replica back over what the other node wrote since.
func TestFailoverStaleNodeNeverRollsBack(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"one/main.tf": tfProject("one", 1), "two/main.tf": tfProject("two", 1)})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)

	// A writes: PR 1 planned and locked.
	d, _ := c.openPull(t, 1, "one", map[string]string{"one/main.tf": tfProject("one", 2)}, "one/main.tf")
	mustSend(t, a.URL, d)
	waitPullComment(t, c.GH, 1, "Plan: 2 to add", 60*time.Second)
	staleCopy := filepath.Join(a.DataDir, "atoll.db")
	if _, err := os.Stat(staleCopy); err != nil {
		t.Fatal(err)
	}
	a.kill9(t)
	waitActive(t, takeoverBound, b)

	// B writes more: PR 2 planned and locked.
	d, _ = c.openPull(t, 2, "two", map[string]string{"two/main.tf": tfProject("two", 3)}, "two/main.tf")
	mustSend(t, b.URL, d)
	waitPullComment(t, c.GH, 2, "Plan: 3 to add", 60*time.Second)
	plan2 := pullPlans(t, b.URL, 2)
	if len(plan2) != 1 {
		t.Fatalf("PR 2 plans on B = %+v", plan2)
	}
	b.kill9(t)

	// A starts again on its old data dir, holding the state before B's.
	a = startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	checkBoth := func(n *haNode) {
		t.Helper()
		var locks []atoll.Lock
		if _, err := getJSONFrom(n.URL+"/api/v1/locks", &locks); err != nil {
			t.Fatal(err)
		}
		if !hasLock(locks, 1, "one") || !hasLock(locks, 2, "two") {
			t.Fatalf("locks on %s = %+v, want PR 1's one and PR 2's two", n.ID, locks)
		}
		if plans := pullPlans(t, n.URL, 2); len(plans) != 1 || plans[0].ID != plan2[0].ID || plans[0].SHA256 != plan2[0].SHA256 {
			t.Fatalf("PR 2 plans on %s = %+v, want %+v", n.ID, plans, plan2)
		}
		if plans := pullPlans(t, n.URL, 1); len(plans) != 1 {
			t.Fatalf("PR 1 plans on %s = %+v", n.ID, plans)
		}
	}
	checkBoth(a)

	// A -> B again, with A's new writes.
	b = startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)
	comment := c.commentDelivery(t, 1, "atlantis help on-a")
	mustSend(t, b.URL, comment)
	killedAt := time.Now()
	a.kill9(t)
	waitActive(t, takeoverBound, b)
	t.Logf("kill -9 of A -> B ready in %v", time.Since(killedAt).Round(time.Millisecond))
	checkBoth(b)
	db := c.restore(t)
	if !deliveryIDs(t, db)[comment.ID] {
		t.Fatal("the webhook acknowledged by A is missing after the failover to B")
	}
	epochs := epochNodes(t, db)
	var order []string
	for _, e := range epochs {
		order = append(order, e.node)
	}
	if got := strings.Join(order, ","); got != "a,b,a,b" {
		t.Fatalf("epochs by node = %s, want a,b,a,b", got)
	}
	// B applies the plan it made two failovers ago.
	mustSend(t, b.URL, c.commentDelivery(t, 2, "atlantis apply"))
	mustContain(t, "apply of PR 2", waitPullComment(t, c.GH, 2, "Apply complete!", 60*time.Second), "Resources: 3 added")
}

// A planned switchover (SIGTERM) hands over within about one poll, and a
// rolling restart of both nodes under a stream of webhooks, redelivered on
// failure, loses none.
func TestPlannedSwitchover(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"small/main.tf": tfProject("small", 1)})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)
	t.Logf("a at %s, b at %s", a.URL, b.URL)
	d, _ := c.openPull(t, 1, "small", map[string]string{"small/main.tf": tfProject("small", 2)}, "small/main.tf")
	mustSend(t, a.URL, d)
	waitPullComment(t, c.GH, 1, "Plan: 2 to add", 60*time.Second)

	// switchover stops from and waits for to to take over.
	switchover := func(from, to *haNode) time.Duration {
		t.Helper()
		stopped := time.Now()
		from.sigterm(t)
		waitActive(t, takeoverBound, to)
		took := time.Since(stopped)
		t.Logf("SIGTERM of %s -> %s ready in %v (lease TTL %v, poll %v)", from.ID, to.ID, took.Round(time.Millisecond), haTTL, haTTL/3)
		if code := from.waitExit(t, 40*time.Second); code != 0 {
			t.Fatalf("%s exited with %d after SIGTERM, want 0", from.ID, code)
		}
		return took
	}

	// Idle, a SIGTERM hands over before the lease could have expired: the
	// stopping node released it.
	stA, err := a.status()
	if err != nil || stA.LeaseExpiresAt == nil {
		t.Fatalf("A's status: %+v %v", stA, err)
	}
	switchover(a, b)
	if readyAt := time.Now(); !readyAt.Before(*stA.LeaseExpiresAt) {
		t.Errorf("B took over at %s, not before A's lease expired (%s): the lease was not released", readyAt.Format(time.RFC3339Nano), stA.LeaseExpiresAt.Format(time.RFC3339Nano))
	}
	a = startNode(t, c, "a")
	waitStandbyOf(t, 10*time.Second, a, b)

	// A rolling restart of both nodes under a stream of webhooks.
	stream := (&webhookStream{URLs: []string{a.URL, b.URL}, Interval: 100 * time.Millisecond, Retries: 6, Next: c.helpStream(1, 1000)}).start()
	time.Sleep(500 * time.Millisecond)
	switchover(b, a)
	time.Sleep(300 * time.Millisecond)
	b = startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)
	time.Sleep(300 * time.Millisecond)
	switchover(a, b)
	time.Sleep(300 * time.Millisecond)
	a = startNode(t, c, "a")
	waitStandbyOf(t, 10*time.Second, a, b)
	time.Sleep(500 * time.Millisecond)
	results := stream.finish(t)

	retried, lost := 0, 0
	for _, r := range results {
		if r.firstFailed() {
			retried++
			t.Logf("delivery %s: attempts %v to %v at %v %q", r.D.ID, r.Codes, r.Targets, r.Times, r.Errs)
		}
		if !r.OK {
			lost++
		}
	}
	t.Logf("rolling restart: %d webhooks sent, %d needed a redelivery, %d never acknowledged", len(results), retried, lost)
	if lost > 0 {
		t.Errorf("%d webhooks were never acknowledged despite %d redeliveries", lost, 6)
	}
	final := waitActive(t, 5*time.Second, a, b)
	db := c.restore(t)
	if n := checkDelivered(t, db, results); n < len(results)-lost || n < 20 {
		t.Fatalf("only %d acknowledged webhooks of %d", n, len(results))
	}
	checkRequests(t, db, results)
	checkStreamPulls(t, final.URL, results)
	checkHelpReplies(t, c.GH, results, 30*time.Second)
	var locks []atoll.Lock
	if _, err := getJSONFrom(final.URL+"/api/v1/locks", &locks); err != nil || !hasLock(locks, 1, "small") {
		t.Fatalf("locks after the rolling restart = %+v %v", locks, err)
	}
	var order []string
	for _, e := range epochNodes(t, db) {
		order = append(order, e.node)
	}
	if got := strings.Join(order, ","); got != "a,b,a,b" {
		t.Fatalf("epochs by node = %s, want a,b,a,b", got)
	}
}

// A SIGTERM lets running jobs finish (--stop-timeout) before the lease is
// released: the stopping node keeps renewing it meanwhile, so the standby
// never takes over while the old active still runs Terraform, and the job
// ends succeeded, not interrupted.
func TestPlannedSwitchoverFinishesRunningJobs(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"slow/main.tf": ""})
	// The plan takes ~8 s on an idle machine; the stop timeout leaves room
	// for a loaded one, since this test is about finishing, not timing out.
	a := startNode(t, c, "a", "--stop-timeout", "3m")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)

	d, _ := c.openPull(t, 1, "slow", map[string]string{"slow/main.tf": slowPlan}, "slow/main.tf")
	mustSend(t, a.URL, d)
	var running []atoll.Job
	eventually(t, 60*time.Second, "the plan running", func() bool {
		getJSONFrom(a.URL+"/api/v1/jobs?state=running&kind=plan", &running)
		return len(running) == 1
	})
	eventually(t, 30*time.Second, "Terraform running under A", func() bool { return len(terraformProcs(t, a.DataDir)) > 0 })

	stopped := time.Now()
	a.sigterm(t)
	// Until A has exited, B stays a standby.
	statusErrs := 0
	for !a.exited() {
		st, err := b.status()
		if err != nil && statusErrs < 3 {
			statusErrs++
			t.Logf("B's status %v after the SIGTERM: %v", time.Since(stopped).Round(time.Millisecond), err)
		}
		if err == nil && st.Role == atoll.RoleActive {
			after := time.Since(stopped).Round(time.Millisecond)
			a.waitExit(t, 40*time.Second)
			t.Fatalf("B became active %v after the SIGTERM while A was still finishing its plan", after)
		}
		if time.Since(stopped) > 3*time.Minute {
			t.Fatal("A did not exit within 3m of SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	exitedAt := time.Now()
	if code := a.waitExit(t, time.Second); code != 0 {
		t.Errorf("A exited with %d after SIGTERM, want 0", code)
	}
	active := waitActive(t, takeoverBound, b)
	t.Logf("SIGTERM during a plan: A finished it and exited after %v; B ready %v later", exitedAt.Sub(stopped).Round(time.Millisecond), time.Since(exitedAt).Round(time.Millisecond))
	var job atoll.Job
	if _, err := getJSONFrom(fmt.Sprintf("%s/api/v1/jobs/%d", active.URL, running[0].ID), &job); err != nil {
		t.Fatal(err)
	}
	if job.State != atoll.JobSucceeded {
		t.Fatalf("the plan running at the SIGTERM: %+v, want succeeded", job)
	}
	if n := countPullComments(c.GH, 1, "interrupted"); n != 0 {
		t.Fatalf("%d interrupted comments on PR 1: %q", n, c.GH.pullComments(1))
	}
	waitPullComment(t, c.GH, 1, "atlantis apply -d slow", 10*time.Second)
}

type epochRow struct {
	epoch int64
	node  string
}

// epochNodes are the promotions recorded in db, oldest first.
func epochNodes(t *testing.T, db *sql.DB) []epochRow {
	t.Helper()
	rows, err := db.Query(`SELECT epoch, node FROM epochs ORDER BY epoch`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []epochRow
	for rows.Next() {
		var e epochRow
		if err := rows.Scan(&e.epoch, &e.node); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// waitPullComment waits for a comment on pull containing sub and returns it.
func waitPullComment(t *testing.T, gh *fakeGitHub, pull int, sub string, timeout time.Duration) string {
	t.Helper()
	var found string
	eventually(t, timeout, fmt.Sprintf("a comment on #%d containing %q", pull, sub), func() bool {
		for _, c := range gh.pullComments(pull) {
			if strings.Contains(c, sub) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

func countPullComments(gh *fakeGitHub, pull int, sub string) int {
	n := 0
	for _, c := range gh.pullComments(pull) {
		if strings.Contains(c, sub) {
			n++
		}
	}
	return n
}

// pullPlans are the pending plans of acme/infra#pull as node url serves them.
func pullPlans(t *testing.T, url string, pull int) []*atoll.Plan {
	t.Helper()
	var detail struct {
		Plans []*atoll.Plan `json:"plans"`
	}
	if _, err := getJSONFrom(fmt.Sprintf("%s/api/v1/repos/acme/infra/pulls/%d", url, pull), &detail); err != nil {
		t.Fatal(err)
	}
	return detail.Plans
}

func hasLock(locks []atoll.Lock, pull int, dir string) bool {
	for _, l := range locks {
		if l.Pull == pull && l.Dir == dir && l.Repo == "acme/infra" {
			return true
		}
	}
	return false
}

// checkRequests fails unless each acknowledged comment has its request in
// db, and each acknowledged pull request opening its autoplan request.
func checkRequests(t *testing.T, db *sql.DB, results []*streamResult) {
	t.Helper()
	for _, r := range results {
		if !r.OK {
			continue
		}
		var n int64
		if r.D.Tag != "" {
			n = queryInt(t, db, `SELECT COUNT(*) FROM requests WHERE kind = 'comment' AND comment = ?`, "atlantis help "+r.D.Tag)
		} else {
			n = queryInt(t, db, `SELECT COUNT(*) FROM requests q JOIN pulls p ON p.id = q.pull_id WHERE q.kind = 'autoplan' AND p.number = ?`, r.D.Pull)
		}
		if n != 1 {
			t.Errorf("acknowledged delivery %s (%q, pull %d): %d requests in the replica, want 1", r.D.ID, r.D.Tag, r.D.Pull, n)
		}
	}
}

// checkStreamPulls fails unless every acknowledged opened pull request is
// listed by the node at url.
func checkStreamPulls(t *testing.T, url string, results []*streamResult) {
	t.Helper()
	var pulls []atoll.Pull
	if _, err := getJSONFrom(url+"/api/v1/pulls", &pulls); err != nil {
		t.Fatal(err)
	}
	have := map[int]bool{}
	for _, p := range pulls {
		have[p.Number] = true
	}
	for _, r := range results {
		if r.OK && r.D.Tag == "" && !have[r.D.Pull] {
			t.Errorf("pull request #%d was acknowledged (%v) but %s does not list it", r.D.Pull, r.Codes, url)
		}
	}
}

// checkHelpReplies waits until every acknowledged "atlantis help sN" got its
// usage reply, which quotes sN.
func checkHelpReplies(t *testing.T, gh *fakeGitHub, results []*streamResult, timeout time.Duration) {
	t.Helper()
	for _, r := range results {
		if r.OK && r.D.Tag != "" {
			waitPullComment(t, gh, r.D.Pull, strconv.Quote(r.D.Tag), timeout)
		}
	}
}

// terraformProcs are the Terraform processes whose working directory is
// under dir (a node's data dir).
func terraformProcs(t *testing.T, dir string) []int {
	t.Helper()
	bin, _ := filepath.EvalSymlinks(terraformBin(t))
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real // /proc shows resolved paths
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		exe, err1 := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		cwd, err2 := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err1 == nil && err2 == nil && exe == bin && strings.HasPrefix(cwd, dir+string(filepath.Separator)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// An active frozen (SIGSTOP) past its lease while a job's report is
// pending says nothing to GitHub once it resumes after the standby took
// over (issue 21): no comment, no status, nothing. The fake holds the
// answer to A's first write (the plan's pending status), so A's status
// queue has work waiting when it resumes, and A's Terraform finishes its
// plan while A is frozen, so the job has its result to report.
func TestFailoverSIGSTOPNoVCSWritesAfterTakeover(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"slow/main.tf": ""})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b")
	waitStandbyOf(t, 10*time.Second, b, a)

	held, release := c.GH.holdFirstWrite("a")
	defer release()
	d, _ := c.openPull(t, 1, "slow", map[string]string{"slow/main.tf": slowPlan}, "slow/main.tf")
	mustSend(t, a.URL, d)
	select {
	case <-held:
	case <-time.After(60 * time.Second):
		t.Fatal("A wrote nothing to GitHub for the opened pull request")
	}
	eventually(t, 60*time.Second, "terraform plan running under A", func() bool { return len(terraformPlans(t, a.DataDir)) > 0 })

	a.sigstop(t)
	frozenAt := time.Now()
	waitActive(t, takeoverBound, b)
	t.Logf("SIGSTOP of the active during a plan -> standby ready in %v", time.Since(frozenAt).Round(time.Millisecond))
	// Terraform is not frozen: it ends its plan (a zombie, its parent
	// stopped), and A's job has a result to report when A resumes.
	eventually(t, 90*time.Second, "A's terraform plan finished", func() bool { return len(terraformPlans(t, a.DataDir)) == 0 })
	release() // the held answer waits in A's socket
	a.sigcont(t)
	if code := a.waitExit(t, 30*time.Second); code != 1 {
		t.Errorf("A exited with %d, want 1 (fenced)", code)
	}
	if writes := c.GH.writesBy("a", frozenAt); len(writes) > 0 {
		t.Errorf("the deposed active wrote to GitHub after the takeover: %+v", writes)
	}
	if strings.Contains(a.log(), "fenced: VCS writes refused") {
		t.Log("A tried to write after it resumed and was refused")
	}
	// B told the pull request, and planned it again: the request A
	// acknowledged has its outcome.
	mustContain(t, "PR 1 interrupted comment", waitPullComment(t, c.GH, 1, "interrupted", 20*time.Second), "Plan interrupted")
	waitPullComment(t, c.GH, 1, "atlantis apply -d slow", 120*time.Second)
	if len(c.GH.writesBy("b", frozenAt)) == 0 {
		t.Error("no write from B after the takeover")
	}
	if writes := c.GH.writesBy("a", frozenAt); len(writes) > 0 {
		t.Errorf("the deposed active wrote to GitHub after the takeover: %+v", writes)
	}
}

// terraformPlans are the `terraform plan` processes under dir.
func terraformPlans(t *testing.T, dir string) []int {
	t.Helper()
	var pids []int
	for _, pid := range terraformProcs(t, dir) {
		b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err == nil && strings.Contains(string(b), "\x00plan\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// A webhook acknowledged as a redelivery (its first delivery was answered
// 503 because its sync was answered too late, though the replica stored
// it) gets its answer even though the claim of its request met the same
// fate: told "not replicated", stored all the same, no worker on it
// (issue 21). Before the orphan sweep the request stayed running under the
// active until the next start of a node, and nothing was ever said.
func TestFailoverClaimNotReplicatedIsWorkedOn(t *testing.T) {
	c := newHACluster(t, "s3", map[string]string{"small/main.tf": tfProject("small", 1)})
	a := startNode(t, c, "a")
	waitActive(t, 30*time.Second, a)
	mustSend(t, a.URL, c.commentDelivery(t, 1, "atlantis help warm-up"))
	waitPullComment(t, c.GH, 1, `"warm-up"`, 30*time.Second)

	d := c.commentDelivery(t, 1, "atlantis help late-sync")
	c.S3.DelayLTXAnswers(time.Minute) // until the uploader gives up, at its lease deadline
	code, err := d.send(a.URL)
	t.Logf("first delivery while syncs are answered too late: %d %v", code, err)
	if code >= 200 && code <= 299 {
		t.Fatalf("a webhook was acknowledged although its sync failed (%d)", code)
	}
	// The worker claims the request (stored, though the webhook was told
	// otherwise) and the sync of its claim or of its finish fails too.
	// Which one is a race: Litestream rereads the replica's position after
	// a failed upload, and the fake stored the claim's LTX file before it
	// held back the answer, so the claim can count as replicated, and then
	// the finish is the write told "not replicated". Either leaves the
	// request's fate unknown to its worker, which is what the sweep is for.
	var failed string
	eventually(t, 30*time.Second, "a failed claim or finish on A", func() bool {
		log := a.log()
		for _, msg := range []string{"claim request", "finish request"} {
			if strings.Contains(log, `"level":"ERROR","msg":"`+msg+`"`) {
				failed = msg
				return true
			}
		}
		return false
	})
	t.Logf("the write whose sync failed: %s", failed)
	c.S3.DelayLTXAnswers(0)
	// The redelivery is acknowledged: the delivery is known.
	mustSend(t, a.URL, d)
	waitPullComment(t, c.GH, 1, `"late-sync"`, 30*time.Second)
	if !a.isActive() {
		t.Fatal("A is no longer the active node")
	}
}
