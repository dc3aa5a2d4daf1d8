package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/web"
)

// A standby forwards every worker call to the active node, reads (the
// plan, git's advertisement) included, though it serves other reads from
// its own copy: only the active holds the claims.
func TestStandbyForwardsWorkerCalls(t *testing.T) {
	activeWorkers := &mock.WorkerService{
		PlanFn: func(_ context.Context, id int64, token string) ([]byte, error) {
			return []byte("plan of the active"), nil
		},
	}
	active := &web.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Node: "a", Workers: activeWorkers,
		Cluster: &fixedNode{st: atoll.NodeStatus{Node: "a", Role: atoll.RoleActive, ActiveNode: "a"}}}
	activeSrv := httptest.NewServer(active.Handler())
	defer activeSrv.Close()
	standby := &web.Server{DB: storetest.Open(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Node: "b", Workers: refusingWorkers(t),
		Cluster: &fixedNode{st: atoll.NodeStatus{Node: "b", Role: atoll.RoleStandby, ActiveNode: "a", ActiveURL: activeSrv.URL}}}
	standbySrv := httptest.NewServer(standby.Handler())
	defer standbySrv.Close()
	code, body, h := call(t, "GET", standbySrv.URL+"/api/v1/workers/jobs/7/plan", "Authorization", "Bearer jt")
	if code != http.StatusOK || body != "plan of the active" || h.Get("X-Atoll-Standby") != "" {
		t.Errorf("plan through the standby = %d %q %v", code, body, h)
	}
}
