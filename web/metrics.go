package web

import (
	"fmt"
	"net/http"
	"sort"
	"sync"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/metrics"
)

// Metrics counts what happens in this process; gauges of durable state are
// read from the store at scrape time.
type Metrics struct {
	mu       sync.Mutex
	webhooks map[string]int64
	// Atlantis are the job and command counters under Atlantis's names,
	// which the runner records (the same value as its Metrics).
	Atlantis *metrics.Atlantis
}

// NewMetrics returns zeroed counters.
func NewMetrics() *Metrics { return &Metrics{webhooks: map[string]int64{}, Atlantis: metrics.New()} }

// Webhook counts one webhook by result (queued, ignored, rejected, error).
func (m *Metrics) Webhook(result string) {
	m.mu.Lock()
	m.webhooks[result]++
	m.mu.Unlock()
}

// handleMetrics writes the Prometheus text format.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	fmt.Fprintln(w, "# HELP atoll_webhooks_total Webhooks received, by result.")
	fmt.Fprintln(w, "# TYPE atoll_webhooks_total counter")
	s.Metrics.mu.Lock()
	results := make([]string, 0, len(s.Metrics.webhooks))
	for k := range s.Metrics.webhooks {
		results = append(results, k)
	}
	sort.Strings(results)
	for _, k := range results {
		fmt.Fprintf(w, "atoll_webhooks_total{result=%q} %d\n", k, s.Metrics.webhooks[k])
	}
	s.Metrics.mu.Unlock()
	// Per process, on a standby too (its counters stay at zero).
	if _, err := s.Metrics.Atlantis.WriteTo(w); err != nil {
		return
	}

	st := s.fullStatus(ctx)
	fmt.Fprintln(w, "# HELP atoll_node_active 1 on the active node, 0 on a standby.")
	fmt.Fprintln(w, "# TYPE atoll_node_active gauge")
	fmt.Fprintf(w, "atoll_node_active{node=%q,active_node=%q} %d\n", st.Node, st.ActiveNode, b2i(st.Role == atoll.RoleActive))
	fmt.Fprintln(w, "# HELP atoll_node_epoch The lease generation this node knows of.")
	fmt.Fprintln(w, "# TYPE atoll_node_epoch gauge")
	fmt.Fprintf(w, "atoll_node_epoch %d\n", st.Epoch)
	if st.LeaseExpiresAt != nil {
		fmt.Fprintln(w, "# HELP atoll_lease_expiry_seconds When the active node's lease expires (Unix time).")
		fmt.Fprintln(w, "# TYPE atoll_lease_expiry_seconds gauge")
		fmt.Fprintf(w, "atoll_lease_expiry_seconds %d\n", st.LeaseExpiresAt.Unix())
	}
	if r := st.Replication; r != nil && r.URL != "" {
		fmt.Fprintln(w, "# HELP atoll_replication_lag_ms How far a standby's copy is behind the replica.")
		fmt.Fprintln(w, "# TYPE atoll_replication_lag_ms gauge")
		fmt.Fprintf(w, "atoll_replication_lag_ms %d\n", r.LagMS)
		fmt.Fprintln(w, "# HELP atoll_replication_txid Local and remote (replica) transaction ids.")
		fmt.Fprintln(w, "# TYPE atoll_replication_txid gauge")
		fmt.Fprintf(w, "atoll_replication_txid{side=\"local\"} %d\natoll_replication_txid{side=\"remote\"} %d\n", r.LocalTXID, r.RemoteTXID)
	}
	if st.Role != atoll.RoleActive {
		return // a standby's database is a copy in motion (or not open yet)
	}

	fmt.Fprintln(w, "# HELP atoll_requests Requests (autoplan, comment, close) by state.")
	fmt.Fprintln(w, "# TYPE atoll_requests gauge")
	for _, st := range []string{atoll.RequestQueued, atoll.RequestRunning} {
		n, err := s.DB.CountRequests(ctx, st)
		if err != nil {
			s.error(w, r, err)
			return
		}
		fmt.Fprintf(w, "atoll_requests{state=%q} %d\n", st, n)
	}
	locks, err := s.DB.Locks(ctx)
	if err != nil {
		s.error(w, r, err)
		return
	}
	fmt.Fprintln(w, "# HELP atoll_locks Project locks held.")
	fmt.Fprintln(w, "# TYPE atoll_locks gauge")
	fmt.Fprintf(w, "atoll_locks %d\n", len(locks))
	counts, err := s.DB.JobCounts(ctx)
	if err != nil {
		s.error(w, r, err)
		return
	}
	fmt.Fprintln(w, "# HELP atoll_jobs Jobs by kind and state.")
	fmt.Fprintln(w, "# TYPE atoll_jobs gauge")
	for _, c := range counts {
		fmt.Fprintf(w, "atoll_jobs{kind=%q,state=%q} %d\n", c.Kind, c.State, c.N)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
