package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/metrics"
)

// Metrics is what this process records for /metrics, in one Prometheus
// registry per server: never Prometheus's global one, so that servers
// sharing a process (tests, a demo) keep theirs apart. Gauges of durable
// state are not kept here: each scrape reads them (see handleMetrics).
type Metrics struct {
	// Registry holds the Go runtime and process collectors, the webhook
	// metrics and Atlantis's.
	Registry *prometheus.Registry
	// Atlantis are the job and command metrics under Atlantis's names,
	// registered in Registry; the runner records them.
	Atlantis *metrics.Atlantis
	webhooks *prometheus.CounterVec
	intake   *prometheus.HistogramVec
}

// webhookResults are the results a webhook is counted under.
var webhookResults = []string{"queued", "ignored", "rejected", "error"}

// intakeBuckets bound the webhook intake histogram, from 1 ms (a
// redelivery or an ignored event) to 10 s (a commit stuck behind a busy
// database or a full body budget).
var intakeBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics makes the server's registry and what it records. Every
// webhook result starts at zero, so that rates exist before the first.
func NewMetrics() *Metrics {
	reg := prometheus.NewRegistry()
	m := &Metrics{
		Registry: reg,
		Atlantis: metrics.New(reg),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "atoll_webhooks_total", Help: "Webhooks received, by result."}, []string{"result"}),
		intake: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "atoll_webhook_intake_seconds",
			Help: "Time from a webhook's arrival to its answer (its request committed), by result.", Buckets: intakeBuckets}, []string{"result"}),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), m.webhooks, m.intake)
	for _, r := range webhookResults {
		m.webhooks.WithLabelValues(r)
		m.intake.WithLabelValues(r)
	}
	return m
}

// Webhook records one webhook's result (queued, ignored, rejected, error)
// and how long it took to answer.
func (m *Metrics) Webhook(result string, took time.Duration) {
	m.webhooks.WithLabelValues(result).Inc()
	m.intake.WithLabelValues(result).Observe(took.Seconds())
}

// handleMetrics serves the Prometheus exposition: the server's registry,
// and gauges read for this scrape with its context. A standby reads no
// database (its copy is in motion, or not open yet): it shows its node
// gauges only.
func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	gauges, err := s.scrapeGauges(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	scrape := prometheus.NewRegistry()
	if err := scrape.Register(gauges); err != nil {
		s.error(w, r, err)
		return
	}
	promhttp.HandlerFor(prometheus.Gatherers{s.Metrics.Registry, scrape}, promhttp.HandlerOpts{
		ErrorLog: promLog{s.Logger}, ErrorHandling: promhttp.ContinueOnError,
	}).ServeHTTP(w, r)
}

// promLog logs promhttp's errors (a collector that failed: the scrape
// goes on without it).
type promLog struct{ l *slog.Logger }

func (p promLog) Println(v ...any) { p.l.Warn("metrics: " + fmt.Sprint(v...)) }

// gaugeSet is the gauges of one scrape. It describes nothing: which
// series it has depends on the node's role and the store's contents.
type gaugeSet []prometheus.Metric

func (gaugeSet) Describe(chan<- *prometheus.Desc) {}

func (g gaugeSet) Collect(ch chan<- prometheus.Metric) {
	for _, m := range g {
		ch <- m
	}
}

var (
	nodeActiveDesc = prometheus.NewDesc("atoll_node_active", "1 on the active node, 0 on a standby.", []string{"node", "active_node"}, nil)
	nodeEpochDesc  = prometheus.NewDesc("atoll_node_epoch", "The lease generation this node knows of.", nil, nil)
	leaseDesc      = prometheus.NewDesc("atoll_lease_expiry_seconds", "When the active node's lease expires (Unix time).", nil, nil)
	lagDesc        = prometheus.NewDesc("atoll_replication_lag_ms", "How far a standby's copy is behind the replica.", nil, nil)
	txidDesc       = prometheus.NewDesc("atoll_replication_txid", "Local and remote (replica) transaction ids.", []string{"side"}, nil)
	requestsDesc   = prometheus.NewDesc("atoll_requests", "Requests (autoplan, comment, close) by state.", []string{"state"}, nil)
	locksDesc      = prometheus.NewDesc("atoll_locks", "Project locks held.", nil, nil)
	jobsDesc       = prometheus.NewDesc("atoll_jobs", "Jobs by kind and state.", []string{"kind", "state"}, nil)
	poolJobsDesc   = prometheus.NewDesc("atoll_pool_queued_jobs", "Jobs queued and not started, by execution pool.", []string{"pool"}, nil)
	poolDispDesc   = prometheus.NewDesc("atoll_pool_queued_dispatches", "Jobs handed to an execution pool's workers and not claimed yet, by pool.", []string{"pool"}, nil)
)

func gauge(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
	return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
}

// scrapeGauges are the node's gauges and, on the active node, the store's.
func (s *Server) scrapeGauges(ctx context.Context) (gaugeSet, error) {
	st := s.fullStatus(ctx)
	g := gaugeSet{
		gauge(nodeActiveDesc, b2f(st.Role == atoll.RoleActive), st.Node, st.ActiveNode),
		gauge(nodeEpochDesc, float64(st.Epoch)),
	}
	if st.LeaseExpiresAt != nil {
		g = append(g, gauge(leaseDesc, float64(st.LeaseExpiresAt.Unix())))
	}
	if rep := st.Replication; rep != nil && rep.URL != "" {
		g = append(g, gauge(lagDesc, float64(rep.LagMS)),
			gauge(txidDesc, float64(rep.LocalTXID), "local"), gauge(txidDesc, float64(rep.RemoteTXID), "remote"))
	}
	if st.Role != atoll.RoleActive {
		return g, nil
	}
	return s.storeGauges(ctx, g)
}

// storeGauges appends to g the gauges read from the store.
func (s *Server) storeGauges(ctx context.Context, g gaugeSet) (gaugeSet, error) {
	for _, state := range []string{atoll.RequestQueued, atoll.RequestRunning} {
		n, err := s.DB.CountRequests(ctx, state)
		if err != nil {
			return nil, err
		}
		g = append(g, gauge(requestsDesc, float64(n), state))
	}
	locks, err := s.DB.Locks(ctx)
	if err != nil {
		return nil, err
	}
	g = append(g, gauge(locksDesc, float64(len(locks))))
	counts, err := s.DB.JobCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		g = append(g, gauge(jobsDesc, float64(c.N), c.Kind, c.State))
	}
	queues, err := s.DB.PoolQueues(ctx)
	if err != nil {
		return nil, err
	}
	for _, q := range queues {
		g = append(g, gauge(poolJobsDesc, float64(q.Jobs), q.Pool), gauge(poolDispDesc, float64(q.Dispatches), q.Pool))
	}
	return g, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
