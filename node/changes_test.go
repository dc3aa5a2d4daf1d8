package node_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/litestream/file"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/node"
	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/store/storetest"
)

// roleRecorder is a ChangeService that also records, for each node change,
// the role of the node at the moment it was published.
type roleRecorder struct {
	*inmem.Changes
	node  atomic.Pointer[node.Node]
	mu    sync.Mutex
	roles []string
}

func (r *roleRecorder) Publish(c atoll.Change) {
	if n := r.node.Load(); n != nil && c.Topic == atoll.TopicNode {
		role := n.Status(context.Background()).Role
		r.mu.Lock()
		r.roles = append(r.roles, role)
		r.mu.Unlock()
	}
	r.Changes.Publish(c)
}

func (r *roleRecorder) published(role string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, got := range r.roles {
		if got == role {
			return true
		}
	}
	return false
}

// A standby's live pages hear when its copy moves on (a write on the
// active reaches it) and when it becomes the active node.
func TestStandbyPublishesChanges(t *testing.T) {
	dir := t.TempDir()
	a := newTestNode(t, "a", dir)
	waitFor(t, "a active", a.active)

	changes := &roleRecorder{Changes: inmem.NewChanges()}
	db := storetest.New(t, storetest.Changes(changes))
	b := node.New(node.Config{
		ID: "b", AdvertiseURL: "http://b", Version: "test", ReplicaURL: "file://" + dir,
		Client: file.NewReplicaClient(dir), Leaser: replica.NewFileLeaser(dir), TTL: testTTL,
		DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Changes: changes,
		Activate:   func(context.Context, int64) error { return nil },
		Deactivate: func(bool) {},
	})
	changes.node.Store(b)
	ch, cancel := changes.Subscribe()
	defer cancel()
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Stop(context.Background()) })
	waitFor(t, "b reads its copy", db.Readable)

	// Each change says: read again. One of them must show a's write.
	if err := event(t, a.db, "written-on-a"); err != nil {
		t.Fatal(err)
	}
	timeout := time.After(20 * time.Second)
	for seen := false; !seen; {
		select {
		case c := <-ch:
			if c.Topic != atoll.TopicNode {
				t.Fatalf("the standby published %+v; want node changes only", c)
			}
			seen = hasEvent(t, db, "written-on-a")
		case <-timeout:
			t.Fatal("no change told the standby's pages of a's write")
		}
	}
	if changes.published(atoll.RoleActive) {
		t.Fatal("published as active before any promotion")
	}

	if err := a.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "b active", func() bool { return b.Status(context.Background()).Ready })
	waitFor(t, "b told its pages it became the active node", func() bool { return changes.published(atoll.RoleActive) })
}
