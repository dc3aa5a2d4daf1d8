// Package store keeps all of Atoll's durable state in one SQLite database
// (modernc.org/sqlite, WAL mode). Writes go through a single writer goroutine
// that commits concurrent callers together (group commit), so that a burst of
// webhooks costs one fsync rather than one each; reads use a separate pool.
package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"modernc.org/sqlite" // also registers the "sqlite" driver

	"github.com/atollhq/atoll"
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// maxBatch bounds how many callers share one transaction.
const maxBatch = 128

// DB is the SQLite database.
type DB struct {
	Path string

	write *sql.DB // exactly one connection, used only by the writer goroutine
	// read is the pool of read-only connections. A standby swaps it: a
	// reader of its follower copy first (OpenReader), then Open's own.
	read     atomic.Pointer[sql.DB]
	writable atomic.Bool // Open succeeded and Close has not begun

	reqs    chan writeReq
	batches chan []writeReq  // a whole batch at once: tests (export_test.go)
	syncq   chan replicating // committed batches waiting for AfterCommit
	closing chan struct{}
	done    chan struct{}
	once    sync.Once

	gate   commitGate
	health writeHealth

	// Now is the clock; tests may replace it before Open.
	Now func() time.Time

	// AfterCommit, if set (before Open), is called by the writer once after
	// each batch whose COMMIT changed something, before any caller of the
	// batch is answered: with replication it is the durability barrier
	// (replica.Replicator.Sync), so a burst of writes costs one round trip.
	// If it fails, the batch's callers are told EUNAVAILABLE.
	AfterCommit func(ctx context.Context) error

	// NoAutoCheckpoint (set before Open) turns off SQLite's automatic WAL
	// checkpoints on the write connection. Set it when Litestream replicates
	// the file: Litestream checkpoints the WAL itself (after copying it), and
	// the application's checkpoints would only repeat that work inside the
	// commit path. Without a replicator the WAL would grow without bound.
	NoAutoCheckpoint bool

	// DriftSlots bounds the drift checks (atoll.RequestDrift) that run at
	// once (0: 1): pull requests' work is claimed first, and a drift
	// backlog never takes every worker.
	DriftSlots int

	// Changes, if set (before Open), is told of every committed change that
	// a transaction notified (Tx.Notify), once, after its COMMIT: the
	// dashboard's live pages listen to it.
	Changes atoll.ChangeService
}

// NewDB returns a DB for the file at path; call Open before use.
func NewDB(path string) *DB {
	return &DB{Path: path, Now: func() time.Time { return time.Now().UTC() }}
}

func (db *DB) dsn(readOnly bool) string {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "foreign_keys(1)", "journal_mode(WAL)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
		if db.NoAutoCheckpoint {
			q.Add("_pragma", "wal_autocheckpoint(0)")
		}
	}
	return "file:" + db.Path + "?" + q.Encode()
}

// Open opens the database, applies pending migrations and starts the writer.
func (db *DB) Open(ctx context.Context) error {
	base, err := sqlite.NewConnector(db.dsn(false))
	if err != nil {
		return fmt.Errorf("store open %s: %w", db.Path, err)
	}
	db.write = sql.OpenDB(gatedConnector{base, &db.gate})
	db.write.SetMaxOpenConns(1)
	db.write.SetConnMaxLifetime(0)
	db.write.SetConnMaxIdleTime(0)
	if err := db.migrate(ctx); err != nil {
		db.write.Close()
		return err
	}
	read, err := sql.Open("sqlite", db.dsn(true))
	if err != nil {
		db.write.Close()
		return fmt.Errorf("store open reader %s: %w", db.Path, err)
	}
	read.SetMaxOpenConns(8)
	if old := db.read.Swap(read); old != nil {
		old.Close()
	}
	db.reqs = make(chan writeReq)
	db.batches = make(chan []writeReq)
	db.closing = make(chan struct{})
	db.done = make(chan struct{})
	db.writable.Store(true)
	go db.writer()
	return nil
}

// OpenReader opens only reading, with dsn, on a copy that another part of
// the process keeps up to date: a standby's follower copy
// (replica.ReadOnlyDSN). Writes fail with EUNAVAILABLE until Open.
func (db *DB) OpenReader(dsn string) error {
	read, err := sql.Open("sqlite", dsn)
	if err != nil {
		return fmt.Errorf("store open reader %s: %w", db.Path, err)
	}
	read.SetMaxOpenConns(4)
	if old := db.read.Swap(read); old != nil {
		old.Close()
	}
	return nil
}

// CloseReader closes a reader opened by OpenReader (before its copy is
// replaced, or promoted and opened for writing).
func (db *DB) CloseReader() error {
	if old := db.read.Swap(nil); old != nil {
		return old.Close()
	}
	return nil
}

// Readable reports whether reads are served (after Open or OpenReader).
func (db *DB) Readable() bool { return db.read.Load() != nil }

// Writable reports whether Update can commit here: false on a standby's
// copy (before promotion) and once Close has begun.
func (db *DB) Writable() bool { return db.writable.Load() }

// reader is the read pool; without one, reads fail as on a closed sql.DB.
func (db *DB) reader() *sql.DB {
	if r := db.read.Load(); r != nil {
		return r
	}
	return closedDB
}

// closedDB answers every query with sql.ErrConnDone-like failure.
var closedDB = func() *sql.DB {
	d, _ := sql.Open("sqlite", "file::memory:")
	d.Close()
	return d
}()

// Close stops the writer after pending writes and closes the database.
func (db *DB) Close() error {
	if db.closing == nil {
		return db.CloseReader()
	}
	db.writable.Store(false)
	db.once.Do(func() { close(db.closing) })
	<-db.done
	rerr := db.CloseReader()
	if err := db.write.Close(); err != nil {
		return fmt.Errorf("store close: %w", err)
	}
	return rerr
}

func (db *DB) migrate(ctx context.Context) error {
	if _, err := db.write.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)`); err != nil {
		return fmt.Errorf("store migrate: %w", err)
	}
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return fmt.Errorf("store migrate: %w", err)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := db.migrateFile(ctx, name); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) migrateFile(ctx context.Context, name string) error {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store migrate %s: %w", name, err)
	}
	defer tx.Rollback()
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations WHERE name = ?`, name).Scan(&n); err != nil {
		return fmt.Errorf("store migrate %s: %w", name, err)
	} else if n > 0 {
		return nil
	}
	body, err := fs.ReadFile(migrationFS, name)
	if err != nil {
		return fmt.Errorf("store migrate %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, string(body)); err != nil {
		return fmt.Errorf("store migrate %s: %w", name, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (name) VALUES (?)`, name); err != nil {
		return fmt.Errorf("store migrate %s: %w", name, err)
	}
	return tx.Commit()
}

// Tx is a write transaction handed to Update callbacks.
type Tx struct {
	tx *sql.Tx
	// ctx is always context.Background(): a caller's context must never
	// interrupt a statement, because SQLite may then roll back the whole
	// shared transaction.
	ctx context.Context
	now time.Time
	// stmts holds the statements prepared in this transaction: a batch of
	// webhooks runs the same few statements many times, and preparing costs
	// as much as running them.
	stmts map[string]*sql.Stmt
	// changes are what the transaction's callers notified (Notify), to be
	// published once it is committed; pulls caches pullRef.
	changes []atoll.Change
	pulls   map[int64]struct {
		repo   string
		number int
	}
}

// Now is the transaction's timestamp.
func (tx *Tx) Now() time.Time { return tx.now }

func (tx *Tx) stmt(query string) (*sql.Stmt, error) {
	if st, ok := tx.stmts[query]; ok {
		return st, nil
	}
	st, err := tx.tx.PrepareContext(context.Background(), query)
	if err != nil {
		return nil, err
	}
	if tx.stmts == nil {
		tx.stmts = map[string]*sql.Stmt{}
	}
	tx.stmts[query] = st
	return st, nil
}

func (tx *Tx) exec(query string, args ...any) (sql.Result, error) {
	st, err := tx.stmt(query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(tx.ctx, args...)
}

func (tx *Tx) queryRow(query string, args ...any) *sql.Row {
	st, err := tx.stmt(query)
	if err != nil {
		return tx.tx.QueryRowContext(tx.ctx, query, args...) // reports the same error
	}
	return st.QueryRowContext(tx.ctx, args...)
}

func (tx *Tx) query(query string, args ...any) (*sql.Rows, error) {
	return tx.tx.QueryContext(tx.ctx, query, args...)
}

// querier is what read helpers need, satisfied by *sql.DB and *sql.Tx.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Times are stored as unix nanoseconds.
func ts(t time.Time) int64 { return t.UnixNano() }

func fromTS(n int64) time.Time { return time.Unix(0, n).UTC() }

func fromNullTS(n sql.NullInt64) *time.Time {
	if !n.Valid {
		return nil
	}
	t := fromTS(n.Int64)
	return &t
}

// splitFullName splits owner/name on the last slash: an Azure DevOps
// repository's owner is ORG/PROJECT.
func splitFullName(full string) (string, string, bool) {
	i := strings.LastIndex(full, "/")
	if i < 0 {
		return "", "", false
	}
	owner, name := full[:i], full[i+1:]
	return owner, name, owner != "" && name != "" && !strings.HasPrefix(owner, "/") && !strings.HasSuffix(owner, "/")
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// collect scans every row of a query with scan.
func collect[T any](rows *sql.Rows, err error, what string, scan func(scanner) (T, error)) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", what, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("store %s: %w", what, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store %s: %w", what, err)
	}
	return out, nil
}
