package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/web"
)

// sseStream is a client of GET /api/v1/changes.
type sseStream struct {
	res   *http.Response
	rd    *bufio.Reader
	first string // the first event: a comment and the hello event
}

func openChanges(t *testing.T, base string) *sseStream {
	t.Helper()
	client := &http.Client{Timeout: 20 * time.Second} // a change that never comes fails the test
	res, err := liveGet(client, base+"/api/v1/changes")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET /api/v1/changes: %d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	st := &sseStream{res: res, rd: bufio.NewReader(res.Body)}
	// The first event is a comment: the subscription is in place.
	if st.first = st.next(t); !strings.Contains(st.first, ": connected") {
		t.Fatalf("first event %q", st.first)
	}
	return st
}

// next reads one event (up to the blank line).
func (st *sseStream) next(t *testing.T) string {
	t.Helper()
	var ev strings.Builder
	for {
		line, err := st.rd.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the stream after %q: %v", ev.String(), err)
		}
		if line == "\n" {
			return ev.String()
		}
		ev.WriteString(line)
	}
}

// change reads events until a data event and decodes it.
func (st *sseStream) change(t *testing.T) atoll.Change {
	t.Helper()
	for {
		ev := st.next(t)
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			continue // a comment
		}
		var c atoll.Change
		if err := json.Unmarshal([]byte(data), &c); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		return c
	}
}

// A page reading the change stream hears of each commit, long after the
// server's write timeout; Shutdown ends the stream rather than waiting
// for it.
func TestChangesStream(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) {
		s.DB.(*store.DB).Changes = changes
		s.Changes = changes
		s.ReadTimeout, s.WriteTimeout = 300*time.Millisecond, 300*time.Millisecond
	})
	st := openChanges(t, s.URL)
	time.Sleep(time.Second) // three times the write timeout
	job := runningJob(t, s.DB)
	var got []atoll.Change
	for len(got) < 10 {
		c := st.change(t)
		got = append(got, c)
		if c.Topic == atoll.TopicJob && c.JobID == job && c.Repo == "acme/infra" && c.Pull == 1 {
			break
		}
	}
	if last := got[len(got)-1]; last.JobID != job {
		t.Fatalf("changes %+v; want job %d's", got, job)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown with a change stream open: %v", err)
	}
	if _, err := st.rd.ReadString('\n'); err == nil {
		t.Fatal("the stream goes on after Shutdown")
	}
	if n := changes.Subscribers(); n != 0 {
		t.Fatalf("%d subscriptions left after the stream ended", n)
	}
}

// A commit on another path (the runner's) reaches every open stream.
func TestChangesStreamFanOut(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) { s.DB.(*store.DB).Changes = changes; s.Changes = changes })
	var streams []*sseStream
	for range 5 {
		streams = append(streams, openChanges(t, s.URL))
	}
	f := runningJob(t, s.DB)
	if err := s.DB.Update(context.Background(), func(tx *store.Tx) error {
		return tx.FinishJob(f, atoll.JobSucceeded, "", nil)
	}); err != nil {
		t.Fatal(err)
	}
	for _, st := range streams {
		for c := st.change(t); c.JobID != f || c.Topic != atoll.TopicJob; c = st.change(t) {
		}
	}
}

func TestChangesStreamUnavailable(t *testing.T) {
	s := startLiveServer(t, nil)
	res, err := liveGet(http.DefaultClient, s.URL+"/api/v1/changes")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("without a ChangeService: %d; want 503", res.StatusCode)
	}
}

// A page carries the change mark noted before it was read; the stream's
// hello event carries the mark as of its subscription: equal while nothing
// changed in between, different once something did.
func TestChangeMarks(t *testing.T) {
	changes := inmem.NewChanges()
	s := startLiveServer(t, func(s *web.Server) {
		s.Changes = changes
		s.Node = "node-a"
	})
	client := &http.Client{Timeout: 20 * time.Second}
	res, err := liveGet(client, s.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	m := regexp.MustCompile(`<body data-changes="([^"]*)"`).FindSubmatch(page)
	if m == nil || string(m[1]) != "node-a:0" {
		t.Fatalf("the page's mark: %q; want node-a:0", m)
	}
	hello := func() string {
		t.Helper()
		ev := openChanges(t, s.URL).first
		_, data, ok := strings.Cut(ev, "event: hello\ndata: ")
		var h struct{ Mark, Node string }
		if !ok || json.Unmarshal([]byte(strings.TrimSpace(data)), &h) != nil || h.Node != "node-a" {
			t.Fatalf("the stream's first event: %q; want a hello from node-a", ev)
		}
		return h.Mark
	}
	if got := hello(); got != "node-a:0" {
		t.Fatalf("hello mark %q with nothing changed; want the page's, node-a:0", got)
	}
	changes.Publish(atoll.Change{Topic: atoll.TopicLock})
	if got := hello(); got != "node-a:1" {
		t.Fatalf("hello mark %q after a change; want node-a:1", got)
	}
}
