package store_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// openHooked opens a database whose AfterCommit hook is hook.
func openHooked(t *testing.T, hook func(context.Context) error) *store.DB {
	t.Helper()
	db := storetest.Open(t, storetest.AfterCommit(hook))
	return db
}

// countEvents counts the committed events of action name.
func countEvents(t *testing.T, db *store.DB, name string) int {
	t.Helper()
	events, err := db.Events(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events {
		if e.Action == name {
			n++
		}
	}
	return n
}

func TestAfterCommitFailureIsUnavailable(t *testing.T) {
	ctx := context.Background()
	var fail atomic.Bool
	var calls atomic.Int32
	db := openHooked(t, func(context.Context) error {
		calls.Add(1)
		if fail.Load() {
			return errors.New("replica unreachable")
		}
		return nil
	})

	fail.Store(true)
	told := db.CommitBatch(
		store.Call{Ctx: ctx, Fn: markFn("A")},
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			if err := mark(tx, "B"); err != nil {
				return err
			}
			return atoll.Errorf(atoll.EINVALID, "B changed its mind")
		}},
		store.Call{Ctx: ctx, Fn: markFn("C")},
	)
	if n := calls.Load(); n != 1 {
		t.Fatalf("hook called %d times for one batch, want 1", n)
	}
	for _, i := range []int{0, 2} {
		if atoll.ErrorCode(told[i]) != atoll.EUNAVAILABLE || !strings.Contains(atoll.ErrorMessage(told[i]), "not replicated") ||
			!strings.Contains(told[i].Error(), "replica unreachable") {
			t.Errorf("caller %d told %v, want EUNAVAILABLE not replicated, with the cause", i, told[i])
		}
		if strings.Contains(atoll.ErrorMessage(told[i]), "replica unreachable") {
			t.Errorf("caller %d: the cause is in the user-visible message %q", i, atoll.ErrorMessage(told[i]))
		}
	}
	if !strings.Contains(atoll.ErrorMessage(told[1]), "B changed its mind") {
		t.Errorf("caller with its own error told %v", told[1])
	}
	if err := db.WriteHealth(); atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Errorf("write health after a failed hook = %v, want EUNAVAILABLE", err)
	}
	// The writes are committed locally all the same (the node must fence:
	// the replica is what counts).
	if countEvents(t, db, "A") != 1 || countEvents(t, db, "B") != 0 {
		t.Errorf("local rows: A %d, B %d", countEvents(t, db, "A"), countEvents(t, db, "B"))
	}

	// A batch that changes nothing does not call the hook, nor clear health.
	if err := db.Update(ctx, func(*store.Tx) error { return nil }); err != nil {
		t.Fatalf("read-only update: %v", err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("hook called for a batch that changed nothing (%d calls)", n)
	}
	if db.WriteHealth() == nil {
		t.Error("write health cleared by a batch that changed nothing")
	}

	fail.Store(false)
	if err := db.Update(ctx, markFn("D")); err != nil {
		t.Fatalf("update after the replica is back: %v", err)
	}
	if err := db.WriteHealth(); err != nil {
		t.Errorf("write health after a replicated commit = %v", err)
	}
}

func TestAfterCommitRunsBeforeCallersAreAnswered(t *testing.T) {
	ctx := context.Background()
	entered := make(chan int, 1) // events seen by the hook
	release := make(chan struct{})
	var db *store.DB
	db = openHooked(t, func(ctx context.Context) error {
		// The batch is committed when the hook runs: a reader sees it.
		events, err := db.Events(ctx, 1000)
		if err != nil {
			return err
		}
		entered <- len(events)
		<-release
		return nil
	})

	answered := make(chan error, 1)
	go func() { answered <- db.Update(ctx, markFn("A")) }()
	select {
	case n := <-entered:
		if n != 1 {
			t.Errorf("hook saw %d events, want the batch's 1 (committed before the hook)", n)
		}
	case err := <-answered:
		t.Fatalf("caller answered (%v) before the hook ran", err)
	case <-time.After(10 * time.Second):
		t.Fatal("hook never called")
	}
	select {
	case err := <-answered:
		t.Fatalf("caller answered (%v) while the hook was still running", err)
	default:
	}
	close(release)
	if err := <-answered; err != nil {
		t.Fatalf("update: %v", err)
	}
}

func TestAfterCommitOncePerBatch(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	db := storetest.Open(t, storetest.AfterCommit(func(context.Context) error { calls.Add(1); return nil }))
	var batch []store.Call
	for _, name := range []string{"A", "B", "C", "D", "E"} {
		batch = append(batch, store.Call{Ctx: ctx, Fn: markFn(name)})
	}
	for i, err := range db.CommitBatch(batch...) {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("hook called %d times for a batch of 5, want 1", n)
	}
}

func TestNoAutoCheckpoint(t *testing.T) {
	for _, off := range []bool{false, true} {
		db := storetest.Open(t, func(db *store.DB) { db.NoAutoCheckpoint = off })
		got, err := db.WriteAutoCheckpoint()
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1000, true: 0}[off]; got != want {
			t.Errorf("NoAutoCheckpoint=%v: wal_autocheckpoint = %d, want %d", off, got, want)
		}
	}
}
