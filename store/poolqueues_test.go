package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// Each pool's backlog: queued jobs by the pool their spec names (none is
// local), dispatches waiting for a worker, and the idle pools a dashboard
// should see at zero (local, those of unrevoked worker tokens).
func TestPoolQueues(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	f := seed(t, db, 7)

	if got, err := db.PoolQueues(ctx); err != nil || !slices.Equal(got, []atoll.PoolQueue{{Pool: atoll.PoolLocal}}) {
		t.Fatalf("empty store: %+v, %v; want local at zero", got, err)
	}

	for _, tok := range []struct{ name, pool string }{{"a", "ci"}, {"b", "gpu"}} {
		if _, err := db.CreateWorkerToken(ctx, tok.name, tok.pool, []byte("hash-"+tok.name), "admin", "test"); err != nil {
			t.Fatal(err)
		}
	}
	tokens, err := db.WorkerTokens(ctx) // newest first: gpu's, ci's
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.RevokeWorkerToken(ctx, tokens[0].ID, "admin", "test"); err != nil {
		t.Fatal(err)
	}

	// Queued jobs: two local (no pool, and "local"), one of ci, one of
	// "k8s" (no token: a Kubernetes pool); a running local job and a
	// finished ci job wait for nothing.
	job := func(pool, state string) int64 {
		t.Helper()
		j := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projectID, HeadSHA: "abc", Spec: atoll.JobSpec{Pool: pool}}
		err := db.Update(ctx, func(tx *store.Tx) error {
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			if state == atoll.JobQueued {
				return nil
			}
			if err := tx.StartJob(j.ID); err != nil || state == atoll.JobRunning {
				return err
			}
			return tx.FinishJob(j.ID, state, "", nil)
		})
		if err != nil {
			t.Fatal(err)
		}
		return j.ID
	}
	job("", atoll.JobQueued)
	job(atoll.PoolLocal, atoll.JobQueued)
	job("", atoll.JobRunning)
	job("ci", atoll.JobQueued)
	job("k8s", atoll.JobQueued)
	job("ci", atoll.JobSucceeded)
	// Started ci jobs: two handed to its workers, one claimed since.
	for i := range 3 {
		d, err := db.QueueDispatch(ctx, &atoll.Dispatch{JobID: job("ci", atoll.JobRunning), Pool: "ci", Spec: []byte("{}")})
		if err != nil {
			t.Fatal(err)
		}
		if i == 2 {
			if c, err := db.ClaimDispatch(ctx, "ci", tokens[1].ID, "w1", []byte("job-token"), time.Minute); err != nil || c == nil {
				t.Fatalf("claim of %d: %v, %v", d.JobID, c, err)
			}
		}
	}

	got, err := db.PoolQueues(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := []atoll.PoolQueue{
		{Pool: "ci", Jobs: 1, Dispatches: 2},
		{Pool: "k8s", Jobs: 1},
		{Pool: atoll.PoolLocal, Jobs: 2},
	}
	if !slices.Equal(got, want) {
		t.Errorf("pool queues = %+v\nwant %+v", got, want)
	}
}
