package replica_test

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/benbjohnson/litestream/file"
	"github.com/benbjohnson/litestream/s3"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// target is a replica location; each call of client returns a new client of
// it, as each node has its own.
type target struct {
	name   string
	client func() litestream.ReplicaClient
}

// targets returns a file:// replica and an S3 replica (an in-process S3).
func targets(t testing.TB) []target {
	dir := filepath.Join(t.TempDir(), "replica")
	return []target{
		{"file", func() litestream.ReplicaClient { return file.NewReplicaClient(dir) }},
		{"s3", newS3(t).client},
	}
}

// fakeS3 is an in-process S3 server (gofakes3 on 127.0.0.1).
type fakeS3 struct {
	srv *httptest.Server
}

func newS3(t testing.TB) *fakeS3 {
	t.Helper()
	// The machine's CA bundle setting would make the AWS SDK fail to start.
	t.Setenv("AWS_CA_BUNDLE", "")
	os.Unsetenv("AWS_CA_BUNDLE")
	backend := s3mem.New()
	if err := backend.CreateBucket("atoll"); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(gofakes3.New(backend).Server())
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return &fakeS3{srv: srv}
}

func (f *fakeS3) client() litestream.ReplicaClient {
	c := s3.NewReplicaClient()
	c.Bucket, c.Path = "atoll", "db"
	c.Endpoint, c.ForcePathStyle, c.Region = f.srv.URL, true, "us-east-1"
	c.AccessKeyID, c.SecretAccessKey = "test", "test"
	return c
}

// quiet is a logger for Litestream that shows only errors.
func quiet() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
}

// active is the active node: a store.DB whose commits are replicated.
type active struct {
	db   *store.DB
	rep  *replica.Replicator
	once sync.Once
	// replicaDown: the last sync on close is expected to fail.
	replicaDown bool
}

// openActive opens the database at path and replicates it to client, as
// cmd/atoll does on the active node.
func openActive(t testing.TB, path string, client litestream.ReplicaClient) *active {
	t.Helper()
	ctx := context.Background()
	rep := replica.NewReplicator(path, client, quiet())
	rep.SyncTimeout = 2 * time.Second
	db := storetest.Open(t, storetest.Path(path), storetest.Replicated(rep.Sync))
	if err := rep.Open(ctx); err != nil {
		db.Close()
		t.Fatal(err)
	}
	a := &active{db: db, rep: rep}
	t.Cleanup(func() { a.close(t) })
	return a
}

// close stops the node: the store first (no more writes), then replication.
func (a *active) close(t testing.TB) {
	a.once.Do(func() {
		if err := a.db.Close(); err != nil {
			t.Error(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if a.replicaDown {
			cancel() // as a fenced node does: stop at once
		}
		if err := a.rep.Close(ctx); err != nil && !a.replicaDown {
			t.Error(err)
		}
	})
}

// write commits one event named action.
func (a *active) write(t testing.TB, action string) {
	t.Helper()
	if err := a.db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.AddEvent(atoll.Event{Actor: "test", Action: action})
	}); err != nil {
		t.Fatalf("write %s: %v", action, err)
	}
}

// openRO opens the SQLite file at path read-only, as the standby's pages do.
func openRO(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// actions returns the set of event actions in the SQLite file at path.
func actions(t testing.TB, path string) map[string]bool {
	t.Helper()
	db := openRO(t, path)
	defer db.Close()
	got, err := queryActions(db)
	if err != nil {
		t.Fatalf("read %s: %v", path, err)
	}
	return got
}

func queryActions(db *sql.DB) (map[string]bool, error) {
	rows, err := db.Query(`SELECT action FROM events`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	got := map[string]bool{}
	for rows.Next() {
		var a string
		if err := rows.Scan(&a); err != nil {
			return nil, err
		}
		got[a] = true
	}
	return got, rows.Err()
}

// restored restores client into a new file and returns its event actions.
func restored(t testing.TB, client litestream.ReplicaClient) map[string]bool {
	t.Helper()
	path := filepath.Join(t.TempDir(), "restored.db")
	if err := replica.Restore(context.Background(), client, path, false); err != nil {
		t.Fatalf("restore: %v", err)
	}
	return actions(t, path)
}

// eventually polls cond until it is true or timeout passes.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s (last error: %v)", what, timeout, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func name(i int) string { return fmt.Sprintf("w%03d", i) }

func markEvent(action string) func(*store.Tx) error {
	return func(tx *store.Tx) error { return tx.AddEvent(atoll.Event{Actor: "test", Action: action}) }
}
