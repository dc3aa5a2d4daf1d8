package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// The window of issue 21: a claim whose replication barrier fails is told
// EUNAVAILABLE, yet it is committed on this disk (and the next sync uploads
// it). The request is then running under the node with no worker on it,
// and the next request of its pull request (an acknowledged webhook) is
// never claimed. RequeueOrphans gives it back; requests a worker holds and
// other nodes' claims are left alone.
func TestRequeueOrphansAfterAFailedBarrier(t *testing.T) {
	ctx := context.Background()
	var fail atomic.Bool
	db := openHooked(t, func(context.Context) error {
		if fail.Load() {
			return errors.New("replica sync: context deadline exceeded")
		}
		return nil
	})
	f := seed(t, db, 1)
	other := seed(t, db, 2)
	third := seed(t, db, 3)
	var first, second, live, elsewhere atoll.Request
	err := db.Update(ctx, func(tx *store.Tx) error {
		for _, r := range []struct {
			req  *atoll.Request
			pull int64
		}{{&first, f.pullID}, {&second, f.pullID}, {&live, other.pullID}, {&elsewhere, third.pullID}} {
			*r.req = atoll.Request{PullID: r.pull, Kind: atoll.RequestAutoplan}
			if err := tx.InsertRequest(r.req); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	fail.Store(true)
	got, err := db.ClaimRequest(ctx, "a")
	fail.Store(false)
	if got != nil || atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Fatalf("claim with a failing barrier = %+v, %v; want no request and EUNAVAILABLE", got, err)
	}
	if q, err := db.Request(ctx, first.ID); err != nil || q.State != atoll.RequestRunning {
		t.Fatalf("request %d after the failed claim: %+v %v; the window needs it committed running", first.ID, q, err)
	}
	// Node a's worker holds request `live`; node b holds `elsewhere`.
	if q, err := db.ClaimRequest(ctx, "a"); err != nil || q == nil || q.ID != live.ID {
		t.Fatalf("claim = %+v, %v; want request %d", q, err, live.ID)
	}
	if q, err := db.ClaimRequest(ctx, "b"); err != nil || q == nil || q.ID != elsewhere.ID {
		t.Fatalf("claim = %+v, %v; want request %d", q, err, elsewhere.ID)
	}
	// Stuck: pull 1's next request waits behind the orphan for ever.
	if q, err := db.ClaimRequest(ctx, "a"); err != nil || q != nil {
		t.Fatalf("claim = %+v, %v; want nothing claimable (the orphan blocks pull 1)", q, err)
	}

	n, err := db.RequeueOrphans(ctx, "a", []int64{live.ID})
	if err != nil || n != 1 {
		t.Fatalf("RequeueOrphans = %d, %v; want 1", n, err)
	}
	for id, want := range map[int64]string{first.ID: atoll.RequestQueued, second.ID: atoll.RequestQueued, live.ID: atoll.RequestRunning, elsewhere.ID: atoll.RequestRunning} {
		if q, err := db.Request(ctx, id); err != nil || q.State != want {
			t.Errorf("request %d = %+v, %v; want %s", id, q, err, want)
		}
	}
	// The orphan runs first, then the request behind it.
	for _, want := range []int64{first.ID, second.ID} {
		q, err := db.ClaimRequest(ctx, "a")
		if err != nil || q == nil || q.ID != want {
			t.Fatalf("claim = %+v, %v; want request %d", q, err, want)
		}
		if err := db.FinishRequest(ctx, q.ID, atoll.RequestDone, ""); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.RequeueOrphans(ctx, "a", nil); err != nil || n != 1 {
		t.Fatalf("RequeueOrphans with no live request = %d, %v; want 1 (request %d, no longer held)", n, err, live.ID)
	}
}
