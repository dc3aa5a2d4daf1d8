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
	"github.com/atollhq/atoll/store/storetest"
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

func nodeServer(t *testing.T, name string, node atoll.NodeService, db *store.DB) *httptest.Server {
	t.Helper()
	s := &web.Server{DB: db, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Node: name, Cluster: node, APISecret: nodeSecret}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// nodeSecret is the API secret of nodeServer's nodes; call sends it.
const nodeSecret = "node-secret"

// call sends a request with the API secret (unless header sets
// Authorization) and returns status, body and headers.
func call(t *testing.T, method, url string, header ...string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	req.Header.Set("Authorization", "Bearer "+nodeSecret)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// A standby answers health and status itself, reads from its own copy once
// it has one (pages say it is a standby's copy), and forwards everything
// else to the active node; with no active known it answers 503 +
// Retry-After, and it never forwards a forwarded request again.
func TestStandbyForwardsToActive(t *testing.T) {
	active := nodeServer(t, "a", &fixedNode{st: atoll.NodeStatus{Node: "a", Role: atoll.RoleActive, Epoch: 3, ActiveNode: "a", Ready: true}}, storetest.Open(t))
	standbyNode := &fixedNode{st: atoll.NodeStatus{Node: "b", Role: atoll.RoleStandby, Epoch: 3, ActiveNode: "a", ActiveURL: active.URL}}
	copyPath := filepath.Join(t.TempDir(), "atoll.db")
	standbyDB := storetest.New(t, storetest.Path(copyPath)) // no copy yet
	t.Cleanup(func() { standbyDB.Close() })
	standby := nodeServer(t, "b", standbyNode, standbyDB)

	if code, _, _ := call(t, "GET", standby.URL+"/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("standby /readyz = %d, want 503", code)
	}
	code, body, _ := call(t, "GET", standby.URL+"/api/v1/status")
	var st atoll.NodeStatus
	json.Unmarshal([]byte(body), &st)
	if code != http.StatusOK || st.Node != "b" || st.Role != atoll.RoleStandby || st.ActiveNode != "a" {
		t.Errorf("status on the standby = %d %+v", code, st)
	}
	// Without a copy to read, reads are forwarded too: the active's answer.
	if code, body, h := call(t, "GET", standby.URL+"/api/v1/jobs/999"); code != http.StatusNotFound || !strings.Contains(body, "not found") || h.Get("X-Atoll-Standby") != "" {
		t.Errorf("forwarded job lookup = %d %s, want the active's 404", code, body)
	}
	// A mutation is always the active's, which checks the credentials
	// forwarded with it: a wrong token is refused there, a right one passes.
	if code, body, _ := call(t, "DELETE", standby.URL+"/api/v1/locks/1", "Content-Type", "application/json", "Authorization", "Bearer wrong"); code != http.StatusUnauthorized || !strings.Contains(body, "Invalid or revoked API token") {
		t.Errorf("forwarded unlock with a wrong token = %d %s, want the active's 401", code, body)
	}
	if code, body, _ := call(t, "DELETE", standby.URL+"/api/v1/locks/1", "Content-Type", "application/json"); code != http.StatusNotFound {
		t.Errorf("forwarded unlock = %d %s, want the active's 404 (no such lock)", code, body)
	}
	if code, _, _ := call(t, "DELETE", standby.URL+"/api/v1/locks/1", "Content-Type", "application/json", "X-Atoll-Forwarded-By", "c"); code != http.StatusServiceUnavailable {
		t.Errorf("a forwarded request reaching a standby = %d, want 503 (no second hop)", code)
	}

	// With its copy open, the standby reads locally and says so.
	seed := storetest.Open(t, storetest.Path(copyPath))
	seed.Close()
	if err := standbyDB.OpenReader("file:" + copyPath + "?mode=ro"); err != nil {
		t.Fatal(err)
	}
	if code, body, h := call(t, "GET", standby.URL+"/api/v1/locks"); code != http.StatusOK || h.Get("X-Atoll-Standby") != "b" || strings.TrimSpace(body) != "[]" {
		t.Errorf("locks on the standby = %d %q (served by %q), want its own copy's", code, body, h.Get("X-Atoll-Standby"))
	}
	if code, body, _ := call(t, "GET", standby.URL+"/"); code != http.StatusOK || !strings.Contains(body, "Standby: this page is read from this node") {
		t.Errorf("index on the standby = %d, want the standby banner:\n%s", code, body)
	}
	if code, _, _ := call(t, "GET", active.URL+"/"); code != http.StatusOK {
		t.Errorf("active index = %d", code)
	}
	if code, body, _ := call(t, "GET", active.URL+"/"); code != http.StatusOK || strings.Contains(body, "Standby:") {
		t.Errorf("the active's pages carry the standby banner")
	}

	standbyNode.mu.Lock()
	standbyNode.st.ActiveURL, standbyNode.st.ActiveNode = "", ""
	standbyNode.mu.Unlock()
	code, _, h := call(t, "DELETE", standby.URL+"/api/v1/locks/1", "Content-Type", "application/json")
	if code != http.StatusServiceUnavailable || h.Get("Retry-After") == "" {
		t.Errorf("no active known: %d Retry-After=%q, want 503 with Retry-After", code, h.Get("Retry-After"))
	}
	if code, _, _ := call(t, "GET", active.URL+"/readyz"); code != http.StatusOK {
		t.Errorf("active /readyz = %d", code)
	}
}

// A standby signs reads in from its own read-only copy (tokens and
// sessions replicate) without trying to record their use, which only the
// active node may write.
func TestStandbySignsInFromItsCopy(t *testing.T) {
	copyPath := filepath.Join(t.TempDir(), "atoll.db")
	seed := storetest.Open(t, storetest.Path(copyPath))
	token, hash := atoll.NewSecret()
	err := seed.Update(context.Background(), func(tx *store.Tx) error {
		u, err := tx.CreateUser(atoll.NewUser{Name: "vera", Role: atoll.RoleViewer, Source: atoll.UserSourceLocal})
		if err != nil {
			return err
		}
		_, err = tx.CreateToken(u.ID, "ci", hash)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	seed.Close()
	standbyDB := storetest.New(t, storetest.Path(copyPath))
	if err := standbyDB.OpenReader("file:" + copyPath + "?mode=ro"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standbyDB.Close() })
	node := &fixedNode{st: atoll.NodeStatus{Node: "b", Role: atoll.RoleStandby, Epoch: 3, ActiveNode: "a", ActiveURL: "http://127.0.0.1:1"}}
	standby := nodeServer(t, "b", node, standbyDB)
	code, body, h := call(t, "GET", standby.URL+"/api/v1/me", "Authorization", "Bearer "+token)
	if code != http.StatusOK || !strings.Contains(body, `"vera"`) || h.Get("X-Atoll-Standby") != "b" {
		t.Fatalf("me on the standby = %d %s (served by %q)", code, body, h.Get("X-Atoll-Standby"))
	}
	if code, _, _ := call(t, "GET", standby.URL+"/api/v1/me", "Authorization", "Bearer wrong"); code != http.StatusUnauthorized {
		t.Fatalf("wrong token on the standby = %d", code)
	}
}
