package notify_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/notify"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

func webhooks(t *testing.T, doc string) []notify.Webhook {
	t.Helper()
	w, err := notify.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func result() notify.ApplyResult {
	return notify.Apply{
		Repo: atoll.Repo{VCS: atoll.VCSGitHub, Host: "github.com", Owner: "acme", Name: "infra", CloneURL: "https://x-access-token:ghs_secret@github.com/acme/infra.git"},
		Pull: atoll.Pull{Number: 7, HeadSHA: "abc", HeadRef: "feature", BaseRef: "main", Author: "alice", State: atoll.PullOpen, URL: "https://github.com/acme/infra/pull/7"},
		User: "bob", Dir: ".", Workspace: "default", Success: false, JobURL: "http://atoll/jobs/3",
	}.Result()
}

func TestApplyResultHasNoCredentials(t *testing.T) {
	r := result()
	if r.Repo.CloneURL != "https://github.com/acme/infra.git" || r.Repo.SanitizedCloneURL != r.Repo.CloneURL || r.Pull.BaseRepo.CloneURL != r.Repo.CloneURL {
		t.Errorf("clone URLs = %q, %q, %q", r.Repo.CloneURL, r.Repo.SanitizedCloneURL, r.Pull.BaseRepo.CloneURL)
	}
	b, _ := json.Marshal(r)
	if strings.Contains(string(b), "ghs_secret") {
		t.Errorf("the payload holds the clone token: %s", b)
	}
}

func TestDeliverSlackRefusal(t *testing.T) {
	var got map[string]any
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth = r.Header.Get("Authorization")
		json.NewDecoder(r.Body).Decode(&got)
		if r.URL.Path != "/api/chat.postMessage" {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"ok":false,"error":"channel_not_found"}`)
	}))
	defer srv.Close()
	s := &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: apply, kind: slack, channel: ops}\n"), SlackToken: "xoxb-tok", SlackAPIURL: srv.URL + "/api/"}
	payload, _ := json.Marshal(result())
	err := s.Deliver(context.Background(), 0, notify.KindSlack, payload)
	if err == nil || !strings.Contains(err.Error(), "channel_not_found") {
		t.Fatalf("err = %v, want Slack's refusal", err)
	}
	if auth != "Bearer xoxb-tok" || got["channel"] != "ops" || !strings.Contains(got["text"].(string), "Apply failed for <https://github.com/acme/infra/pull/7|acme/infra#7> by bob") {
		t.Errorf("auth %q, message %v", auth, got)
	}
	// A destination that changed kind since the row was queued.
	if err := s.Deliver(context.Background(), 0, notify.KindHTTP, payload); err == nil {
		t.Error("a row of kind http was sent to a slack entry")
	}
}

func TestDeliverHTTPErrorHidesURL(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	s := &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: apply, kind: http, url: '"+srv.URL+"/hook?token=q_secret'}\n")}
	err := s.Deliver(context.Background(), 0, notify.KindHTTP, []byte(`{}`))
	if err == nil || !strings.Contains(err.Error(), "503") || !strings.Contains(err.Error(), "down for maintenance") {
		t.Fatalf("err = %v, want the status and body", err)
	}
	srv.Close()
	err = s.Deliver(context.Background(), 0, notify.KindHTTP, []byte(`{}`))
	if err == nil || strings.Contains(err.Error(), "q_secret") {
		t.Errorf("a network error = %v: want one without the URL", err)
	}
}

// A receiver that echoes what it was sent in its refusal: the header
// values and the Slack token are not in the error, which is stored and
// logged.
func TestDeliverErrorRedactsEchoedSecrets(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/chat.postMessage" {
			io.WriteString(w, `{"ok":false,"error":"invalid_auth `+r.Header.Get("Authorization")+`"}`)
			return
		}
		http.Error(w, "bad key "+r.Header.Get("X-Api-Key"), http.StatusUnauthorized)
	}))
	defer srv.Close()
	s := &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: apply, kind: http, url: '"+srv.URL+"/hook'}\n- {event: apply, kind: slack, channel: ops}\n"),
		Headers: map[string][]string{"X-Api-Key": {"k_secret_123"}}, SlackToken: "xoxb-secret-456", SlackAPIURL: srv.URL + "/api/"}
	payload, _ := json.Marshal(result())
	for dest, kind := range []string{notify.KindHTTP, notify.KindSlack} {
		err := s.Deliver(context.Background(), dest, kind, payload)
		if err == nil || !strings.Contains(err.Error(), "[redacted]") || strings.Contains(err.Error(), "k_secret_123") || strings.Contains(err.Error(), "xoxb-secret-456") {
			t.Errorf("%s: err = %v; want the echoed secret redacted", kind, err)
		}
	}
}

// The outbox retries a failing receiver with backoff until it answers 2xx,
// and gives a notification up after MaxAttempts.
func TestOutboxRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/never") || calls.Add(1) < 3 {
			w.WriteHeader(http.StatusBadGateway)
		}
	}))
	defer srv.Close()
	db := storetest.Open(t)
	var ids []int64
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		ids = nil
		for dest := range 2 {
			id, err := tx.InsertNotification(atoll.Notification{JobID: 1, Dest: dest, Kind: notify.KindHTTP, Payload: []byte(`{}`)})
			if err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	o := &notify.Outbox{DB: db, Logger: slog.New(slog.DiscardHandler), Backoff: 10 * time.Millisecond, MaxAttempts: 4,
		Sender: &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: apply, kind: http, url: '"+srv.URL+"/flaky'}\n- {event: apply, kind: http, url: '"+srv.URL+"/never'}\n")}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); o.Run(context.Background(), nil, stop) }()
	defer func() { close(stop); wg.Wait() }()
	deadline := time.Now().Add(20 * time.Second)
	for {
		states, err := db.Notifications(context.Background(), 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(states) == 2 && states[0].Sent && states[1].Failed {
			if states[0].Attempts != 3 || states[1].Attempts != 4 || !strings.Contains(states[1].LastError, "502") {
				t.Errorf("states = %+v", states)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not delivered/given up: %+v", states)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A node past its lease deadline sends no notification, of either kind:
// the receiver sees nothing and the error wraps atoll.ErrFenced.
func TestDeliverFencedSendsNothing(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.WriteString(w, `{"ok":true}`)
	}))
	defer srv.Close()
	deadline := time.Now().Add(time.Minute)
	s := &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: apply, kind: http, url: '"+srv.URL+"/hook'}\n- {event: apply, kind: slack, channel: ops}\n"),
		SlackToken: "xoxb-tok", SlackAPIURL: srv.URL + "/api/", Fence: &atoll.Fence{Deadline: func() time.Time { return deadline }}}
	payload, _ := json.Marshal(result())
	for dest, kind := range []string{notify.KindHTTP, notify.KindSlack} {
		if err := s.Deliver(context.Background(), dest, kind, payload); err != nil {
			t.Fatalf("%s before the deadline: %v", kind, err)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("%d deliveries before the deadline, want 2", calls.Load())
	}
	deadline = time.Now().Add(-time.Millisecond)
	for dest, kind := range []string{notify.KindHTTP, notify.KindSlack} {
		err := s.Deliver(context.Background(), dest, kind, payload)
		if !errors.Is(err, atoll.ErrFenced) {
			t.Errorf("%s past the deadline: err = %v, want atoll.ErrFenced", kind, err)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("%d deliveries after the deadline passed, want none", calls.Load()-2)
	}
}

// A fenced node's outbox neither claims nor sends: the notification stays
// unattempted for the next active node.
func TestOutboxFencedClaimsNothing(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { calls.Add(1) }))
	defer srv.Close()
	db := storetest.Open(t)
	err := db.Update(context.Background(), func(tx *store.Tx) error {
		_, err := tx.InsertNotification(atoll.Notification{JobID: 1, Dest: 0, Kind: notify.KindHTTP, Payload: []byte(`{}`)})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	checked := make(chan struct{})
	var once sync.Once
	fence := &atoll.Fence{Deadline: func() time.Time { once.Do(func() { close(checked) }); return time.Time{} }}
	o := &notify.Outbox{DB: db, Logger: slog.New(slog.DiscardHandler),
		Sender: &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: apply, kind: http, url: '"+srv.URL+"/hook'}\n"), Fence: fence}}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); o.Run(context.Background(), nil, stop) }()
	select {
	case <-checked:
	case <-time.After(10 * time.Second):
		t.Fatal("the outbox never checked the fence")
	}
	close(stop)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the outbox did not stop")
	}
	states, err := db.Notifications(context.Background(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 0 || len(states) != 1 || states[0].Attempts != 0 || states[0].Sent || states[0].Failed {
		t.Fatalf("fenced outbox: %d sends, states %+v; want nothing sent or claimed", calls.Load(), states)
	}
}

// A drift check's webhook: the JSON as queued to kind http, and to Slack
// Atlantis's attachment (danger with drift, its four fields).
func TestDeliverDrift(t *testing.T) {
	var got map[string]any
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ = io.ReadAll(r.Body)
		json.Unmarshal(body, &got)
		if r.URL.Path == "/api/chat.postMessage" {
			io.WriteString(w, `{"ok":true}`)
		}
	}))
	defer srv.Close()
	s := &notify.Sender{Webhooks: webhooks(t, "webhooks:\n- {event: drift, kind: slack, channel: ops}\n- {event: drift, kind: http, url: '"+srv.URL+"/hook'}\n"),
		SlackToken: "xoxb-tok", SlackAPIURL: srv.URL + "/api/"}
	payload := []byte(`{"repository":"acme/infra","ref":"main","detection_id":"12","projects_with_drift":1,"total_projects":2,"projects":[]}`)
	if err := s.Deliver(context.Background(), 0, notify.KindSlack, payload); err != nil {
		t.Fatal(err)
	}
	att, _ := got["attachments"].([]any)
	if len(att) != 1 {
		t.Fatalf("slack message %v", got)
	}
	a := att[0].(map[string]any)
	fields, _ := json.Marshal(a["fields"])
	if a["color"] != "danger" || a["text"] != "Drift detected in acme/infra" ||
		string(fields) != `[{"short":true,"title":"Repository","value":"acme/infra"},{"short":true,"title":"Ref","value":"main"},{"short":true,"title":"Projects with drift","value":"1 / 2"},{"short":true,"title":"Detection ID","value":"12"}]` {
		t.Errorf("attachment %v %s", a, fields)
	}
	if err := s.Deliver(context.Background(), 1, notify.KindHTTP, payload); err != nil {
		t.Fatal(err)
	}
	if string(body) != string(payload) {
		t.Errorf("http body %s", body)
	}
}
