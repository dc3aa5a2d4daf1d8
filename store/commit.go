package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/atollhq/atoll"
)

// Group commit. The rule: a caller of Update is told success if and only if
// its writes are committed, and one caller's failure never changes another
// caller's outcome.
//
// How it holds:
//   - Statements never run under a caller's context. modernc.org/sqlite
//     interrupts SQLite when a context ends, and an interrupted write can
//     roll back the whole shared transaction. A caller whose context ended
//     before its turn is skipped with ctx.Err(), having written nothing.
//   - SQLite may also abandon the transaction by itself (SQLITE_FULL,
//     SQLITE_IOERR, SQLITE_NOMEM, RAISE(ROLLBACK)). Hooks on the write
//     connection see every rollback, and veto every commit except the
//     batch's own COMMIT, so that after such a rollback no statement can
//     commit on its own outside the batch.
//   - When the transaction is lost during one caller's turn, that caller is
//     told its error and the callers that had succeeded or not run yet are
//     run again, from scratch, in a new transaction. This is why Update's
//     fn may run more than once.
//   - When COMMIT fails, every caller in the batch is told so, and nothing
//     of theirs is committed.
//   - With replication (DB.AfterCommit set), success also means replicated:
//     the hook runs once per batch that changed something, after COMMIT and
//     before any caller is answered. If it fails, the callers whose writes
//     committed are told EUNAVAILABLE (their writes are on this disk only).

// writeReq is one caller of Update.
type writeReq struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan error
}

// Update runs fn in a write transaction and returns once it is committed (or
// failed): nil means fn's writes are committed, an error means none are.
// fn may share the transaction with other callers but runs inside its own
// savepoint, so its error undoes only its own changes.
//
// fn may be called more than once (when SQLite abandons a shared
// transaction, the surviving callers run again in a new one): it must do
// nothing outside tx that a second run would not redo, and must assign
// rather than accumulate into variables it captures. It must return the
// errors of tx's methods. fn must not call Update.
func (db *DB) Update(ctx context.Context, fn func(*Tx) error) error {
	if !db.writable.Load() {
		// Not opened for writing (a standby's copy), or closed.
		return atoll.Errorf(atoll.EUNAVAILABLE, "The database is not open for writing on this node.")
	}
	req := writeReq{ctx: ctx, fn: fn, done: make(chan error, 1)}
	select {
	case db.reqs <- req:
	case <-db.closing:
		return errClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	// Once handed over the write will be attempted; wait for its outcome even
	// if ctx ends so that callers never report success or failure wrongly.
	return <-req.done
}

var errClosed = errors.New("store: database closed")

// WriteHealth returns nil while the database can be written: it is the
// error of the last failed write transaction (a failed COMMIT, or a
// transaction SQLite rolled back, e.g. because the disk is full) or of the
// last failed AfterCommit hook, cleared by the next commit that changes
// something (and whose hook succeeds).
func (db *DB) WriteHealth() error { return db.health.get() }

func (db *DB) writer() {
	defer close(db.done)
	if db.AfterCommit != nil {
		db.syncq = make(chan replicating, 1024)
		synced := make(chan struct{})
		go func() { defer close(synced); db.syncer() }()
		defer func() { close(db.syncq); <-synced }()
	}
	for {
		var batch []writeReq
		select {
		case first := <-db.reqs:
			batch = append(batch, first)
		case batch = <-db.batches:
		case <-db.closing:
			return
		}
	drain:
		for len(batch) < maxBatch {
			select {
			case r := <-db.reqs:
				batch = append(batch, r)
			default:
				break drain
			}
		}
		db.commit(batch)
	}
}

// commit runs a batch and tells every caller its outcome.
func (db *DB) commit(batch []writeReq) {
	errs := make([]error, len(batch))
	todo := make([]int, len(batch))
	for i := range todo {
		todo[i] = i
	}
	// Every attempt settles at least one caller, so this ends. Only the
	// last attempt can commit: the others lost their transaction.
	var changed bool
	for len(todo) > 0 {
		todo, changed = db.attempt(batch, todo, errs)
	}
	switch {
	case changed && db.syncq != nil:
		// Its callers are answered once the batch is in the replica; the
		// writer goes on with the next batch meanwhile.
		db.syncq <- replicating{batch, errs}
		return
	case changed:
		db.health.set(nil)
	}
	answer(batch, errs)
}

func answer(batch []writeReq, errs []error) {
	for i, r := range batch {
		r.done <- errs[i]
	}
}

// replicating is a committed batch whose callers wait for replication.
type replicating struct {
	batch []writeReq
	errs  []error
}

// syncer runs the AfterCommit hook (the replication barrier) for committed
// batches and then answers their callers. One run covers every batch
// committed before it started, so while one sync is in flight the writer
// commits the next batches, and the following sync takes them all: a burst
// costs a few syncs, not one per batch, and no caller is told success
// before its write is in the replica.
func (db *DB) syncer() {
	for first := range db.syncq {
		group := []replicating{first}
	more:
		for {
			select {
			case r, ok := <-db.syncq:
				if !ok {
					break more
				}
				group = append(group, r)
			default:
				break more
			}
		}
		// Not a caller's context: the hook must finish (or fail) for the
		// whole group, whoever stops waiting.
		err := db.AfterCommit(context.Background())
		if err != nil {
			// The cause (endpoints, paths) is for the logs, not for users.
			err = fmt.Errorf("%w (%w)", atoll.Errorf(atoll.EUNAVAILABLE, "The write was not replicated."), err)
		}
		db.health.set(err)
		for _, g := range group {
			for i := range g.errs {
				if g.errs[i] == nil {
					g.errs[i] = err
				}
			}
			answer(g.batch, g.errs)
		}
	}
}

// attempt runs the callers todo (indexes into batch) in one transaction. It
// records the outcome of each caller it settles in errs and returns the
// callers to run again because SQLite abandoned the transaction, and whether
// it committed a change.
func (db *DB) attempt(batch []writeReq, todo []int, errs []error) (again []int, changed bool) {
	ctx := context.Background()
	failAll := func(err error) ([]int, bool) {
		for _, i := range todo {
			errs[i] = err
		}
		db.health.set(err)
		return nil, false
	}
	db.gate.open.Store(true)
	defer db.gate.open.Store(false)
	sqlTx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return failAll(fmt.Errorf("store begin: %w", err))
	}
	db.gate.rolledBack.Store(false)
	tx := &Tx{tx: sqlTx, ctx: ctx, now: db.Now()}
	changesBefore, err := tx.totalChanges()
	if err != nil {
		sqlTx.Rollback()
		return failAll(err)
	}
	results := make([]error, len(todo))
	for k, i := range todo {
		r := batch[i]
		if err := r.ctx.Err(); err != nil {
			results[k] = err
			continue
		}
		ferr, sperr := tx.savepoint(r.fn)
		if sperr == nil && !db.gate.rolledBack.Load() {
			results[k] = ferr
			continue
		}
		// The transaction is lost (or a savepoint cannot be undone): end
		// whatever is left of it. This caller is told its own error; the
		// others did nothing wrong and run again.
		sqlTx.Rollback()
		switch {
		case ferr != nil && db.gate.rolledBack.Load():
			// sperr only says that the savepoint went with the transaction.
		case ferr != nil:
			ferr = errors.Join(ferr, sperr)
		case sperr != nil:
			ferr = sperr
		default:
			ferr = errors.New("store: SQLite rolled back the write transaction")
		}
		errs[i] = ferr
		if isWriteFailure(ferr) {
			db.health.set(ferr)
		}
		for kk, j := range todo[:k] {
			if results[kk] == nil {
				again = append(again, j)
			} else {
				errs[j] = results[kk] // its own failure; its savepoint was undone
			}
		}
		return append(again, todo[k+1:]...), false
	}
	changesAfter, err := tx.totalChanges()
	if err != nil {
		sqlTx.Rollback()
		return failAll(err)
	}
	db.gate.open.Store(false)
	if err := sqlTx.Commit(); err != nil {
		// The driver rolls back a failed COMMIT; make sure, so that nothing
		// of a batch whose callers are told it failed commits later.
		db.write.ExecContext(ctx, `ROLLBACK`)
		return failAll(fmt.Errorf("store commit: %w", err))
	}
	for k, i := range todo {
		errs[i] = results[k]
	}
	// Only now, committed: an attempt that was lost never gets here, and
	// a failed caller's changes went with its savepoint.
	db.publish(tx.changes)
	return nil, changesAfter != changesBefore
}

// savepoint runs fn in a savepoint and returns fn's error. sperr reports
// that the savepoint could not be opened, undone or released: the
// transaction is then unusable.
func (tx *Tx) savepoint(fn func(*Tx) error) (ferr, sperr error) {
	if _, err := tx.exec(`SAVEPOINT sp`); err != nil {
		return nil, fmt.Errorf("store savepoint: %w", err)
	}
	mark := len(tx.changes)
	ferr = fn(tx)
	if ferr != nil {
		tx.changes = tx.changes[:mark] // undone with the savepoint
		if _, err := tx.exec(`ROLLBACK TO sp`); err != nil {
			return ferr, fmt.Errorf("store rollback: %w", err)
		}
	}
	if _, err := tx.exec(`RELEASE sp`); err != nil {
		return ferr, fmt.Errorf("store release: %w", err)
	}
	return ferr, nil
}

// totalChanges counts the rows this connection has ever changed, to tell a
// commit that wrote something from an empty one.
func (tx *Tx) totalChanges() (n int64, err error) {
	if err := tx.queryRow(`SELECT total_changes()`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store total changes: %w", err)
	}
	return n, nil
}

// commitGate is told of every commit and rollback on the write connection.
type commitGate struct {
	// open is set while a batch's transaction is open, before its COMMIT:
	// any commit then is a statement committing on its own after SQLite
	// abandoned the transaction, and is vetoed (turned into a rollback).
	open       atomic.Bool
	rolledBack atomic.Bool
}

func (g *commitGate) onCommit() int32 {
	if g.open.Load() {
		return 1
	}
	return 0
}

func (g *commitGate) onRollback() { g.rolledBack.Store(true) }

// gatedConnector opens write connections with the gate's hooks installed.
type gatedConnector struct {
	driver.Connector
	gate *commitGate
}

func (c gatedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	h, ok := conn.(sqlite.HookRegisterer)
	if !ok {
		conn.Close()
		return nil, errors.New("store: the sqlite driver offers no commit hooks")
	}
	h.RegisterCommitHook(c.gate.onCommit)
	h.RegisterRollbackHook(c.gate.onRollback)
	return conn, nil
}

// isWriteFailure reports whether err says the database cannot be written
// (as opposed to a caller's own mistake, such as a constraint violation).
func isWriteFailure(err error) bool {
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary result code
	case sqlite3.SQLITE_FULL, sqlite3.SQLITE_IOERR, sqlite3.SQLITE_NOMEM, sqlite3.SQLITE_CORRUPT,
		sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_READONLY, sqlite3.SQLITE_BUSY:
		return true
	}
	return false
}

type writeHealth struct {
	mu  sync.Mutex
	err error
}

func (h *writeHealth) get() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

func (h *writeHealth) set(err error) {
	h.mu.Lock()
	h.err = err
	h.mu.Unlock()
}
