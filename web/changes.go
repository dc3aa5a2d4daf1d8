package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/atollhq/atoll"
)

// sseHeartbeat is how often an idle change stream sends a comment, so that
// proxies keep it open and a dead client is noticed.
const sseHeartbeat = 15 * time.Second

// handleChanges streams committed changes as Server-Sent Events: first a
// `hello` event with this node's change mark (`{"mark":"node:seq"}`), then
// one event per atoll.Change, as JSON (`data: {"topic":"job",...,"seq":N}`),
// and a comment every sseHeartbeat. A Change with Topic "" means the page
// must re-read everything: the stream fell behind. Changes are not kept: a
// client whose page or last change is older than the hello's mark re-reads
// what it shows (assets/live.js does). The stream lasts only as long as
// its user may read it: once the user is disabled or deleted, or the
// session or token it was opened with ends, it sends an `ended` event and
// closes (see watchAccess). Changes of users (TopicUser) are passed on
// without saying whose.
func (s *Server) handleChanges(w http.ResponseWriter, r *http.Request) {
	if s.Changes == nil {
		s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "Live updates are not available on this server."))
		return
	}
	release := s.holdStream(w, r)
	if release == nil {
		return
	}
	defer release()
	ctx, stopWatch := s.watchAccess(r, atoll.RoleViewer)
	defer stopWatch()
	changes, cancel := s.Changes.Subscribe()
	defer cancel()
	rc := http.NewResponseController(w)
	// The stream outlives the server's timeouts; each write sets its own
	// deadline instead, so a client that stops reading is dropped.
	liftDeadlines(w, time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)
	write := func(b []byte) bool {
		rc.SetWriteDeadline(time.Now().Add(wsWrite))
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// retry: how long the browser waits before reconnecting. The hello
	// event's mark, read after subscribing, tells the page whether it
	// missed a change before the stream began (see markChanges).
	hello, _ := json.Marshal(map[string]string{"mark": s.changeMark(), "node": s.Node})
	if !write(fmt.Appendf(nil, "retry: 2000\n: connected\nevent: hello\ndata: %s\n\n", hello)) {
		return
	}
	heartbeat := time.NewTicker(sseHeartbeat)
	defer heartbeat.Stop()
	for {
		select {
		case c, ok := <-changes:
			if !ok {
				return
			}
			c.UserID = 0 // whose access changed is the admins' business
			b, _ := json.Marshal(c)
			if !write(append(append([]byte("data: "), b...), '\n', '\n')) {
				return
			}
		case <-heartbeat.C:
			if !write([]byte(": heartbeat\n\n")) {
				return
			}
		case <-s.streamsEnd:
			return
		case <-ctx.Done():
			if accessEnded(ctx) {
				ended, _ := json.Marshal(map[string]string{"reason": errAccessEnded.Error()})
				write(fmt.Appendf(nil, "event: ended\ndata: %s\n\n", ended))
			}
			return
		}
	}
}
