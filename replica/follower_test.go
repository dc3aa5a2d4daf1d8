package replica_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

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
