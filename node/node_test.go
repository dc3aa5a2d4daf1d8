package node_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/benbjohnson/litestream/file"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/node"
	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// testNode is one node of a pair sharing a file:// replica, with its work
// reduced to a record of Activate/Deactivate calls.
type testNode struct {
	*node.Node
	db *store.DB

	mu          sync.Mutex
	activations []int64
	killed      bool
	stopped     bool
}

// testTTL is the lease's time to live in these tests: long enough that a
// promotion under -race on a loaded two-core machine (the rest of the suite
// runs alongside) ends before the lease's deadline; a 1 s TTL fenced nodes
// in CI. A graceful handover does not wait for it.
const testTTL = 5 * time.Second

func newTestNode(t *testing.T, id, replicaDir string) *testNode {
	t.Helper()
	return newSlowTestNode(t, id, replicaDir, testTTL, 0)
}

// newSlowTestNode is newTestNode with a lease ttl whose Activate takes
// activateTime, as starting the work on a loaded machine may.
func newSlowTestNode(t *testing.T, id, replicaDir string, ttl, activateTime time.Duration) *testNode {
	t.Helper()
	tn := &testNode{db: storetest.New(t)}
	tn.Node = node.New(node.Config{
		ID: id, AdvertiseURL: "http://" + id, Version: "test", ReplicaURL: "file://" + replicaDir,
		Client: file.NewReplicaClient(replicaDir), Leaser: replica.NewFileLeaser(replicaDir), TTL: ttl,
		DB: tn.db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Activate: func(ctx context.Context, epoch int64) error {
			time.Sleep(activateTime)
			tn.mu.Lock()
			defer tn.mu.Unlock()
			tn.activations = append(tn.activations, epoch)
			return nil
		},
		Deactivate: func(now bool) {
			tn.mu.Lock()
			defer tn.mu.Unlock()
			tn.killed, tn.stopped = now, !now
		},
	})
	if err := tn.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tn.Stop(context.Background()) })
	return tn
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (tn *testNode) active() bool { return tn.Status(context.Background()).Ready }

func event(t *testing.T, db *store.DB, action string) error {
	t.Helper()
	return db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.AddEvent(atoll.Event{Actor: "test", Action: action})
	})
}

func hasEvent(t *testing.T, db *store.DB, action string) bool {
	t.Helper()
	events, err := db.Events(context.Background(), 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range events {
		if e.Action == action {
			return true
		}
	}
	return false
}

// The first node takes the lease and promotes itself; the second follows as
// a standby naming it; a graceful stop hands over at once (no TTL wait) and
// the new active has everything the old one acknowledged, at a new epoch.
func TestPromotionAndHandover(t *testing.T) {
	dir := t.TempDir()
	a := newTestNode(t, "a", dir)
	waitFor(t, "a active", a.active)
	if err := event(t, a.db, "written-on-a"); err != nil {
		t.Fatal(err)
	}
	b := newTestNode(t, "b", dir)
	waitFor(t, "b following a", func() bool { st := b.Status(context.Background()); return st.ActiveNode == "a" })
	if st := b.Status(context.Background()); st.Role != atoll.RoleStandby || st.Ready || st.ActiveURL != "http://a" {
		t.Fatalf("b = %+v, want a standby forwarding to a", st)
	}
	// The deadline VCS writes and notifications are fenced by: the
	// active's is ahead, a standby's is the zero time.
	if d := a.Deadline(); !time.Now().Before(d) {
		t.Fatalf("the active's deadline %v is not ahead", d)
	}
	if d := b.Deadline(); !d.IsZero() {
		t.Fatalf("the standby's deadline = %v, want the zero time", d)
	}

	stopped := time.Now()
	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := a.Deadline(); !d.IsZero() {
		t.Errorf("a's deadline after releasing the lease = %v, want the zero time: nothing may leave it", d)
	}
	waitFor(t, "b active", b.active)
	if took := time.Since(stopped); took > testTTL*4/5 {
		t.Errorf("handover took %v, more than the TTL: the lease was not released", took)
	}
	if !a.stopped || a.killed {
		t.Errorf("a's work: stopped %v killed %v, want a graceful stop", a.stopped, a.killed)
	}
	st := b.Status(context.Background())
	if st.Epoch != 2 || st.ActiveNode != "b" || len(b.activations) != 1 || b.activations[0] != 2 {
		t.Fatalf("b after handover = %+v, activations %v; want epoch 2", st, b.activations)
	}
	if !hasEvent(t, b.db, "written-on-a") {
		t.Fatal("b lacks a write a acknowledged")
	}
	if err := event(t, b.db, "written-on-b"); err != nil {
		t.Fatalf("write on the new active: %v", err)
	}
	last, err := b.db.LastEpoch(context.Background())
	if err != nil || last == nil || last.Epoch != 2 || last.Node != "b" {
		t.Fatalf("recorded epoch = %+v, %v", last, err)
	}
}

// An active node whose lease is taken (its renewal finds a newer holder)
// fences itself: its work is killed at once and its writes are refused
// (not replicated), so nothing it writes afterwards reaches the replica.
func TestLostLeaseFences(t *testing.T) {
	dir := t.TempDir()
	a := newTestNode(t, "a", dir)
	waitFor(t, "a active", a.active)
	// Another node whose clock says a's lease expired takes it over.
	thief := replica.NewFileLeaser(dir)
	thief.Now = func() time.Time { return time.Now().Add(time.Hour) }
	if _, err := thief.Acquire(context.Background(), "thief", "http://thief", time.Hour); err != nil {
		t.Fatal(err)
	}
	select {
	case <-a.Fenced():
	case <-time.After(10 * time.Second):
		t.Fatal("a did not fence itself")
	}
	if !errors.Is(a.Err(), replica.ErrLeaseLost) {
		t.Errorf("fence reason = %v, want the lost lease", a.Err())
	}
	if !a.killed {
		t.Error("a's work was not killed")
	}
	if st := a.Status(context.Background()); st.Ready || st.Role != atoll.RoleStandby {
		t.Errorf("a after fencing = %+v", st)
	}
	if d := a.Deadline(); !d.IsZero() {
		t.Errorf("a's deadline after fencing = %v, want the zero time", d)
	}
	err := event(t, a.db, "after-fence")
	if atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Fatalf("a write after fencing = %v, want EUNAVAILABLE (not replicated)", err)
	}
	restored := filepath.Join(t.TempDir(), "restored.db")
	if err := replica.Restore(context.Background(), file.NewReplicaClient(dir), restored, false); err != nil {
		t.Fatal(err)
	}
	db := storetest.Open(t, storetest.Path(restored))
	if hasEvent(t, db, "after-fence") {
		t.Fatal("a write made after fencing reached the replica")
	}
}

// A promotion that takes longer than a third of the TTL (here 2.5 s of a
// 6 s TTL, whose deadline is 4.8 s after the lease was taken) must not cost
// the lease: the first renewal is due a third of the TTL after the lease was
// taken, so it is sent as soon as the promotion ends, before the deadline.
func TestSlowPromotionKeepsTheLease(t *testing.T) {
	const ttl = 6 * time.Second
	a := newSlowTestNode(t, "a", t.TempDir(), ttl, 2500*time.Millisecond)
	waitFor(t, "a active", a.active)
	select {
	case <-a.Fenced():
		t.Fatalf("a fenced itself after a slow promotion: %v", a.Err())
	case <-time.After(ttl):
	}
	if !a.active() {
		t.Fatalf("a is no longer active: %+v", a.Status(context.Background()))
	}
}
