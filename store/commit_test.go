package store_test

import (
	"context"
	"database/sql/driver"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"modernc.org/sqlite"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// atoll_test_hook(n) calls the function in testHook (if any) with n and is
// true: a statement can run test code in the middle of its execution.
var testHook atomic.Pointer[func(int64)]

func init() {
	sqlite.MustRegisterScalarFunction("atoll_test_hook", 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		if f := testHook.Load(); f != nil {
			n, _ := args[0].(int64)
			(*f)(n)
		}
		return int64(1), nil
	})
}

// mark writes the row that shows name's writes were committed.
func mark(tx *store.Tx, name string) error {
	return tx.AddEvent(atoll.Event{Actor: "test", Action: name})
}

func markFn(name string) func(*store.Tx) error {
	return func(tx *store.Tx) error { return mark(tx, name) }
}

// reopen closes db, opens its file again and counts the events per action:
// what is there now was committed.
func reopen(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = storetest.Open(t, storetest.Path(db.Path))
	events, err := db.Events(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int{}
	for _, e := range events {
		rows[e.Action]++
	}
	return rows
}

// checkOutcomes checks that every caller was told success if and only if its
// rows were committed, and that each caller was told what want says
// (true: success).
func checkOutcomes(t *testing.T, names []string, told []error, rows map[string]int, want map[string]bool) {
	t.Helper()
	for i, name := range names {
		ok := told[i] == nil
		if ok != (rows[name] > 0) {
			t.Errorf("caller %s: told %v, but %d of its rows are committed", name, told[i], rows[name])
		}
		if ok != want[name] {
			t.Errorf("caller %s: told %v, want success=%v", name, told[i], want[name])
		}
	}
}

func TestGroupCommitCancelledCallers(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)

	// B's context ends while B's statement runs: that statement must not be
	// interrupted (SQLite would roll back the whole batch with it).
	ctxB, cancelB := context.WithCancel(ctx)
	defer cancelB()
	hook := func(n int64) {
		if n == 1 {
			cancelB()
			time.Sleep(50 * time.Millisecond) // leaves the driver time to interrupt
		}
	}
	testHook.Store(&hook)
	defer testHook.Store(nil)
	// D's context ends before its turn; E's in its turn, before it writes.
	ctxD, cancelD := context.WithCancel(ctx)
	cancelD()
	ctxE, cancelE := context.WithCancel(ctx)
	defer cancelE()

	names := []string{"A", "B", "C", "D", "E"}
	told := db.CommitBatch(
		store.Call{Ctx: ctx, Fn: markFn("A")},
		store.Call{Ctx: ctxB, Fn: func(tx *store.Tx) error {
			return tx.Exec(`INSERT INTO events (time, actor, action)
				SELECT 0, 'test', 'B' FROM (WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 20) SELECT n FROM c)
				WHERE atoll_test_hook(n)`)
		}},
		store.Call{Ctx: ctx, Fn: markFn("C")},
		store.Call{Ctx: ctxD, Fn: markFn("D")},
		store.Call{Ctx: ctxE, Fn: func(tx *store.Tx) error { cancelE(); return mark(tx, "E") }},
	)
	if !errors.Is(told[3], context.Canceled) {
		t.Errorf("D (cancelled before its turn) told %v, want context.Canceled", told[3])
	}
	rows := reopen(t, db)
	checkOutcomes(t, names, told, rows, map[string]bool{"A": true, "B": true, "C": true, "E": true})
	if rows["B"] != 20 {
		t.Errorf("B committed %d of its 20 rows", rows["B"])
	}
}

func TestGroupCommitFailingCallers(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	// A statement that makes SQLite roll back the whole transaction, as
	// SQLITE_FULL or SQLITE_IOERR may.
	if err := db.Update(ctx, func(tx *store.Tx) error {
		return tx.Exec(`CREATE TRIGGER abort_tx BEFORE INSERT ON events WHEN NEW.action LIKE 'abort%'
			BEGIN SELECT RAISE(ROLLBACK, 'test abort'); END`)
	}); err != nil {
		t.Fatal(err)
	}
	names := []string{"A", "B", "C", "D", "E", "F", "G", "H"}
	told := db.CommitBatch(
		store.Call{Ctx: ctx, Fn: markFn("A")},
		// B: a constraint violation (no such repository).
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			if err := mark(tx, "B"); err != nil {
				return err
			}
			_, err := tx.UpsertPull(999999, atoll.Pull{Number: 1})
			return err
		}},
		store.Call{Ctx: ctx, Fn: markFn("C")},
		// D: fn fails after writing.
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			if err := mark(tx, "D"); err != nil {
				return err
			}
			return atoll.Errorf(atoll.EINVALID, "D changed its mind")
		}},
		// E: its statement makes SQLite abandon the shared transaction.
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			if err := mark(tx, "E"); err != nil {
				return err
			}
			return mark(tx, "abort-E")
		}},
		store.Call{Ctx: ctx, Fn: markFn("F")},
		// G: the same, but G ignores the error and writes on: those writes
		// must not commit on their own.
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			_ = mark(tx, "abort-G")
			return mark(tx, "G")
		}},
		store.Call{Ctx: ctx, Fn: markFn("H")},
	)
	rows := reopen(t, db)
	checkOutcomes(t, names, told, rows, map[string]bool{"A": true, "C": true, "F": true, "H": true})
	for _, name := range []string{"A", "C", "F", "H"} {
		if rows[name] != 1 {
			t.Errorf("caller %s has %d rows, want 1 (run again, committed once)", name, rows[name])
		}
	}
	if !strings.Contains(atoll.ErrorMessage(told[3]), "D changed its mind") || !strings.Contains(told[4].Error(), "test abort") {
		t.Errorf("callers not told their own errors: D %v, E %v", told[3], told[4])
	}
}

// mountTmpfs mounts a small tmpfs (a disk that fills up) and returns its path.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("disk-full test needs to mount a tmpfs (run as root): %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fill writes path until the disk is full, then frees leave bytes.
func fill(t *testing.T, path string, leave int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); errors.Is(err, syscall.ENOSPC) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(max(st.Size()-leave, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestGroupCommitDiskFull(t *testing.T) {
	ctx := context.Background()
	dir := mountTmpfs(t, "2m")
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
	seed(t, db, 1)
	if err := db.WriteHealth(); err != nil {
		t.Fatalf("write health before = %v", err)
	}
	filler := filepath.Join(dir, "filler")
	fill(t, filler, 256<<10)

	// B's row does not fit: SQLite rolls back the shared transaction while
	// B's statement runs. D ignores that error and writes on.
	huge := strings.Repeat("x", 3<<20)
	names := []string{"A", "B", "C", "D"}
	told := db.CommitBatch(
		store.Call{Ctx: ctx, Fn: markFn("A")},
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			return tx.AddEvent(atoll.Event{Actor: "test", Action: "B", Detail: huge})
		}},
		store.Call{Ctx: ctx, Fn: markFn("C")},
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			_ = tx.AddEvent(atoll.Event{Actor: "test", Action: "D", Detail: huge})
			return mark(tx, "D")
		}},
	)
	if told[1] == nil || !strings.Contains(told[1].Error(), "full") {
		t.Errorf("B told %v, want disk full", told[1])
	}
	if err := db.WriteHealth(); err != nil {
		t.Errorf("write health after A and C committed = %v", err)
	}

	// No room at all: the COMMIT itself fails, for every caller.
	fill(t, filler, 0)
	big := strings.Repeat("y", 1<<20)
	names = append(names, "E", "F")
	told = append(told, db.CommitBatch(
		store.Call{Ctx: ctx, Fn: func(tx *store.Tx) error {
			return tx.AddEvent(atoll.Event{Actor: "test", Action: "E", Detail: big})
		}},
		store.Call{Ctx: ctx, Fn: markFn("F")},
	)...)
	if told[4] == nil || told[5] == nil {
		t.Errorf("commit on a full disk: E told %v, F told %v", told[4], told[5])
	}
	if err := db.WriteHealth(); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("write health on a full disk = %v", err)
	}
	// A write that changes nothing commits but proves nothing.
	if err := db.Update(ctx, func(*store.Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if db.WriteHealth() == nil {
		t.Error("write health cleared by an empty commit while the disk is full")
	}

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	names = append(names, "G")
	told = append(told, db.Update(ctx, markFn("G")))
	if err := db.WriteHealth(); err != nil {
		t.Errorf("write health after space was freed = %v", err)
	}
	rows := reopen(t, db)
	checkOutcomes(t, names, told, rows, map[string]bool{"A": true, "C": true, "G": true})
}

func TestClaimRequestFailedWriteReturnsNoRequest(t *testing.T) {
	ctx := context.Background()
	dir := mountTmpfs(t, "2m")
	db := storetest.Open(t, storetest.Path(filepath.Join(dir, "atoll.db")))
	f := seed(t, db, 1)
	req := &atoll.Request{PullID: f.pullID, Kind: atoll.RequestAutoplan}
	if err := db.Update(ctx, func(tx *store.Tx) error { return tx.InsertRequest(req) }); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(dir, "filler")
	fill(t, filler, 0)
	got, err := db.ClaimRequest(ctx, "n1")
	if err == nil || got != nil {
		t.Fatalf("claim on a full disk = %+v, %v; want no request and an error", got, err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	// The failed claim left the request queued.
	got, err = db.ClaimRequest(ctx, "n1")
	if err != nil || got == nil || got.ID != req.ID {
		t.Fatalf("claim after space was freed = %+v, %v", got, err)
	}
}
