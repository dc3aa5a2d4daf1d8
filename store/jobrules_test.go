package store_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store/storetest"
)

// The runner's lock rules are store methods now: TakeJobLocks records the
// job of each lock taken now (its spec and audit event) with the lock, and
// SkipJob gives back the lock of a plan that never ran but not an apply's.
func TestTakeJobLocksAndSkipJob(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	plan := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", User: "alice", Repo: "acme/infra", Pull: 1, Dir: "staging", Workspace: "default"}
	apply := &atoll.Job{Kind: atoll.JobApply, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", User: "alice", Repo: "acme/infra", Pull: 1, Dir: "staging", Workspace: "default"}
	if err := db.InsertJobs(ctx, []*atoll.Job{plan, apply}); err != nil {
		t.Fatal(err)
	}
	if plan.ID == 0 || apply.ID == 0 {
		t.Fatalf("job ids = %d, %d; want them set", plan.ID, apply.ID)
	}

	take := func() ([]atoll.LockClaim, map[int64]*atoll.Lock) {
		t.Helper()
		claims := []atoll.LockClaim{{ProjectID: f.projectID}}
		spec := plan.Spec
		spec.LockTaken = true
		takes := []atoll.LockTake{{JobID: plan.ID, Spec: spec, Event: atoll.Event{Actor: "alice", Action: "lock.take", Repo: "acme/infra", Pull: 1, Detail: "staging", Source: "test"}}}
		holders, err := db.TakeJobLocks(ctx, f.pullID, "alice", claims, takes)
		if err != nil {
			t.Fatal(err)
		}
		return claims, holders
	}
	claims, holders := take()
	if len(holders) != 0 || !claims[0].Taken {
		t.Fatalf("claims %+v, holders %+v; want the lock taken", claims, holders)
	}
	if j, err := db.Job(ctx, plan.ID); err != nil || !j.Spec.LockTaken {
		t.Fatalf("plan job = %+v, %v; want its spec to say the lock was taken", j, err)
	}
	events, err := db.AuditEvents(ctx, atoll.EventFilter{Action: "lock.take"})
	if err != nil || len(events) != 1 {
		t.Fatalf("lock.take events = %+v, %v; want one", events, err)
	}
	// Held already: nothing is taken now, so no second event.
	if claims, _ := take(); claims[0].Taken {
		t.Errorf("claims = %+v; a lock held already is not taken again", claims)
	}
	if events, err := db.AuditEvents(ctx, atoll.EventFilter{Action: "lock.take"}); err != nil || len(events) != 1 {
		t.Errorf("lock.take events = %d, %v; want still one", len(events), err)
	}

	// An apply that never runs keeps the lock (releasing would discard
	// the plan it was to apply).
	apply.Spec.LockTaken = true
	if err := db.SkipJob(ctx, apply, "not run", "test", "apply not run"); err != nil {
		t.Fatal(err)
	}
	if j, err := db.Job(ctx, apply.ID); err != nil || j.State != atoll.JobCanceled || j.Error != "not run" {
		t.Fatalf("apply job = %+v, %v; want canceled, not run", j, err)
	}
	if locks, err := db.PullLocks(ctx, f.pullID); err != nil || len(locks) != 1 {
		t.Fatalf("locks after a skipped apply = %v, %v; want the lock kept", locks, err)
	}
	// A plan that never runs gives back the lock its request took.
	plan.Spec.LockTaken = true
	if err := db.SkipJob(ctx, plan, "not run", "test", "plan not run"); err != nil {
		t.Fatal(err)
	}
	if locks, err := db.PullLocks(ctx, f.pullID); err != nil || len(locks) != 0 {
		t.Fatalf("locks after a skipped plan = %v, %v; want none", locks, err)
	}
	if events, err := db.AuditEvents(ctx, atoll.EventFilter{Action: "lock.release"}); err != nil || len(events) != 1 || events[0].Detail == "" {
		t.Errorf("lock.release events = %+v, %v; want one", events, err)
	}
}
