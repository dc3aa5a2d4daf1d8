package web_test

import (
	"bytes"
	"context"
	"maps"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/metrics"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// scrape GETs url's /metrics with the API secret and parses the
// exposition; it returns the families, as a Gatherer for testutil's
// comparisons, and the raw text for the linter.
func scrape(t *testing.T, url, secret string) (prometheus.Gatherer, map[string]*dto.MetricFamily, string) {
	t.Helper()
	code, body, h := call(t, "GET", url+"/metrics", "Authorization", "Bearer "+secret)
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d: %s", code, body)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("/metrics Content-Type %q, want the text format", ct)
	}
	parser := expfmt.NewTextParser(model.LegacyValidation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(body))
	if err != nil {
		t.Fatalf("/metrics does not parse: %v\n%s", err, body)
	}
	g := prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) {
		// In name order, as a registry gathers them.
		var out []*dto.MetricFamily
		for _, name := range slices.Sorted(maps.Keys(families)) {
			out = append(out, families[name])
		}
		return out, nil
	})
	return g, families, body
}

// The active node's /metrics after webhooks, a project run and a command:
// the intake histogram by result, the store's gauges (requests, locks,
// jobs, each pool's queue), Atlantis's metrics with their types and
// labels, the Go runtime and process collectors; lint-clean but for
// Atlantis's counter names, kept for its dashboards.
func TestMetricsOnTheActiveNode(t *testing.T) {
	s := startLiveServer(t, nil)
	seedMetricsStore(t, s.DB)

	ping := []byte(`{"zen":"Keep it logically awesome.","hook_id":1}`)
	for _, sig := range []string{sign(ping), sign([]byte("another body"))} {
		req, _ := http.NewRequest("POST", s.URL+"/events", bytes.NewReader(ping))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "ping")
		req.Header.Set("X-Hub-Signature-256", sig)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	s.Metrics.Atlantis.ProjectRun(atoll.JobPlan, metrics.Project{BaseRepo: "acme/infra", PullNumber: "7", ProjectPath: "staging", Workspace: "default"}, metrics.Success, 3*time.Second)
	s.Metrics.Atlantis.Command("cmd_autoplan", metrics.Success, 4*time.Second)

	g, families, body := scrape(t, s.URL, liveSecret)

	// What the store holds, read with the scrape: one request queued, one
	// lock, the jobs by kind and state, and each pool's queue.
	const stored = `
# HELP atoll_requests Requests (autoplan, comment, close) by state.
# TYPE atoll_requests gauge
atoll_requests{state="queued"} 1
atoll_requests{state="running"} 0
# HELP atoll_locks Project locks held.
# TYPE atoll_locks gauge
atoll_locks 1
# HELP atoll_jobs Jobs by kind and state.
# TYPE atoll_jobs gauge
atoll_jobs{kind="apply",state="queued"} 1
atoll_jobs{kind="plan",state="queued"} 2
atoll_jobs{kind="plan",state="succeeded"} 1
# HELP atoll_pool_queued_jobs Jobs queued and not started, by execution pool.
# TYPE atoll_pool_queued_jobs gauge
atoll_pool_queued_jobs{pool="ci"} 1
atoll_pool_queued_jobs{pool="local"} 2
# HELP atoll_pool_queued_dispatches Jobs handed to an execution pool's workers and not claimed yet, by pool.
# TYPE atoll_pool_queued_dispatches gauge
atoll_pool_queued_dispatches{pool="ci"} 0
atoll_pool_queued_dispatches{pool="local"} 0
# HELP atoll_node_active 1 on the active node, 0 on a standby.
# TYPE atoll_node_active gauge
atoll_node_active{active_node="",node=""} 1
# HELP atoll_webhooks_total Webhooks received, by result.
# TYPE atoll_webhooks_total counter
atoll_webhooks_total{result="error"} 0
atoll_webhooks_total{result="ignored"} 1
atoll_webhooks_total{result="queued"} 0
atoll_webhooks_total{result="rejected"} 1
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(stored), "atoll_requests", "atoll_locks", "atoll_jobs",
		"atoll_pool_queued_jobs", "atoll_pool_queued_dispatches", "atoll_node_active", "atoll_webhooks_total"); err != nil {
		t.Error(err)
	}

	// The intake histogram: one observation each for the ignored ping and
	// the rejected signature, in the buckets from 1 ms to 10 s.
	intake := families["atoll_webhook_intake_seconds"]
	if intake.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("atoll_webhook_intake_seconds is a %v, want a histogram", intake.GetType())
	}
	counts := map[string]uint64{}
	for _, m := range intake.Metric {
		h := m.GetHistogram()
		counts[labelValue(m, "result")] = h.GetSampleCount()
		if b := h.Bucket; len(b) != 14 || b[0].GetUpperBound() != 0.001 || b[12].GetUpperBound() != 10 || !math.IsInf(b[13].GetUpperBound(), 1) {
			t.Errorf("intake buckets %v, want 13 from 1 ms to 10 s, then +Inf", b)
		}
		if h.GetSampleCount() > 0 && (h.GetSampleSum() <= 0 || h.GetSampleSum() > 10) {
			t.Errorf("intake %s took %g s in all", labelValue(m, "result"), h.GetSampleSum())
		}
	}
	if want := map[string]uint64{"queued": 0, "ignored": 1, "rejected": 1, "error": 0}; !maps.Equal(counts, want) {
		t.Errorf("intake counts by result %v, want %v", counts, want)
	}

	// Atlantis's, recorded in the server's registry.
	const atlantis = `
# HELP atlantis_project_plan_execution_success atlantis_project_plan_execution_success counter
# TYPE atlantis_project_plan_execution_success counter
atlantis_project_plan_execution_success{base_repo="acme/infra",pr_number="7",project="",project_path="staging",terraform_distribution="",terraform_version="",workspace="default"} 1
# HELP atlantis_cmd_autoplan_execution_success atlantis_cmd_autoplan_execution_success counter
# TYPE atlantis_cmd_autoplan_execution_success counter
atlantis_cmd_autoplan_execution_success 1
# HELP atlantis_cmd_comment_apply_execution_error atlantis_cmd_comment_apply_execution_error counter
# TYPE atlantis_cmd_comment_apply_execution_error counter
atlantis_cmd_comment_apply_execution_error 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(atlantis), "atlantis_project_plan_execution_success",
		"atlantis_cmd_autoplan_execution_success", "atlantis_cmd_comment_apply_execution_error"); err != nil {
		t.Error(err)
	}
	for name, typ := range map[string]dto.MetricType{
		"atlantis_project_plan_execution_time": dto.MetricType_SUMMARY,
		"atlantis_cmd_autoplan_execution_time": dto.MetricType_SUMMARY,
		"go_goroutines":                        dto.MetricType_GAUGE,
		"process_start_time_seconds":           dto.MetricType_GAUGE,
	} {
		if mf := families[name]; mf.GetType() != typ || len(mf.GetMetric()) != 1 {
			t.Errorf("%s = %v, want one %v", name, mf, typ)
		}
	}
	if n := families["atlantis_project_plan_execution_time"].GetMetric()[0].GetSummary().GetSampleSum(); n != 3 {
		t.Errorf("project plan time sum %g, want 3", n)
	}

	lintClean(t, body)
}

// lintClean fails on every problem promlint finds in an exposition but
// the names kept for the dashboards that query them: Atlantis's counters,
// without "_total" as Atlantis names them, and atoll_replication_lag_ms.
func lintClean(t *testing.T, body string) {
	t.Helper()
	problems, err := promlint.New(strings.NewReader(body)).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "atlantis_") && strings.Contains(p.Text, `"_total" suffix`) {
			continue
		}
		if p.Metric == "atoll_replication_lag_ms" && strings.Contains(p.Text, "abbreviated units") {
			continue
		}
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// A standby answers /metrics without reading its database (it has no copy
// open: a read would fail): its node and replication gauges, its process
// metrics, and none of the store's.
func TestMetricsOnAStandby(t *testing.T) {
	expiry := time.Unix(1_800_000_000, 0)
	node := &fixedNode{st: atoll.NodeStatus{Node: "b", Role: atoll.RoleStandby, Epoch: 3, ActiveNode: "a", ActiveURL: "http://127.0.0.1:1", LeaseExpiresAt: &expiry}}
	db := storetest.New(t, storetest.Path(filepath.Join(t.TempDir(), "atoll.db"))) // no copy yet
	t.Cleanup(func() { db.Close() })
	srv := nodeServer(t, "b", node, db)

	g, families, body := scrape(t, srv.URL, nodeSecret)
	const want = `
# HELP atoll_node_active 1 on the active node, 0 on a standby.
# TYPE atoll_node_active gauge
atoll_node_active{active_node="a",node="b"} 0
# HELP atoll_node_epoch The lease generation this node knows of.
# TYPE atoll_node_epoch gauge
atoll_node_epoch 3
# HELP atoll_lease_expiry_seconds When the active node's lease expires (Unix time).
# TYPE atoll_lease_expiry_seconds gauge
atoll_lease_expiry_seconds 1.8e+09
# HELP atoll_replication_txid Local and remote (replica) transaction ids.
# TYPE atoll_replication_txid gauge
atoll_replication_txid{side="local"} 0
atoll_replication_txid{side="remote"} 0
`
	if err := testutil.GatherAndCompare(g, strings.NewReader(want), "atoll_node_active", "atoll_node_epoch",
		"atoll_lease_expiry_seconds", "atoll_replication_txid"); err != nil {
		t.Error(err)
	}
	for _, name := range []string{"atoll_requests", "atoll_locks", "atoll_jobs", "atoll_pool_queued_jobs", "atoll_pool_queued_dispatches"} {
		if _, ok := families[name]; ok {
			t.Errorf("a standby shows %s, read from its database", name)
		}
	}
	for _, name := range []string{"atoll_replication_lag_ms", "atoll_webhooks_total", "atlantis_cmd_autoplan_execution_success", "go_goroutines"} {
		if _, ok := families[name]; !ok {
			t.Errorf("a standby lacks %s", name)
		}
	}
	lintClean(t, body)
}

// seedMetricsStore stores one queued request with its jobs (two local
// plans, a ci apply), a finished plan holding its project's lock.
func seedMetricsStore(t *testing.T, db *store.DB) {
	t.Helper()
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra"})
		if err != nil {
			return err
		}
		pullID, err := tx.UpsertPull(repoID, atoll.Pull{Number: 7, HeadSHA: "abc", Author: "alice", State: atoll.PullOpen})
		if err != nil {
			return err
		}
		projectID, err := tx.UpsertProject(repoID, atoll.Project{Dir: "staging", Workspace: "default"})
		if err != nil {
			return err
		}
		req := &atoll.Request{Kind: atoll.RequestAutoplan, PullID: pullID, User: "alice", HeadSHA: "abc"}
		if err := tx.InsertRequest(req); err != nil {
			return err
		}
		var last int64
		for _, j := range []*atoll.Job{
			{Kind: atoll.JobPlan}, {Kind: atoll.JobPlan, Spec: atoll.JobSpec{Pool: atoll.PoolLocal}},
			{Kind: atoll.JobApply, Spec: atoll.JobSpec{Pool: "ci"}}, {Kind: atoll.JobPlan},
		} {
			j.RequestID, j.PullID, j.ProjectID, j.HeadSHA, j.User = req.ID, pullID, projectID, "abc", "alice"
			if err := tx.InsertJob(j); err != nil {
				return err
			}
			last = j.ID
		}
		if _, err := tx.TakeLock(projectID, pullID, "alice"); err != nil {
			return err
		}
		if err := tx.StartJob(last); err != nil {
			return err
		}
		return tx.FinishJob(last, atoll.JobSucceeded, "", nil)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func labelValue(m *dto.Metric, name string) string {
	for _, l := range m.Label {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}
