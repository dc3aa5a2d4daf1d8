package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// fixedNode is a NodeService with a status a test sets.
type fixedNode struct {
	mu sync.Mutex
	st atoll.NodeStatus
}

func (n *fixedNode) Status(context.Context) atoll.NodeStatus {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.st
}

func (n *fixedNode) Replication(context.Context) *atoll.ReplicationStatus {
	return &atoll.ReplicationStatus{URL: "file:///replica"}
}

func nodeServer(t *testing.T, name string, node atoll.NodeService) *httptest.Server {
	t.Helper()
	db := store.NewDB(filepath.Join(t.TempDir(), "atoll.db"))
	if err := db.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := &web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Node: name, Cluster: node}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// A standby answers health and status itself and forwards everything else
// to the active node; with no active known it answers 503 + Retry-After,
// and it never forwards a forwarded request again.
func TestStandbyForwardsToActive(t *testing.T) {
	active := nodeServer(t, "a", &fixedNode{st: atoll.NodeStatus{Node: "a", Role: atoll.RoleActive, Epoch: 3, ActiveNode: "a", Ready: true}})
	standbyNode := &fixedNode{st: atoll.NodeStatus{Node: "b", Role: atoll.RoleStandby, Epoch: 3, ActiveNode: "a", ActiveURL: active.URL}}
	standby := nodeServer(t, "b", standbyNode)

	get := func(url string, header ...string) (int, string, http.Header) {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if len(header) == 2 {
			req.Header.Set(header[0], header[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	cases := []struct {
		path       string
		wantStatus int
		wantNode   string // the node whose status answered
	}{
		{"/readyz", http.StatusServiceUnavailable, ""},
		{"/api/v1/status", http.StatusOK, "b"},
		{"/api/v1/locks", http.StatusOK, ""},
	}
	for _, c := range cases {
		code, body, _ := get(standby.URL + c.path)
		if code != c.wantStatus {
			t.Errorf("GET %s on the standby = %d %s, want %d", c.path, code, body, c.wantStatus)
		}
		if c.wantNode != "" {
			var st atoll.NodeStatus
			json.Unmarshal([]byte(body), &st)
			if st.Node != c.wantNode || st.Role != atoll.RoleStandby || st.ActiveNode != "a" {
				t.Errorf("status on the standby = %+v", st)
			}
		}
	}
	// Forwarded: the active's answer comes back (its readyz is 200, but
	// readyz is never forwarded; the status page of a job is).
	if code, body, _ := get(standby.URL + "/api/v1/jobs/999"); code != http.StatusNotFound || !strings.Contains(body, "not found") {
		t.Errorf("forwarded job lookup = %d %s, want the active's 404", code, body)
	}
	if code, _, _ := get(standby.URL+"/api/v1/locks", "X-Atoll-Forwarded-By", "c"); code != http.StatusServiceUnavailable {
		t.Errorf("a forwarded request reaching a standby = %d, want 503 (no second hop)", code)
	}
	standbyNode.mu.Lock()
	standbyNode.st.ActiveURL, standbyNode.st.ActiveNode = "", ""
	standbyNode.mu.Unlock()
	code, _, h := get(standby.URL + "/api/v1/locks")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("no active known: %d Retry-After=%q, want 503 with Retry-After", code, h.Get("Retry-After"))
	}
	if code, _, _ := get(active.URL + "/readyz"); code != http.StatusOK {
		t.Errorf("active /readyz = %d", code)
	}
}
