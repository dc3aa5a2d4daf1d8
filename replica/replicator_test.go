package replica_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
	"github.com/atollhq/atoll/store"
)

// The guarantee: once Update returns, the write is in the replica.
func TestAcknowledgedWritesAreInTheReplica(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), tg.client())
			for i := range 4 {
				a.write(t, name(i))
				// Another node's client, as a standby or `atoll restore` would use.
				got := restored(t, tg.client())
				for j := range i + 1 {
					if !got[name(j)] {
						t.Fatalf("after write %d returned, the replica lacks %s", i, name(j))
					}
				}
			}

			// A burst: every caller is answered after the one sync of its batch.
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for i := 100; i < 150; i++ {
				wg.Go(func() {
					errs <- a.db.Update(context.Background(), func(tx *store.Tx) error {
						return tx.AddEvent(atoll.Event{Actor: "test", Action: name(i)})
					})
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			got := restored(t, tg.client())
			for i := 100; i < 150; i++ {
				if !got[name(i)] {
					t.Fatalf("after the burst, the replica lacks %s", name(i))
				}
			}

			local, remote, lastSync, err := a.rep.Status(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if local == 0 || local != remote || lastSync.IsZero() {
				t.Errorf("status: local %s, remote %s, last sync %v", local, remote, lastSync)
			}
		})
	}
}

// When the replica cannot be reached, writers are told so (and not retried:
// the error is coded), and the database reports it.
func TestUnreachableReplicaFailsWrites(t *testing.T) {
	s3 := newS3(t)
	a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), s3.client())
	a.write(t, "before")
	s3.srv.Close()
	a.replicaDown = true

	err := a.db.Update(context.Background(), func(tx *store.Tx) error {
		return tx.AddEvent(atoll.Event{Actor: "test", Action: "after"})
	})
	if atoll.ErrorCode(err) != atoll.EUNAVAILABLE || !strings.Contains(atoll.ErrorMessage(err), "not replicated") {
		t.Fatalf("write with the replica down: %v, want EUNAVAILABLE not replicated", err)
	}
	if atoll.ErrorCode(a.db.WriteHealth()) != atoll.EUNAVAILABLE {
		t.Errorf("write health = %v", a.db.WriteHealth())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, _, _, err := a.rep.Status(ctx); err == nil {
		t.Error("status with the replica down: no error")
	}
}

// A deposed active's commits are never acknowledged. Its first sync after
// the deadline is refused by the fenced client; Litestream then forgets its
// position and reads the replica's, which the new active has moved past
// the deposed node's own TXIDs: nothing is left to upload, and without the
// deadline check the barrier would report the commit replicated.
func TestDeposedActiveWritesAreNotAcknowledged(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			var mu sync.Mutex
			deadline := time.Now().Add(time.Hour)
			fenced := replica.NewFencedClient(tg.client(), func() time.Time {
				mu.Lock()
				defer mu.Unlock()
				return deadline
			})
			a := openActive(t, filepath.Join(t.TempDir(), "a.db"), fenced)
			a.replicaDown = true // its last sync on close is refused too
			a.write(t, "by-a")

			// A's lease runs out; B restores the replica and writes ahead.
			mu.Lock()
			deadline = time.Now().Add(-time.Millisecond)
			mu.Unlock()
			pathB := filepath.Join(t.TempDir(), "b.db")
			if err := replica.Restore(context.Background(), tg.client(), pathB, false); err != nil {
				t.Fatal(err)
			}
			b := openActive(t, pathB, tg.client())
			for i := range 3 {
				b.write(t, name(i))
			}

			for i := range 3 {
				err := a.db.Update(context.Background(), markEvent(fmt.Sprintf("late-%d", i)))
				if atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
					t.Fatalf("write %d on the deposed active: %v, want EUNAVAILABLE", i, err)
				}
			}
			got := restored(t, tg.client())
			if got["late-0"] || got["late-1"] || got["late-2"] || !got["by-a"] || !got[name(2)] {
				t.Fatalf("replica holds %v", got)
			}
		})
	}
}
