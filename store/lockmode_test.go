package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// unlockedPlanFor stores a plan made without the lock (repo_locks modes
// on_apply and disabled), as planFor does with it.
func unlockedPlanFor(t *testing.T, db *store.DB, pullID, projectID int64) *atoll.Plan {
	t.Helper()
	plan, err := storePlan(db, pullID, projectID, (*store.Tx).InsertUnlockedPlan)
	if err != nil {
		t.Fatalf("unlocked plan of pull %d: %v", pullID, err)
	}
	return plan
}

// Plans made without the lock are stored while another pull request holds
// it, still replace the pull request's older plan, and still apply once.
func TestUnlockedPlans(t *testing.T) {
	db := storetest.Open(t)
	a, b := seed(t, db, 1), seed(t, db, 2)
	project := a.projectID
	takeLock(t, db, project, a.pullID) // e.g. pull 1 applied with on_apply

	older := unlockedPlanFor(t, db, b.pullID, project)
	newer := unlockedPlanFor(t, db, b.pullID, project)
	if plans := pendingPlans(t, db, b.pullID); len(plans) != 1 || plans[0].ID != newer.ID {
		t.Fatalf("pending plans of pull 2 = %+v, want only the newer", plans)
	}

	// on_apply: the apply needs the lock, which pull 1 holds.
	err := markApplied(db, newer.ID)
	if atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "no longer holds the project's lock") {
		t.Fatalf("locked apply of pull 2's plan while pull 1 holds the lock: %v, want conflict", err)
	}
	// disabled: no lock is checked, but a plan applies once and an older
	// (discarded) plan never.
	unlocked := func(id int64) error {
		return db.Update(context.Background(), func(tx *store.Tx) error { return tx.MarkUnlockedPlanApplied(id) })
	}
	if err := unlocked(newer.ID); err != nil {
		t.Fatalf("unlocked apply: %v", err)
	}
	for name, id := range map[string]int64{"second apply": newer.ID, "discarded plan": older.ID} {
		if err := unlocked(id); atoll.ErrorCode(err) != atoll.ECONFLICT || !strings.Contains(atoll.ErrorMessage(err), "already applied or discarded") {
			t.Errorf("%s: %v, want conflict", name, err)
		}
	}
}
