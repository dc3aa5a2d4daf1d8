package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benbjohnson/litestream"
	"github.com/superfly/ltx"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/replica"
)

// failoverTTL is the lease TTL the failover figures are quoted for.
const failoverTTL = 5 * time.Second

// failoverPulls is how many pull requests the stream's comments spread
// over, so that no single pull's queue of replies grows long.
const failoverPulls = 8

// BenchmarkFailover measures recovery from the active node's sudden death:
// two real atoll processes share an in-process S3 replica with --lease-ttl
// 5s, a client streams webhooks to both (the standby forwards), and each
// trial kills the active with SIGKILL at a random moment. RTO is from the
// kill to the first webhook the new active accepts (one sent after the old
// process was gone). The killed node is started again as the standby for
// the next trial. At the end the cluster stops, the replica is restored with
// `atoll restore`, and every delivery that was answered 2xx must be in its
// webhooks table: an acknowledged write lost fails the benchmark. The
// standby's lag is /api/v1/status replication.lag_ms sampled on it while
// the stream runs.
func BenchmarkFailover(b *testing.B) {
	c := newHACluster(b, "s3", map[string]string{"app/main.tf": tfProject("app", 1)})
	c.TTL = failoverTTL
	for p := 1; p <= failoverPulls; p++ {
		c.GH.setPull(p, fakePull{HeadSHA: c.Base, HeadRef: "main", BaseSHA: c.Base, BaseRef: "main"})
	}
	active := startNode(b, c, "a")
	active = waitActive(b, time.Minute, active)
	standby := startNode(b, c, "b")
	waitFollowing(b, standby, active)

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	b.Logf("seed %d, %d trials", seed, b.N)
	var (
		rtos, leaseWaits, promotions []time.Duration
		lags                         []float64
		trials                       []failoverTrial
	)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tr := runFailoverTrial(b, c, i, active, standby, rng)
		trials = append(trials, tr)
		rtos = append(rtos, tr.RTO)
		lags = append(lags, tr.Lags...)
		leaseWaits = append(leaseWaits, tr.LeaseWait)
		promotions = append(promotions, tr.Promotion)
		// The killed node comes back as the standby of the new active.
		killed := active
		active = standby
		standby = startNode(b, c, killed.ID)
		waitFollowing(b, standby, active)
	}
	b.StopTimer()

	// Stop the pair: the standby first (it must not take over), then the
	// active gracefully, so that the replica is final.
	standby.kill9(b)
	active.sigterm(b)
	active.waitExit(b, time.Minute)
	ids := deliveryIDs(b, c.restore(b))
	b.Logf("replica at the end: %s", replicaListing(b, c.ReplicaURL))
	acked, lost := 0, 0
	for i, tr := range trials {
		for _, r := range tr.Results {
			if !r.OK {
				continue
			}
			acked++
			if !ids[r.D.ID] {
				lost++
				if lost <= 20 {
					b.Errorf("trial %d: delivery %s is not in the replica; sent at kill%+dms, answered %v at kill%+dms by way of %v",
						i, r.D.ID, r.SentAt.Sub(tr.KillAt).Milliseconds(), r.Codes, r.AnswerAt.Sub(tr.KillAt).Milliseconds(), r.Targets)
				}
			}
		}
	}
	if acked == 0 {
		b.Fatal("no delivery was acknowledged: the stream measured nothing")
	}
	// Benchmark output is cut at ten lines: one line per series.
	var rtoLine, lagLine strings.Builder
	for _, tr := range trials {
		fmt.Fprintf(&rtoLine, " %.2f=%.2f+%.2f", tr.RTO.Seconds(), tr.LeaseWait.Seconds(), tr.Promotion.Seconds())
		fmt.Fprintf(&lagLine, " %.0f", slices.Max(append([]float64{0}, tr.Lags...)))
	}
	b.Logf("per kill, RTO = lease wait + promotion (s):%s", rtoLine.String())
	b.Logf("per trial, the standby's largest lag (ms):%s", lagLine.String())
	slices.Sort(rtos)
	slices.Sort(leaseWaits)
	slices.Sort(promotions)
	b.ReportMetric(float64(b.N), "kills")
	b.ReportMetric(pct(rtos, 0.5).Seconds(), "rto-p50-s")
	b.ReportMetric(pct(rtos, 0.99).Seconds(), "rto-p99-s")
	b.ReportMetric(rtos[len(rtos)-1].Seconds(), "rto-max-s")
	b.ReportMetric(pct(leaseWaits, 0.5).Seconds(), "lease-wait-p50-s")
	b.ReportMetric(pct(promotions, 0.5).Seconds()*1000, "promotion-p50-ms")
	b.ReportMetric(pct(promotions, 0.99).Seconds()*1000, "promotion-p99-ms")
	b.ReportMetric(float64(acked), "acked-writes")
	b.ReportMetric(float64(lost), "acked-lost")
	if len(lags) > 0 {
		slices.Sort(lags)
		b.ReportMetric(pct(lags, 0.5), "lag-p50-ms")
		b.ReportMetric(pct(lags, 0.99), "lag-p99-ms")
	}
	if lost > 0 {
		b.Fatalf("%d of %d acknowledged writes lost over %d kills", lost, acked, b.N)
	}
}

// failoverTrial is what one kill of the active gave.
type failoverTrial struct {
	PreKill time.Duration // how long the stream ran before the kill
	KillAt  time.Time
	RTO     time.Duration
	// RTO's parts, from the new active's log: from the kill to taking the
	// lease, and the promotion (catch up, open, first sync, start).
	LeaseWait, Promotion time.Duration
	Lags                 []float64 // the standby's lag_ms samples before the kill
	Results              []*streamResult
}

// runFailoverTrial streams comments to both nodes, kills the active after
// a random 1-3 s, waits for the standby to accept a webhook sent after the
// kill, and streams a little longer.
func runFailoverTrial(b *testing.B, c *haCluster, trial int, active, standby *haNode, rng *rand.Rand) failoverTrial {
	b.Helper()
	stream := (&webhookStream{
		URLs:     []string{active.URL, standby.URL},
		Interval: 25 * time.Millisecond,
		// Unacknowledged deliveries are not sent again: only the 2xx
		// answers count, and a retry would blur when a webhook was sent.
		Retries: 0,
		Next: func(i int) (delivery, error) {
			d, err := newDelivery("issue_comment", "issue_comment.created.json",
				commentEvent(c.CloneURL, 1+i%failoverPulls, fmt.Sprintf("atlantis help t%d-%d", trial, i)))
			d.Pull = 1 + i%failoverPulls
			return d, err
		},
	}).start()
	stopLag := sampleLag(standby, 200*time.Millisecond)

	tr := failoverTrial{PreKill: time.Second + time.Duration(rng.Int64N(int64(2*time.Second)))}
	time.Sleep(tr.PreKill)
	tr.Lags = stopLag()
	tr.KillAt = time.Now()
	active.kill9(b)
	gone := time.Now()

	// The first webhook sent after the old active was gone and answered
	// 2xx can only have been accepted by the new active.
	deadline := tr.KillAt.Add(3*failoverTTL + 30*time.Second)
	for firstAfter(stream.snapshot(), gone).IsZero() {
		if time.Now().After(deadline) {
			stream.finish(b)
			st, err := standby.status()
			b.Fatalf("trial %d: no webhook accepted within %s of killing %s; %s: %+v %v",
				trial, time.Since(tr.KillAt).Round(time.Millisecond), active.ID, standby.ID, st, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(300 * time.Millisecond) // writes on the new active too
	tr.Results = stream.finish(b)
	var snap []streamResult
	for _, r := range tr.Results {
		snap = append(snap, *r)
	}
	tr.RTO = firstAfter(snap, gone).Sub(tr.KillAt)
	if n := waitActive(b, 10*time.Second, standby); n != standby {
		b.Fatalf("trial %d: %s is not the active node", trial, standby.ID)
	}
	taken, promotion, err := promotionFromLog(standby.log())
	if err != nil {
		b.Fatalf("trial %d: %s: %v", trial, standby.ID, err)
	}
	tr.LeaseWait, tr.Promotion = taken.Sub(tr.KillAt), promotion
	return tr
}

// promotionFromLog finds the node's last promotion in its JSON log: when it
// took the lease, and the promotion_ms it reported once active.
func promotionFromLog(log string) (taken time.Time, promotion time.Duration, err error) {
	for _, line := range strings.Split(log, "\n") {
		var e struct {
			Time        time.Time `json:"time"`
			Msg         string    `json:"msg"`
			PromotionMS *int64    `json:"promotion_ms"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		switch {
		case e.Msg == "lease taken: promoting":
			taken, promotion = e.Time, 0
		case e.Msg == "active" && e.PromotionMS != nil:
			promotion = time.Duration(*e.PromotionMS) * time.Millisecond
		}
	}
	if taken.IsZero() || promotion == 0 {
		return taken, promotion, fmt.Errorf("no promotion in the log")
	}
	return taken, promotion, nil
}

// firstAfter is when the first delivery sent after t was answered 2xx
// (zero if none yet).
func firstAfter(results []streamResult, t time.Time) time.Time {
	var first time.Time
	for _, r := range results {
		if r.OK && r.SentAt.After(t) && (first.IsZero() || r.AnswerAt.Before(first)) {
			first = r.AnswerAt
		}
	}
	return first
}

// sampleLag polls n's /api/v1/status every interval while n is a following
// standby; the returned func stops it and gives the lag_ms samples. The node
// caches its replication positions for a second, so consecutive samples
// may repeat: they weigh each value by how long it was shown.
func sampleLag(n *haNode, interval time.Duration) func() []float64 {
	stop, done := make(chan struct{}), make(chan []float64)
	go func() {
		var lags []float64
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				done <- lags
				return
			case <-tick.C:
			}
			st, err := n.status()
			if err == nil && st.Role == atoll.RoleStandby && st.Replication != nil && st.Replication.LocalTXID > 0 {
				lags = append(lags, float64(st.Replication.LagMS))
			}
		}
	}()
	return func() []float64 {
		close(stop)
		return <-done
	}
}

// waitFollowing waits until n is a standby of active whose copy of the
// replica is restored and being followed.
func waitFollowing(b *testing.B, n, active *haNode) {
	b.Helper()
	waitStandbyOf(b, time.Minute, n, active)
	deadline := time.Now().Add(time.Minute)
	for {
		st, err := n.status()
		if err == nil && st.Replication != nil && st.Replication.LocalTXID > 0 {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s did not restore its copy within a minute: %+v %v", n.ID, st, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pct is the p-th quantile of sorted s.
func pct[T time.Duration | float64](s []T, p float64) T {
	return s[int(p*float64(len(s)-1))]
}

// replicaListing says how many LTX files each level of the replica holds
// and how long finding its newest TXID takes (a listing of every level:
// what a standby's lag, catch-up and promotion cost).
func replicaListing(b *testing.B, url string) string {
	b.Helper()
	client, err := replica.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	start := time.Now()
	if _, err := replica.MaxTXID(ctx, client); err != nil {
		b.Fatal(err)
	}
	took := time.Since(start)
	var levels []string
	for level := 0; level <= litestream.SnapshotLevel; level++ {
		itr, err := client.LTXFiles(ctx, level, 0, false)
		if err != nil {
			b.Fatal(err)
		}
		infos, err := ltx.SliceFileIterator(itr)
		if err != nil {
			b.Fatal(err)
		}
		if len(infos) > 0 {
			levels = append(levels, fmt.Sprintf("L%d %d files", level, len(infos)))
		}
	}
	return fmt.Sprintf("%s; newest TXID found in %s", strings.Join(levels, ", "), took.Round(time.Millisecond))
}
