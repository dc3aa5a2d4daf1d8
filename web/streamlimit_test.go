package web_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/web"
)

// A user holds at most StreamsPerUser live streams, change streams and job
// log websockets together: one more gets a 429 that says why, and a
// stream that ends frees its place.
func TestLiveStreamsPerUser(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) {
		s.Changes = changes
		s.StreamsPerUser = 2
	})
	job := runningJob(t, s.DB)
	openChanges(t, s.URL) // holds its place to the end
	conn, _, err := websocket.DefaultDialer.Dial(wsURL(s, job, 1), liveAuth())
	if err != nil {
		t.Fatal(err)
	}
	refused := func(what string, res *http.Response) {
		t.Helper()
		body, _ := io.ReadAll(res.Body)
		var e struct{ Error string }
		if res.StatusCode != http.StatusTooManyRequests || json.Unmarshal(body, &e) != nil || !strings.Contains(e.Error, "already holds 2 live streams") {
			t.Fatalf("%s beyond the limit: %d %s; want 429 naming the limit", what, res.StatusCode, body)
		}
	}
	client := &http.Client{Timeout: 10 * time.Second}
	res, err := liveGet(client, s.URL+"/api/v1/changes")
	if err != nil {
		t.Fatal(err)
	}
	refused("a change stream", res)
	res.Body.Close()
	_, res, err = websocket.DefaultDialer.Dial(wsURL(s, job, 1), liveAuth())
	if err == nil || res == nil {
		t.Fatalf("a job log websocket beyond the limit connected (%v)", err)
	}
	refused("a job log websocket", res)

	// The websocket ends: its place is free again.
	conn.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := liveGet(client, s.URL+"/api/v1/changes")
		if err != nil {
			t.Fatal(err)
		}
		status := res.StatusCode
		res.Body.Close()
		if status == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a stream after one ended: %d; want 200", status)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
