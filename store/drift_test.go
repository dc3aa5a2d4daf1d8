package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

var infra = atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"}

// A repository's drift targets: one pulls row per branch, numbered below
// zero, of state drift, reused by every check of that branch.
func TestQueueDriftTargets(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 7)
	a, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "main", User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "main", Projects: []string{"staging"}, User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "release", User: "alice", Source: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if a.PullID != b.PullID || a.PullID == c.PullID || a.PullID == f.pullID || a.Kind != atoll.RequestDrift || b.Comment != `{"projects":["staging"]}` {
		t.Fatalf("requests %+v %+v %+v (pull request %d)", a, b, c, f.pullID)
	}
	for id, want := range map[int64]struct {
		number int
		branch string
	}{a.PullID: {-1, "main"}, c.PullID: {-2, "release"}} {
		p, err := db.Pull(ctx, id)
		if err != nil || p.Number != want.number || p.State != atoll.PullDrift || p.HeadRef != want.branch || p.BaseRef != want.branch {
			t.Fatalf("drift target %d: %+v, %v", id, p, err)
		}
	}
	events, err := db.Events(ctx, 10)
	if err != nil || len(events) < 3 || events[0].Action != "drift.check" || events[0].Detail != "branch release" {
		t.Fatalf("events %+v, %v", events, err)
	}
	if _, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("no branch: %v", err)
	}
}

// Pull requests' work is claimed before drift checks, and no more than
// DriftSlots checks run at once.
func TestClaimRequestDriftAfterPullRequests(t *testing.T) {
	ctx := context.Background()
	db := storetest.New(t)
	db.DriftSlots = 1
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := seed(t, db, 7)
	d1, _ := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "main"})
	d2, _ := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "release"})
	pr := &atoll.Request{PullID: f.pullID, Kind: atoll.RequestComment, Comment: "atlantis plan"}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.InsertRequest(pr) }); err != nil {
		t.Fatal(err)
	}
	var order []int64
	for range 3 {
		q, err := db.ClaimRequest(ctx, "n1")
		if err != nil {
			t.Fatal(err)
		}
		if q == nil {
			break
		}
		order = append(order, q.ID)
	}
	if len(order) != 2 || order[0] != pr.ID || order[1] != d1.ID {
		t.Fatalf("claimed %v; want the pull request's %d, then one drift check %d (one slot)", order, pr.ID, d1.ID)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.FinishRequest(d1.ID, atoll.RequestDone, "") }); err != nil {
		t.Fatal(err)
	}
	if q, err := db.ClaimRequest(ctx, "n1"); err != nil || q == nil || q.ID != d2.ID {
		t.Fatalf("after the first check: %+v, %v", q, err)
	}
}

// RecordDrift keeps since while the state stays, moves it when the state
// changes, and recording a job's result again changes nothing.
func TestRecordDrift(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	db := storetest.New(t)
	db.Now = func() time.Time { return now }
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := seed(t, db, 7)
	check := func(state string, add int) (*atoll.Request, int64) {
		t.Helper()
		req, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "main"})
		if err != nil {
			t.Fatal(err)
		}
		j := &atoll.Job{Kind: atoll.JobPlan, RequestID: req.ID, PullID: req.PullID, ProjectID: f.projectID, HeadSHA: "abc", Spec: atoll.JobSpec{Drift: true}}
		if err := db.Update(ctx, func(tx *store.Tx) error { return tx.InsertJob(j) }); err != nil {
			t.Fatal(err)
		}
		res := []atoll.DriftResult{{JobID: j.ID, ProjectID: f.projectID, State: state, Add: add}}
		if err := db.RecordDrift(ctx, req.ID, res, nil); err != nil {
			t.Fatal(err)
		}
		return req, j.ID
	}
	get := func() *atoll.DriftProject {
		t.Helper()
		ds, err := db.DriftProjects(ctx, atoll.DriftFilter{Repo: "acme/infra"})
		if err != nil || len(ds) != 1 {
			t.Fatalf("drift %v, %v", ds, err)
		}
		return ds[0]
	}
	check(atoll.DriftDrifted, 2)
	first := now
	now = now.Add(time.Hour)
	req, job := check(atoll.DriftDrifted, 3)
	if d := get(); !d.Since.Equal(first) || !d.CheckedAt.Equal(now) || d.Add != 3 || d.JobID != job || d.Dir != "staging" || d.Branch != "main" {
		t.Fatalf("drifted again: %+v", d)
	}
	now = now.Add(time.Hour)
	// The same results again (a resumed request): nothing moves.
	if err := db.RecordDrift(ctx, req.ID, []atoll.DriftResult{{JobID: job, ProjectID: f.projectID, State: atoll.DriftDrifted, Add: 3}}, nil); err != nil {
		t.Fatal(err)
	}
	if d := get(); !d.CheckedAt.Equal(now.Add(-time.Hour)) {
		t.Fatalf("recorded twice: %+v", d)
	}
	check(atoll.DriftInSync, 0)
	if d := get(); d.State != atoll.DriftInSync || !d.Since.Equal(now) || d.Add != 0 {
		t.Fatalf("in sync: %+v", d)
	}
	// The history: every check once, newest first.
	hist, err := db.DriftHistory(ctx, f.projectID, "main", 0)
	if err != nil || len(hist) != 3 || hist[0].State != atoll.DriftInSync || hist[1].Add != 3 || hist[2].Add != 2 || hist[1].JobID != job {
		t.Fatalf("history %v, %v", hist, err)
	}
	if ds, _ := db.DriftProjects(ctx, atoll.DriftFilter{State: atoll.DriftDrifted}); len(ds) != 0 {
		t.Fatalf("state filter: %v", ds)
	}
	if err := db.RecordDrift(ctx, 999, nil, nil); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("unknown request: %v", err)
	}
}

// Schedules are durable: a due check is queued once, in the transaction
// that moves its schedule on; slots missed while no node ran collapse into
// one check; a branch whose check is still queued gets no second one; a
// changed schedule is due anew, a removed one is gone.
func TestDriftSchedules(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 6, 30, 0, 0, time.UTC)
	db := storetest.New(t)
	db.Now = func() time.Time { return now }
	if err := db.Open(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f := seed(t, db, 7)
	// "hourly" is due on the hour, "daily" at midnight.
	next := func(schedule string, after time.Time) (time.Time, error) {
		switch schedule {
		case "hourly":
			return after.Truncate(time.Hour).Add(time.Hour), nil
		case "daily":
			return after.Truncate(24 * time.Hour).Add(24 * time.Hour), nil
		}
		return time.Time{}, fmt.Errorf("not a schedule")
	}
	want := []atoll.DriftSchedule{{RepoID: f.repoID, Branch: "main", Schedule: "hourly", Projects: []string{"envs/*"}}}
	if err := db.SyncDriftSchedules(ctx, want, next); err != nil {
		t.Fatal(err)
	}
	due := func() []*atoll.Request {
		t.Helper()
		reqs, err := db.QueueDueDrift(ctx, next)
		if err != nil {
			t.Fatal(err)
		}
		return reqs
	}
	if reqs := due(); len(reqs) != 0 {
		t.Fatalf("queued before its time: %+v", reqs)
	}
	now = time.Date(2026, 11, 27, 7, 0, 0, 0, time.UTC)
	reqs := due()
	if len(reqs) != 1 || reqs[0].Kind != atoll.RequestDrift || reqs[0].Comment != `{"globs":["envs/*"]}` || reqs[0].User != "atoll" {
		t.Fatalf("at 07:00: %+v", reqs)
	}
	if again := due(); len(again) != 0 {
		t.Fatalf("queued twice at 07:00: %+v", again)
	}
	// Three slots pass while the first check still waits: no pile-up.
	now = time.Date(2026, 11, 27, 10, 5, 0, 0, time.UTC)
	if busy := due(); len(busy) != 0 {
		t.Fatalf("queued beside a waiting check: %+v", busy)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.FinishRequest(reqs[0].ID, atoll.RequestDone, "") }); err != nil {
		t.Fatal(err)
	}
	// Down from 10:05 to 13:20: one check for the three missed slots.
	now = time.Date(2026, 11, 27, 13, 20, 0, 0, time.UTC)
	if missed := due(); len(missed) != 1 {
		t.Fatalf("after the downtime: %d checks", len(missed))
	}
	s, err := db.DriftSchedules(ctx)
	if err != nil || len(s) != 1 || !s[0].NextDueAt.Equal(time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)) || s[0].Projects[0] != "envs/*" {
		t.Fatalf("schedules %+v, %v", s, err)
	}
	// The same schedule again keeps its time; a new one is due anew.
	if err := db.SyncDriftSchedules(ctx, want, next); err != nil {
		t.Fatal(err)
	}
	if s, _ := db.DriftSchedules(ctx); !s[0].NextDueAt.Equal(time.Date(2026, 11, 27, 14, 0, 0, 0, time.UTC)) {
		t.Fatalf("resynced: %+v", s[0])
	}
	want[0].Schedule = "daily"
	if err := db.SyncDriftSchedules(ctx, want, next); err != nil {
		t.Fatal(err)
	}
	if s, _ := db.DriftSchedules(ctx); !s[0].NextDueAt.Equal(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("changed: %+v", s[0])
	}
	if err := db.SyncDriftSchedules(ctx, []atoll.DriftSchedule{{RepoID: f.repoID, Branch: "main", Schedule: "bogus"}}, next); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("a bad schedule: %v", err)
	}
	if err := db.SyncDriftSchedules(ctx, nil, next); err != nil {
		t.Fatal(err)
	}
	if s, _ := db.DriftSchedules(ctx); len(s) != 0 {
		t.Fatalf("removed: %+v", s)
	}
}

// DriftProjects gives each project its newest pending plan on the
// branch's drift target (a reconcile's, to approve and apply): not a pull
// request's plan of the project, nor an applied one.
func TestDriftProjectsPendingPlan(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 7)
	req, err := db.QueueDrift(ctx, atoll.DriftCheck{Repo: infra, Branch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	plan := func(pullID int64) *atoll.Plan {
		t.Helper()
		var p *atoll.Plan
		err := db.Update(ctx, func(tx *store.Tx) error {
			j := &atoll.Job{Kind: atoll.JobPlan, RequestID: req.ID, PullID: pullID, ProjectID: f.projectID, HeadSHA: "abc"}
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			p = &atoll.Plan{JobID: j.ID, PullID: pullID, ProjectID: f.projectID, HeadSHA: "abc", File: []byte(fmt.Sprint("plan ", j.ID)), ShowJSON: []byte("{}")}
			return tx.InsertUnlockedPlan(p)
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	get := func() *atoll.DriftProject {
		t.Helper()
		ds, err := db.DriftProjects(ctx, atoll.DriftFilter{Repo: "acme/infra"})
		if err != nil || len(ds) != 1 {
			t.Fatalf("drift %v, %v", ds, err)
		}
		return ds[0]
	}
	checked := plan(req.PullID)
	if err := db.RecordDrift(ctx, req.ID, []atoll.DriftResult{{JobID: checked.JobID, ProjectID: f.projectID, State: atoll.DriftDrifted, Add: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	if d := get(); d.PendingPlanID != checked.ID || d.PendingPlanSHA256 != checked.SHA256 {
		t.Fatalf("the check's plan: %+v, want plan %d", d, checked.ID)
	}
	plan(f.pullID) // a pull request's plan of the project
	reconcile := plan(req.PullID)
	if d := get(); d.PendingPlanID != reconcile.ID || d.PendingPlanSHA256 != reconcile.SHA256 {
		t.Fatalf("the reconcile's plan: %+v, want plan %d", d, reconcile.ID)
	}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.MarkUnlockedPlanApplied(reconcile.ID) }); err != nil {
		t.Fatal(err)
	}
	if d := get(); d.PendingPlanID != 0 || d.PendingPlanSHA256 != "" {
		t.Fatalf("after the apply: %+v", d)
	}
}
