// Package store keeps all of Atoll's durable state in one SQLite database
// (modernc.org/sqlite, WAL mode). Writes go through a single writer goroutine
// that commits concurrent callers together (group commit), so that a burst of
// webhooks costs one fsync rather than one each; reads use a separate pool.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

//go:embed migrations/*.sql
var migrationFS embed.FS

// maxBatch bounds how many callers share one transaction.
const maxBatch = 128

// DB is the SQLite database.
type DB struct {
	Path string

	write *sql.DB // exactly one connection, used only by the writer goroutine
	read  *sql.DB

	reqs    chan writeReq
	closing chan struct{}
	done    chan struct{}
	once    sync.Once

	// Now is the clock; tests may replace it before Open.
	Now func() time.Time
}

type writeReq struct {
	ctx  context.Context
	fn   func(*Tx) error
	done chan error
}

// NewDB returns a DB for the file at path; call Open before use.
func NewDB(path string) *DB {
	return &DB{Path: path, Now: func() time.Time { return time.Now().UTC() }}
}

func dsn(path string, readOnly bool) string {
	q := url.Values{}
	for _, p := range []string{"busy_timeout(10000)", "foreign_keys(1)", "journal_mode(WAL)", "synchronous(FULL)"} {
		q.Add("_pragma", p)
	}
	if readOnly {
		q.Add("_pragma", "query_only(1)")
	} else {
		q.Set("_txlock", "immediate")
	}
	return "file:" + path + "?" + q.Encode()
}

// Open opens the database, applies pending migrations and starts the writer.
func (db *DB) Open(ctx context.Context) error {
	var err error
	if db.write, err = sql.Open("sqlite", dsn(db.Path, false)); err != nil {
		return fmt.Errorf("store open %s: %w", db.Path, err)
	}
	db.write.SetMaxOpenConns(1)
	db.write.SetConnMaxLifetime(0)
	db.write.SetConnMaxIdleTime(0)
	if err := db.migrate(ctx); err != nil {
		db.write.Close()
		return err
	}
	if db.read, err = sql.Open("sqlite", dsn(db.Path, true)); err != nil {
		db.write.Close()
		return fmt.Errorf("store open reader %s: %w", db.Path, err)
	}
	db.read.SetMaxOpenConns(8)
	db.reqs = make(chan writeReq)
	db.closing = make(chan struct{})
	db.done = make(chan struct{})
	go db.writer()
	return nil
}

// Close stops the writer after pending writes and closes the database.
func (db *DB) Close() error {
	if db.closing == nil {
		return nil
	}
	db.once.Do(func() { close(db.closing) })
	<-db.done
	rerr := db.read.Close()
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

// Update runs fn in a write transaction and returns once it is committed (or
// failed). fn may share the transaction with other callers but runs inside
// its own savepoint, so its error undoes only its own changes. fn must not
// call Update.
func (db *DB) Update(ctx context.Context, fn func(*Tx) error) error {
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

func (db *DB) writer() {
	defer close(db.done)
	for {
		var first writeReq
		select {
		case first = <-db.reqs:
		case <-db.closing:
			return
		}
		batch := []writeReq{first}
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

func (db *DB) commit(batch []writeReq) {
	errs := make([]error, len(batch))
	err := func() error {
		sqlTx, err := db.write.BeginTx(context.Background(), nil)
		if err != nil {
			return fmt.Errorf("store begin: %w", err)
		}
		defer sqlTx.Rollback()
		tx := &Tx{tx: sqlTx, now: db.Now()}
		for i, r := range batch {
			if err := r.ctx.Err(); err != nil {
				errs[i] = err
				continue
			}
			errs[i] = tx.savepoint(r.ctx, r.fn)
		}
		if err := sqlTx.Commit(); err != nil {
			return fmt.Errorf("store commit: %w", err)
		}
		return nil
	}()
	for i, r := range batch {
		if err != nil {
			r.done <- err
		} else {
			r.done <- errs[i]
		}
	}
}

// Tx is a write transaction handed to Update callbacks.
type Tx struct {
	tx  *sql.Tx
	ctx context.Context
	now time.Time
	// stmts holds the statements prepared in this transaction: a batch of
	// webhooks runs the same few statements many times, and preparing costs
	// as much as running them.
	stmts map[string]*sql.Stmt
}

func (tx *Tx) savepoint(ctx context.Context, fn func(*Tx) error) error {
	tx.ctx = ctx
	if _, err := tx.exec(`SAVEPOINT sp`); err != nil {
		return fmt.Errorf("store savepoint: %w", err)
	}
	ferr := fn(tx)
	// Undo and release even when the caller's context ended meanwhile.
	tx.ctx = context.Background()
	if ferr != nil {
		if _, err := tx.exec(`ROLLBACK TO sp`); err != nil {
			return errors.Join(ferr, fmt.Errorf("store rollback: %w", err))
		}
	}
	if _, err := tx.exec(`RELEASE sp`); err != nil {
		return errors.Join(ferr, fmt.Errorf("store release: %w", err))
	}
	return ferr
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

// splitFullName splits owner/name.
func splitFullName(full string) (string, string, bool) {
	owner, name, ok := strings.Cut(full, "/")
	return owner, name, ok && owner != "" && name != ""
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
