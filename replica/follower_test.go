package replica_test

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/atollhq/atoll/replica"
)

func TestFollowerAppliesWrites(t *testing.T) {
	for _, tg := range targets(t) {
		t.Run(tg.name, func(t *testing.T) {
			ctx := context.Background()
			a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), tg.client())
			a.write(t, "first")

			path := filepath.Join(t.TempDir(), "standby.db")
			f := replica.NewFollower(tg.client(), path, 0)
			f.Logger = quiet()
			if err := f.Start(ctx); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { f.Stop(context.Background()) })
			catchUp(t, f)
			if !actions(t, path)["first"] {
				t.Fatal("the follower's copy lacks the write made before it started")
			}

			// The standby's pages read the copy through one long-lived
			// read-only pool while the follower applies new LTX files.
			ro := openStandbyReader(t, path)
			var lags []time.Duration
			for i := range 20 {
				a.write(t, name(i))
				acked := time.Now()
				eventually(t, 10*time.Second, "write "+name(i)+" on the standby", func() (bool, error) {
					got, err := queryActions(ro)
					return got[name(i)], err
				})
				lags = append(lags, time.Since(acked))
			}
			slices.Sort(lags)
			t.Logf("write acknowledged → readable on the standby: p50 %v, max %v (follow interval %v)",
				lags[len(lags)/2], lags[len(lags)-1], replica.DefaultFollowInterval)

			// Litestream also makes LTX files of its own (after a
			// checkpoint), so the replica may move on between two looks.
			var lag replica.Lag
			eventually(t, 10*time.Second, "lag zero", func() (bool, error) {
				var err error
				lag, err = f.Lag(ctx)
				if err == nil && (lag.Local > lag.Remote || lag.Local < lag.Remote && lag.Behind == 0) {
					t.Fatalf("lag = %+v", lag)
				}
				return err == nil && lag.Local > 0 && lag.Local == lag.Remote && lag.Behind == 0, err
			})
		})
	}
}

func catchUp(t testing.TB, f *replica.Follower) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := f.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
}

// Readers of the follower's copy, in the same process, while LTX files are
// applied: no errors, and never a state older than one already seen.
func TestFollowerReadersDuringApply(t *testing.T) {
	ctx := context.Background()
	tg := targets(t)[0]
	a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), tg.client())
	a.write(t, "first")
	path := filepath.Join(t.TempDir(), "standby.db")
	f := replica.NewFollower(tg.client(), path, 10*time.Millisecond)
	f.Logger = quiet()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Stop(context.Background()) })
	catchUp(t, f)

	ro := openStandbyReader(t, path)
	stop := make(chan struct{})
	var reads, errs, stale atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			last := 0
			for {
				select {
				case <-stop:
					return
				default:
				}
				got, err := queryActions(ro)
				reads.Add(1)
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				if len(got) < last {
					stale.Add(1)
				}
				last = len(got)
			}
		})
	}
	for i := range 100 {
		a.write(t, name(i))
	}
	catchUp(t, f)
	eventually(t, 10*time.Second, "all writes visible", func() (bool, error) {
		got, err := queryActions(ro)
		return len(got) == 101, err
	})
	close(stop)
	wg.Wait()
	t.Logf("%d reads during 100 applied LTX files", reads.Load())
	if errs.Load() > 0 || stale.Load() > 0 {
		t.Errorf("readers got %d errors (first: %v) and saw rows disappear %d times", errs.Load(), firstErr.Load(), stale.Load())
	}
}

// openStandbyReader opens the follower's copy as the standby's pages do: one
// long-lived read-only pool.
func openStandbyReader(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", replica.ReadOnlyDSN(path))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// partitioned cuts a follower off from the replica while down is set.
type partitioned struct {
	litestream.ReplicaClient
	down atomic.Bool
}

var errPartitioned = errors.New("partitioned")

func (c *partitioned) LTXFiles(ctx context.Context, level int, seek ltx.TXID, useMetadata bool) (ltx.FileIterator, error) {
	if c.down.Load() {
		return nil, errPartitioned
	}
	return c.ReplicaClient.LTXFiles(ctx, level, seek, useMetadata)
}

// A follower cut off for longer than L0's retention finds the L0 files it
// needs compacted away: it applies the compacted file that bridges the gap
// (which starts before its position), then carries on with L0.
func TestFollowerBridgesCompactedGap(t *testing.T) {
	ctx := context.Background()
	tg := targets(t)[1]
	a := openActive(t, filepath.Join(t.TempDir(), "atoll.db"), tg.client())
	a.write(t, "a")
	client := &partitioned{ReplicaClient: tg.client()}
	path := filepath.Join(t.TempDir(), "standby.db")
	f := replica.NewFollower(client, path, 10*time.Millisecond)
	f.Logger = quiet()
	if err := f.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Stop(context.Background()) })
	catchUp(t, f)
	before, err := f.TXID()
	if err != nil {
		t.Fatal(err)
	}

	client.down.Store(true)
	for i := range 5 {
		a.write(t, name(i))
	}
	// What Litestream's compaction and L0 retention do in minutes: L0 into
	// L1, then every L0 file but the newest deleted.
	admin := tg.client()
	if _, err := litestream.NewCompactor(admin, quiet()).Compact(ctx, 1); err != nil {
		t.Fatal(err)
	}
	itr, err := admin.LTXFiles(ctx, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	l0, err := ltx.SliceFileIterator(itr)
	if err != nil {
		t.Fatal(err)
	}
	if err := admin.DeleteLTXFiles(ctx, l0[:len(l0)-1]); err != nil {
		t.Fatal(err)
	}
	a.write(t, "after")
	if newest := l0[len(l0)-1]; newest.MinTXID <= before+1 {
		t.Fatalf("test setup: the follower (at %s) can go on from L0 (%s)", before, newest.MinTXID)
	}

	client.down.Store(false)
	catchUp(t, f)
	got := actions(t, path)
	for _, want := range []string{"a", name(0), name(4), "after"} {
		if !got[want] {
			t.Fatalf("after bridging, the copy lacks %s: %v", want, got)
		}
	}
	var check string
	if err := openStandbyReader(t, path).QueryRow(`PRAGMA integrity_check`).Scan(&check); err != nil || check != "ok" {
		t.Fatalf("integrity check of the bridged copy: %q, %v", check, err)
	}
}
