package main_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll/runner/notify"
)

// A notification is not lost with the active node: the apply's webhook is
// queued with the apply's end, the receiver is down while node A tries it,
// A is killed (kill -9), and B, once active, delivers it.
func TestNotificationsFailover(t *testing.T) {
	var mu sync.Mutex
	up := false
	var failed, delivered [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b json.RawMessage
		json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		defer mu.Unlock()
		if !up {
			failed = append(failed, b)
			w.WriteHeader(http.StatusBadGateway)
			return
		}
		delivered = append(delivered, b)
	}))
	defer srv.Close()
	counts := func() (int, int) {
		mu.Lock()
		defer mu.Unlock()
		return len(failed), len(delivered)
	}
	config := filepath.Join(t.TempDir(), "webhooks.yaml")
	os.WriteFile(config, []byte("webhooks:\n- event: apply\n  kind: http\n  url: "+srv.URL+"/hook\n"), 0o600)

	c := newHACluster(t, "file", map[string]string{"small/main.tf": tfProject("small", 1)})
	a := startNode(t, c, "a", "--webhooks-config", config)
	waitActive(t, 30*time.Second, a)
	b := startNode(t, c, "b", "--webhooks-config", config)
	waitStandbyOf(t, 10*time.Second, b, a)

	d, _ := c.openPull(t, 1, "small", map[string]string{"small/main.tf": tfProject("small", 2)}, "small/main.tf")
	mustSend(t, a.URL, d)
	waitPullComment(t, c.GH, 1, "to add", 60*time.Second)
	mustSend(t, a.URL, c.commentDelivery(t, 1, "atlantis apply"))
	waitPullComment(t, c.GH, 1, "Apply complete!", 60*time.Second)
	// A tried, failed, and recorded when to try again (it logs after).
	eventually(t, 30*time.Second, "A's failed attempt recorded", func() bool {
		return strings.Contains(a.log(), "notification failed: retrying")
	})
	a.kill9(t)
	if f, n := counts(); f < 1 || n != 0 {
		t.Fatalf("before the kill: %d failed, %d delivered; want a failed attempt only", f, n)
	}
	mu.Lock()
	up = true
	mu.Unlock()
	waitActive(t, takeoverBound, b)
	eventually(t, 60*time.Second, "the webhook delivered by B", func() bool { _, n := counts(); return n >= 1 })

	mu.Lock()
	body := delivered[0]
	mu.Unlock()
	var res notify.ApplyResult
	if err := json.Unmarshal(body, &res); err != nil {
		t.Fatal(err)
	}
	if !res.Success || res.Directory != "small" || res.Pull.Num != 1 || res.Repo.FullName != "acme/infra" {
		t.Errorf("delivered payload = %s", body)
	}
	// Recorded sent (committed, replicated), then logged.
	eventually(t, 30*time.Second, "B's log saying it sent it", func() bool { return strings.Contains(b.log(), "notification sent") })
}
