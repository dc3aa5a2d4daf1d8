package web_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/web"
)

func TestOverviewPage(t *testing.T) {
	f := newPageFixture(t)
	res, body := f.get(t, "/")
	wantHTML(t, res, http.StatusOK)
	wantContains(t, body,
		"v9.9.9", "node-a",
		// This node: a single node is active at epoch 1; applies allowed.
		`badge-role-active`, "Epoch", "<dd>1</dd>", "allowed",
		// The running job, the recent (finished) one, linked, with badges
		// and the plan summary.
		"Running", `href="/jobs/`+itoa(f.liveJob)+`"`, "badge-running",
		"Recent runs", `href="/jobs/`+itoa(f.doneJob)+`"`, "badge-succeeded",
		`<span class="add">+2</span>`, `<span class="chg">~1</span>`, `<span class="del">-3</span>`, "acme/infra#7",
		"Nothing is queued.",
		// The lock with its unlock button.
		`data-unlock="`+itoa(f.lockID)+`"`,
		// The open pull request, linked, its title escaped.
		"Open pull requests", `href="/repos/acme/infra/pulls/7"`, "Add &lt;b&gt;bucket&lt;/b&gt;", "alice", "0123456",
		// Each section is re-fetched in place when its topics change.
		`id="section-jobs"`, `hx-get="/?section=jobs"`, `hx-trigger="atoll:changed"`, `data-live-topics="job"`,
		`hx-get="/?section=node"`, `data-live-topics="node freeze drift"`, `hx-get="/?section=locks"`, `data-live-topics="lock"`,
		`hx-get="/?section=runs"`, `hx-get="/?section=pulls"`,
		"/assets/atoll.js", "/assets/live.js", "/assets/atoll.css")
	if strings.Contains(body, "<b>bucket</b>") {
		t.Error("pull request title is not escaped")
	}
	if strings.Contains(body, "data-refresh") || strings.Contains(body, `http-equiv="refresh"`) {
		t.Error("the overview reloads itself")
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP = %q", csp)
	}
}

// A section alone is its content, without the page around it.
func TestOverviewSections(t *testing.T) {
	f := newPageFixture(t)
	for _, tc := range []struct {
		section   string
		want, not []string
	}{
		{"node", []string{"badge-role-active", "allowed"}, []string{"badge-running", "Open pull requests"}},
		{"jobs", []string{"Running", `href="/jobs/` + itoa(f.liveJob) + `"`, "Nothing is queued."}, []string{`href="/jobs/` + itoa(f.doneJob) + `"`}},
		{"runs", []string{"Recent runs", `href="/jobs/` + itoa(f.doneJob) + `"`}, []string{`href="/jobs/` + itoa(f.liveJob) + `"`}},
		{"locks", []string{`data-unlock="` + itoa(f.lockID) + `"`}, []string{"Recent runs"}},
		{"pulls", []string{"Open pull requests", "Add &lt;b&gt;bucket&lt;/b&gt;"}, []string{"data-unlock"}},
	} {
		res, body := f.get(t, "/?section="+tc.section)
		wantHTML(t, res, http.StatusOK)
		wantContains(t, body, tc.want...)
		for _, s := range append(tc.not, "<html", "<section", "<header") {
			if strings.Contains(body, s) {
				t.Errorf("section %s contains %q", tc.section, s)
			}
		}
	}
	res, body := f.get(t, "/?section=nope")
	wantHTML(t, res, http.StatusBadRequest)
	wantContains(t, body, "No section")
}

// The overview on a standby says so, with its lag; the freeze is shown.
func TestOverviewStandby(t *testing.T) {
	f := newPageFixture(t)
	s := &web.Server{DB: f.db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Node: "node-b",
		Cluster: standbyCluster{}}
	h := s.Handler()
	req := httptest.NewRequest("GET", "/?section=node", nil)
	req = req.WithContext(atoll.NewContextWithUser(req.Context(), &atoll.User{Name: "alice", Role: atoll.RoleViewer}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("standby overview: %d %s", rec.Code, rec.Body)
	}
	wantContains(t, rec.Body.String(), "badge-role-standby", "active node node-a", "<dd>4</dd>", "1234 ms behind the active node")
}

type standbyCluster struct{}

func (standbyCluster) Status(context.Context) atoll.NodeStatus {
	return atoll.NodeStatus{Node: "node-b", Role: atoll.RoleStandby, Epoch: 4, ActiveNode: "node-a", ActiveURL: "http://127.0.0.1:1"}
}

func (standbyCluster) Replication(context.Context) *atoll.ReplicationStatus {
	return &atoll.ReplicationStatus{LagMS: 1234}
}
