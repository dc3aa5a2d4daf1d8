package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// planFor makes a plan job for pull on project and stores its plan in the
// same transaction, as runPlan does; it returns the plan, or the error.
func planFor(t *testing.T, db *store.DB, pullID, projectID int64) (*atoll.Plan, error) {
	t.Helper()
	return storePlan(db, pullID, projectID, (*store.Tx).InsertPlan)
}

// storePlan makes a plan job for pull on project and stores its plan with
// insert, in one transaction.
func storePlan(db *store.DB, pullID, projectID int64, insert func(*store.Tx, *atoll.Plan) error) (*atoll.Plan, error) {
	var plan *atoll.Plan
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		job := &atoll.Job{Kind: atoll.JobPlan, PullID: pullID, ProjectID: projectID, HeadSHA: "abc"}
		if err := tx.InsertJob(job); err != nil {
			return err
		}
		plan = &atoll.Plan{JobID: job.ID, PullID: pullID, ProjectID: projectID, HeadSHA: "abc", File: []byte("plan"), ShowJSON: []byte("{}")}
		return insert(tx, plan)
	})
	return plan, err
}

func takeLock(t *testing.T, db *store.DB, projectID, pullID int64) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		holder, err := tx.TakeLock(projectID, pullID, "alice")
		if err == nil && holder != nil {
			t.Errorf("project %d is locked by pull #%d", projectID, holder.Pull)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func markApplied(db *store.DB, planID int64) error {
	return db.Update(context.Background(), func(tx *store.Tx) error { return tx.MarkPlanApplied(planID) })
}

func pendingPlans(t *testing.T, db *store.DB, pullID int64) []*atoll.Plan {
	t.Helper()
	plans, err := db.PendingPlans(context.Background(), pullID)
	if err != nil {
		t.Fatal(err)
	}
	return plans
}

func TestPlansNeedTheLock(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	a, b := seed(t, db, 1), seed(t, db, 2) // one project, two pull requests
	project := a.projectID

	// Happy path: the holder stores a plan and applies it.
	takeLock(t, db, project, a.pullID)
	applied, err := planFor(t, db, a.pullID, project)
	if err != nil {
		t.Fatalf("plan while holding the lock: %v", err)
	}
	if err := markApplied(db, applied.ID); err != nil {
		t.Fatalf("apply while holding the lock: %v", err)
	}

	// An unlock (comment, close, API) while pull 1's plan runs: the plan
	// finishes after its lock is gone and must not be kept.
	if err := db.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: a.pullID}, "bob", "127.0.0.1", "locks.unlock", "test")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := planFor(t, db, a.pullID, project); atoll.ErrorCode(err) != atoll.ECONFLICT ||
		!strings.Contains(atoll.ErrorMessage(err), "lock was released while planning") {
		t.Fatalf("plan after its lock was released: %v, want conflict", err)
	}
	if plans := pendingPlans(t, db, a.pullID); len(plans) != 0 {
		t.Fatalf("pending plans of pull 1 = %d, want none", len(plans))
	}
	if jobs, err := db.PullJobs(ctx, a.pullID); err != nil || len(jobs) != 1 {
		t.Fatalf("jobs of pull 1 = %d, %v: the refused plan's transaction wrote", len(jobs), err)
	}

	// Pull 2 takes the lock and plans.
	takeLock(t, db, project, b.pullID)
	mine, err := planFor(t, db, b.pullID, project)
	if err != nil {
		t.Fatalf("plan of the new holder: %v", err)
	}

	// A pending pull-1 plan from before the lock was released (as earlier
	// versions could leave one) must not apply beside pull 2's.
	stale := insertStalePlan(t, db, a.pullID, project)
	err = markApplied(db, stale)
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "no longer holds the project's lock") {
		t.Fatalf("apply of pull 1's plan while pull 2 holds the lock: %v, want conflict", err)
	}
	if err := markApplied(db, mine.ID); err != nil {
		t.Fatalf("apply of the holder's plan: %v", err)
	}
	if err := markApplied(db, mine.ID); atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "already applied") {
		t.Fatalf("second apply: %v", err)
	}
	if err := markApplied(db, 424242); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("apply of a missing plan: %v", err)
	}
}

// insertStalePlan stores a pending plan for pull without the lock check, as
// a database written before plans needed the lock may hold, and returns its id.
func insertStalePlan(t *testing.T, db *store.DB, pullID, projectID int64) int64 {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		job := &atoll.Job{Kind: atoll.JobPlan, PullID: pullID, ProjectID: projectID, HeadSHA: "abc"}
		if err := tx.InsertJob(job); err != nil {
			return err
		}
		return tx.Exec(`INSERT INTO plans (job_id, pull_id, project_id, head_sha, file, sha256, show_json, add_count, change_count, destroy_count, created_at)
			VALUES (?, ?, ?, 'abc', x'00', '', x'00', 0, 0, 0, 0)`, job.ID, pullID, projectID)
	})
	if err != nil {
		t.Fatal(err)
	}
	plans := pendingPlans(t, db, pullID)
	if len(plans) != 1 {
		t.Fatalf("pending plans of pull %d = %d, want the stale one", pullID, len(plans))
	}
	return plans[0].ID
}

func TestReleaseLocksDiscardsTheirPlans(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 1)
	var prod int64
	if err := db.Update(ctx, func(tx *store.Tx) (err error) {
		prod, err = tx.UpsertProject(f.repoID, atoll.Project{Dir: "production", Workspace: "default"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	lockAndPlan := func() {
		t.Helper()
		for _, project := range []int64{f.projectID, prod} {
			takeLock(t, db, project, f.pullID)
			if _, err := planFor(t, db, f.pullID, project); err != nil {
				t.Fatal(err)
			}
		}
	}
	release := func(sel atoll.LockSelector) ([]*atoll.Lock, error) {
		var locks []*atoll.Lock
		err := db.Update(ctx, func(tx *store.Tx) (err error) {
			locks, err = tx.ReleaseLocks(sel, "bob", "10.0.0.9", "locks.test", "because")
			return err
		})
		return locks, err
	}
	events := func() []atoll.Event {
		t.Helper()
		evs, err := db.Events(ctx, 1000)
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}

	// A whole pull request: every lock and every unapplied plan.
	lockAndPlan()
	before := len(events())
	released, err := release(atoll.LockSelector{PullID: f.pullID})
	if err != nil || len(released) != 2 {
		t.Fatalf("release pull = %d locks, %v", len(released), err)
	}
	if locks, _ := db.Locks(ctx); len(locks) != 0 {
		t.Fatalf("locks left: %+v", locks)
	}
	if plans := pendingPlans(t, db, f.pullID); len(plans) != 0 {
		t.Fatalf("pending plans left: %d", len(plans))
	}
	evs := events()
	if len(evs) != before+1 || evs[0].Action != "locks.test" || evs[0].Actor != "bob" || evs[0].Source != "10.0.0.9" || evs[0].Repo != "acme/infra" || evs[0].Pull != 1 ||
		!strings.HasPrefix(evs[0].Detail, "because: released 2 lock(s)") {
		t.Fatalf("audit events = %d (was %d), newest %+v", len(evs), before, evs[0])
	}

	// One lock: only that project's lock and plan go.
	lockAndPlan()
	locks, err := db.Locks(ctx)
	if err != nil || len(locks) != 2 {
		t.Fatalf("locks = %v, %v", locks, err)
	}
	released, err = release(atoll.LockSelector{LockID: locks[0].ID})
	if err != nil || len(released) != 1 || released[0].Dir != "staging" {
		t.Fatalf("release lock = %+v, %v", released, err)
	}
	if left, _ := db.Locks(ctx); len(left) != 1 || left[0].Dir != "production" {
		t.Fatalf("locks left: %+v", left)
	}
	if plans := pendingPlans(t, db, f.pullID); len(plans) != 1 || plans[0].ProjectID != prod {
		t.Fatalf("pending plans left: %+v", plans)
	}
	if evs := events(); evs[0].Detail != "because: released 1 lock(s): dir staging workspace default" {
		t.Fatalf("audit detail = %q", evs[0].Detail)
	}

	// A missing lock writes nothing.
	before = len(events())
	if _, err := release(atoll.LockSelector{LockID: locks[0].ID}); atoll.ErrorCode(err) != atoll.ENOTFOUND {
		t.Fatalf("release of a missing lock: %v", err)
	}
	if _, err := release(atoll.LockSelector{}); err == nil {
		t.Fatal("release with no selection succeeded")
	}
	if after := len(events()); after != before {
		t.Fatalf("failed releases wrote %d events", after-before)
	}
}
