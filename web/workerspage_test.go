package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/mock"
	"github.com/atollhq/atoll/web"
)

// workerOverview is what the mock WorkerAdmin shows: two tokens (one
// revoked), a worker running job 42, jobs queued in two pools.
func workerOverview() *atoll.WorkerOverview {
	now := time.Now()
	seen, revoked := now.Add(-10*time.Second), now.Add(-time.Hour)
	return &atoll.WorkerOverview{
		Tokens: []*atoll.WorkerToken{
			{ID: 3, Name: "eu-runners", Pool: "eu", CreatedBy: "admin-user", CreatedAt: now.Add(-2 * time.Hour), SeenAt: &seen, Worker: "w-eu-1", Version: "v1.4.0"},
			{ID: 2, Name: "old-us", Pool: "us", CreatedBy: "admin-user", CreatedAt: now.Add(-48 * time.Hour), RevokedAt: &revoked, RevokedBy: "admin-user"},
		},
		Workers:    []atoll.WorkerSeen{{Name: "w-eu-1", Pool: "eu", Version: "v1.4.0", TokenID: 3, SeenAt: seen, Jobs: []int64{42}}},
		Queued:     map[string]int{"eu": 2, "us": 1},
		Running:    []*atoll.Dispatch{{JobID: 42, Pool: "eu", Attempt: 1, State: atoll.DispatchClaimed, TokenID: 3, Worker: "w-eu-1"}},
		Kubernetes: map[string]string{"k8s": "namespace ci"},
	}
}

// serveAs serves h to one request as u and returns the recorder.
func serveAs(h http.Handler, u *atoll.User, method, path string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	req = req.WithContext(atoll.NewContextWithUser(req.Context(), u))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// The workers page shows what WorkerAdmin.Workers returns: the queued
// jobs per pool, the workers seen with their jobs linked, and the tokens,
// read-only; the header links it. Without worker pools it says so.
func TestWorkersPage(t *testing.T) {
	wa := &mock.WorkerAdmin{WorkersFn: func(context.Context) (*atoll.WorkerOverview, error) { return workerOverview(), nil }}
	s := &web.Server{WorkerAdmin: wa, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	h := s.Handler()
	viewer := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	rec := serveAs(h, viewer, "GET", "/workers")
	body := rec.Body.String()
	if rec.Code != 200 {
		t.Fatalf("workers page = %d %s", rec.Code, body)
	}
	wantContains(t, body, `<a href="/workers">Workers</a>`, `id="workers-seen"`, "w-eu-1", "v1.4.0", `href="/jobs/42"`, "#42",
		`id="worker-queues"`, `<td class="mono">eu</td><td>2</td>`, `<td class="mono">us</td><td>1</td>`,
		"eu-runners", "old-us", "revoked", `data-live-topics="job"`, `hx-get="/workers?section=workers"`,
		`id="kubernetes-pools"`, `<td class="mono">k8s</td><td>Kubernetes Jobs, namespace ci</td>`)
	if strings.Contains(body, "/admin/worker-tokens") || strings.Contains(body, "admin page") {
		t.Error("the workers page offers the admin's actions to a viewer")
	}
	rec = serveAs(h, viewer, "GET", "/workers?section=workers")
	if rec.Code != 200 || strings.Contains(rec.Body.String(), "<html") || !strings.Contains(rec.Body.String(), "w-eu-1") {
		t.Errorf("workers section = %d %s", rec.Code, rec.Body)
	}
	if rec := serveAs(h, viewer, "GET", "/workers?section=nope"); rec.Code != 400 {
		t.Errorf("bad section = %d", rec.Code)
	}

	wa.WorkersFn = func(context.Context) (*atoll.WorkerOverview, error) {
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "Not now.")
	}
	if rec := serveAs(h, viewer, "GET", "/workers"); rec.Code != 503 || !strings.Contains(rec.Body.String(), "Not now.") {
		t.Errorf("failing WorkerAdmin = %d %s", rec.Code, rec.Body)
	}

	none := (&web.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	rec = serveAs(none, viewer, "GET", "/workers")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "This server has no worker pools") || strings.Contains(rec.Body.String(), `href="/workers"`) {
		t.Errorf("workers page without pools = %d %s", rec.Code, rec.Body)
	}
}

// With worker pools the overview's jobs section counts the jobs waiting
// for a worker, per pool; without, it has no such line.
func TestOverviewWorkerQueues(t *testing.T) {
	f := newPageFixture(t)
	wa := &mock.WorkerAdmin{WorkersFn: func(context.Context) (*atoll.WorkerOverview, error) { return workerOverview(), nil }}
	u := &atoll.User{Name: "vera", Role: atoll.RoleViewer}
	h := (&web.Server{DB: f.db, WorkerAdmin: wa, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	for _, path := range []string{"/", "/?section=jobs"} {
		rec := serveAs(h, u, "GET", path)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), "eu: 2, us: 1") {
			t.Errorf("%s with pools = %d, lacks the queues", path, rec.Code)
		}
	}
	h = (&web.Server{DB: f.db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}).Handler()
	if rec := serveAs(h, u, "GET", "/?section=jobs"); rec.Code != 200 || strings.Contains(rec.Body.String(), "worker-queues") {
		t.Errorf("overview without pools = %d, shows queues", rec.Code)
	}
}
