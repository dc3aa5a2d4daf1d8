package store_test

import (
	"context"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// A request takes the locks of all its projects or none: when another pull
// request holds one, no other lock is taken and the holder is named.
func TestTakeLocksAllOrNone(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	a, b := seed(t, db, 1), seed(t, db, 2) // project "staging", pulls #1 and #2
	var other int64
	if err := db.Update(ctx, func(tx *store.Tx) (err error) {
		other, err = tx.UpsertProject(a.repoID, atoll.Project{Dir: "prod", Workspace: "default"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	takeLock(t, db, a.projectID, b.pullID) // #2 holds staging

	take := func(pullID int64, claims []atoll.LockClaim) map[int64]*atoll.Lock {
		t.Helper()
		var holders map[int64]*atoll.Lock
		if err := db.Update(ctx, func(tx *store.Tx) (err error) {
			holders, err = tx.TakeLocks(pullID, "alice", claims)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return holders
	}
	claims := []atoll.LockClaim{{ProjectID: other}, {ProjectID: a.projectID}}
	holders := take(a.pullID, claims)
	if len(holders) != 1 || holders[a.projectID] == nil || holders[a.projectID].Pull != 2 {
		t.Fatalf("holders = %+v; want staging held by #2", holders)
	}
	if claims[0].Taken || claims[1].Taken {
		t.Errorf("claims = %+v; nothing may be taken", claims)
	}
	if locks, err := db.PullLocks(ctx, a.pullID); err != nil || len(locks) != 0 {
		t.Fatalf("pull #1 locks = %v, %v; want none (all or none)", locks, err)
	}

	// Once #2 gives staging up, #1 takes both; a lock it holds already
	// is not taken again.
	if err := db.Update(ctx, func(tx *store.Tx) error {
		_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: b.pullID}, "bob", "test", "lock.release", "test")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	takeLock(t, db, other, a.pullID)
	claims = []atoll.LockClaim{{ProjectID: other}, {ProjectID: a.projectID}}
	if holders := take(a.pullID, claims); len(holders) != 0 {
		t.Fatalf("holders = %+v; want none", holders)
	}
	if claims[0].Taken || !claims[1].Taken {
		t.Errorf("claims = %+v; want only staging newly taken", claims)
	}
	if locks, err := db.PullLocks(ctx, a.pullID); err != nil || len(locks) != 2 {
		t.Fatalf("pull #1 locks = %v, %v; want 2", locks, err)
	}
}
