package replica_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// BenchmarkReplicatedCommit measures store.DB.Update with AfterCommit =
// Replicator.Sync against the in-process S3 (and file://), against no
// replication: one caller at a time, and bursts of 100 concurrent callers
// (one sync per group commit).
//
//	go test -run '^$' -bench BenchmarkReplicatedCommit -benchtime 300x ./replica
func BenchmarkReplicatedCommit(b *testing.B) {
	for _, mode := range []string{"none", "file", "s3"} {
		b.Run(mode+"/sequential", func(b *testing.B) {
			db, _ := benchDB(b, mode)
			lat := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := range b.N {
				start := time.Now()
				if err := db.Update(context.Background(), markEvent(fmt.Sprint(i))); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(start))
			}
			b.StopTimer()
			reportLatency(b, lat)
		})
		b.Run(mode+"/burst100", func(b *testing.B) {
			db, syncs := benchDB(b, mode)
			lat := make([]time.Duration, 0, 100*b.N)
			var mu sync.Mutex
			syncs.Store(0)
			b.ResetTimer()
			for i := range b.N {
				var wg sync.WaitGroup
				for j := range 100 {
					wg.Go(func() {
						start := time.Now()
						if err := db.Update(context.Background(), markEvent(fmt.Sprint(i, "-", j))); err != nil {
							b.Error(err)
						}
						d := time.Since(start)
						mu.Lock()
						lat = append(lat, d)
						mu.Unlock()
					})
				}
				wg.Wait()
			}
			b.StopTimer()
			reportLatency(b, lat)
			if mode != "none" {
				b.ReportMetric(float64(syncs.Load())/float64(b.N), "syncs/burst")
			}
		})
	}
}

// benchDB opens a database replicated as mode says ("none": not at all)
// and counts the syncs.
func benchDB(b *testing.B, mode string) (*store.DB, *atomic.Int64) {
	path := filepath.Join(b.TempDir(), "atoll.db")
	syncs := new(atomic.Int64)
	if mode == "none" {
		db := storetest.Open(b, storetest.Path(path))
		return db, syncs
	}
	var tg target
	for _, t := range targets(b) {
		if t.name == mode {
			tg = t
		}
	}
	a := openActive(b, path, tg.client())
	// Count the hook's calls: the writer reads AfterCommit at each commit,
	// so it cannot be swapped after Open; wrap the replicator instead.
	a.db.Close()
	db := storetest.Open(b, storetest.Path(path), storetest.Replicated(func(ctx context.Context) error {
		syncs.Add(1)
		return a.rep.Sync(ctx)
	}))
	return db, syncs
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.5), "p50_ms")
	b.ReportMetric(pct(0.9), "p90_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
}
