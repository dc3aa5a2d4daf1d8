// Package storetest opens the store for tests: a real SQLite file,
// migrated, closed when the test ends.
package storetest

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// An Option changes the database before it is opened.
type Option func(*store.DB)

// Path opens the file at path (a copy, a restored replica, a file the
// test reopens) instead of a new one in the test's temporary directory.
func Path(path string) Option { return func(db *store.DB) { db.Path = path } }

// Clock makes now the database's clock.
func Clock(now func() time.Time) Option { return func(db *store.DB) { db.Now = now } }

// Changes tells c of every committed change.
func Changes(c atoll.ChangeService) Option { return func(db *store.DB) { db.Changes = c } }

// AfterCommit calls fn after each batch that changed something.
func AfterCommit(fn func(context.Context) error) Option {
	return func(db *store.DB) { db.AfterCommit = fn }
}

// Replicated calls sync after each batch that changed something, and
// leaves checkpoints to it, as the server does with Litestream.
func Replicated(sync func(context.Context) error) Option {
	return func(db *store.DB) { db.AfterCommit, db.NoAutoCheckpoint = sync, true }
}

// New returns the database Open would open, unopened: for a test that
// hands it to something that opens it itself (a node, a standby).
func New(t testing.TB, opts ...Option) *store.DB {
	t.Helper()
	db := store.NewDB(filepath.Join(t.TempDir(), "atoll.db"))
	for _, o := range opts {
		o(db)
	}
	return db
}

// Open opens a migrated database, by default a new file atoll.db in the
// test's temporary directory, and closes it when the test and its
// subtests are done. Closing it earlier is allowed.
func Open(t testing.TB, opts ...Option) *store.DB {
	t.Helper()
	db := New(t, opts...)
	if err := db.Open(context.Background()); err != nil {
		t.Fatalf("open store %s: %v", db.Path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
