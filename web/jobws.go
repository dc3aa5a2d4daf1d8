package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gorilla/websocket"

	"github.com/atollhq/atoll"
)

// The job log websocket's timing: a write that takes longer than wsWrite
// ends the stream (the viewer reconnects from its last line); the server
// pings every wsPing and gives up on a client silent for wsPong.
const (
	wsWrite = 10 * time.Second
	wsPing  = 30 * time.Second
	wsPong  = wsPing + 15*time.Second
	// logPage is how many stored lines are read at once.
	logPage = 1000
	// maxBatch bounds the lines of one message with ?batch=1.
	maxBatch = 500
)

var upgrader = websocket.Upgrader{
	ReadBufferSize:  1024,
	WriteBufferSize: 16 << 10,
	// CheckOrigin is gorilla's default: the Origin, if any, must be this
	// host, so another site's page cannot read logs with a user's cookies.
}

// handleJobWS streams a job's log over a websocket: first the stored lines
// from ?from=SEQ (default 1), then live lines as the job prints them, and
// closes normally once the job has ended and every line was sent. Each
// message is one atoll.LogLine as JSON; with ?batch=1 it is a JSON array of
// the lines ready at once (at most maxBatch), which costs a viewer that
// falls behind one message per batch instead of one per line. A viewer
// that lost its connection reconnects with from = the last seq it received
// + 1 and gets exactly the lines it lacks. The stream lasts only as long
// as its user may read it: once the user is disabled or deleted, or the
// session or token it was opened with ends, it is closed with code 1008
// (policy violation; see watchAccess).
func (s *Server) handleJobWS(w http.ResponseWriter, r *http.Request) {
	job, err := s.job(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	from := int64(1)
	if v := r.URL.Query().Get("from"); v != "" {
		if from, err = strconv.ParseInt(v, 10, 64); err != nil || from < 1 {
			s.error(w, r, atoll.Errorf(atoll.EINVALID, "from must be a positive line number."))
			return
		}
	}
	if s.Logs == nil {
		s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "Live logs are not available on this server."))
		return
	}
	release := s.holdStream(w, r)
	if release == nil {
		return
	}
	defer release()
	// Subscribe before reading the store, so no line falls between the two.
	live, cancel := s.Logs.Subscribe(job.ID)
	defer cancel()
	// The stream lasts as long as the job, past the server's read and write
	// timeouts: each write sets its own deadline instead. net/http clears
	// the connection's deadlines when it is hijacked; clearing them here
	// does not depend on that.
	liftDeadlines(w, time.Time{})
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered the client
	}
	defer conn.Close()
	access, stopWatch := s.watchAccess(r, atoll.RoleViewer)
	defer stopWatch()
	ctx, stop := context.WithCancel(access)
	defer stop()
	go readUntilClosed(conn, stop)

	st := &logStream{s: s, conn: conn, jobID: job.ID, next: from, batch: r.URL.Query().Get("batch") == "1"}
	// However the stream ends (between lines, or in a read of the store),
	// a user who lost access is told why before the connection closes.
	defer func() {
		if accessEnded(access) && !st.closed {
			msg := websocket.FormatCloseMessage(websocket.ClosePolicyViolation, errAccessEnded.Error())
			conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(wsWrite))
		}
	}()
	if err := st.catchUp(ctx, 0); err != nil {
		return
	}
	if cur, err := s.DB.Job(ctx, job.ID); err != nil || cur.Final() {
		// Ended before we subscribed: everything is stored already.
		if st.catchUp(ctx, 0) == nil {
			st.close("job ended")
		}
		return
	}
	ping := time.NewTicker(wsPing)
	defer ping.Stop()
	for {
		select {
		case l, ok := <-live:
			if !ok {
				// The job ended; its log was flushed first.
				if st.catchUp(ctx, 0) == nil {
					st.close("job ended")
				}
				return
			}
			if l.Seq < st.next {
				continue // already sent from the store
			}
			// Lines published before we subscribed, or dropped because we
			// fell behind, are read back from the store.
			if l.Seq > st.next {
				if err := st.catchUp(ctx, l.Seq); err != nil {
					return
				}
			}
			if err := st.send(l); err != nil {
				return
			}
			// Take what else is ready into the same message.
			if err := st.drain(ctx, live); err != nil {
				return
			}
			if err := st.flush(); err != nil {
				return
			}
		case <-ping.C:
			if err := conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWrite)); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// readUntilClosed reads (and drops) what the client sends, answering its
// pings and hearing its pongs, and calls stop once the connection ends or
// the client stays silent past wsPong.
func readUntilClosed(conn *websocket.Conn, stop func()) {
	defer stop()
	conn.SetReadLimit(4 << 10)
	conn.SetReadDeadline(time.Now().Add(wsPong))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(wsPong)) })
	for {
		if _, _, err := conn.NextReader(); err != nil {
			return
		}
		conn.SetReadDeadline(time.Now().Add(wsPong))
	}
}

type logStream struct {
	s     *Server
	conn  *websocket.Conn
	jobID int64
	next  int64 // seq of the next line to send
	// batch sends arrays of lines: pending holds those not written yet.
	batch   bool
	pending []atoll.LogLine
	// closed is set once a close frame was sent.
	closed bool
}

// send sends l, or adds it to the pending batch (written when full, or by
// flush).
func (st *logStream) send(l atoll.LogLine) error {
	st.next = l.Seq + 1
	if !st.batch {
		return st.write(l)
	}
	st.pending = append(st.pending, l)
	if len(st.pending) >= maxBatch {
		return st.flush()
	}
	return nil
}

// flush writes the pending batch, if any.
func (st *logStream) flush() error {
	if len(st.pending) == 0 {
		return nil
	}
	err := st.write(st.pending)
	st.pending = st.pending[:0]
	return err
}

func (st *logStream) write(v any) error {
	st.conn.SetWriteDeadline(time.Now().Add(wsWrite))
	return st.conn.WriteJSON(v)
}

// drain sends the live lines already waiting, without blocking; a batch
// stops at maxBatch lines so that a busy job still sends regularly.
func (st *logStream) drain(ctx context.Context, live <-chan atoll.LogLine) error {
	for len(st.pending) > 0 && len(st.pending) < maxBatch {
		select {
		case l, ok := <-live:
			if !ok || l.Seq < st.next {
				if !ok {
					return nil // the caller sees the channel closed next
				}
				continue
			}
			if l.Seq > st.next {
				if err := st.catchUp(ctx, l.Seq); err != nil {
					return err
				}
			}
			if err := st.send(l); err != nil {
				return err
			}
		default:
			return nil
		}
	}
	return nil
}

// close ends the stream normally: the client stops reconnecting.
func (st *logStream) close(reason string) {
	st.closed = true
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, reason)
	st.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(wsWrite))
}

// catchUp sends stored lines from st.next, a page at a time; with until > 0
// it waits (briefly: the log is flushed every 100 ms) until every line
// before until is stored.
func (st *logStream) catchUp(ctx context.Context, until int64) error {
	for deadline := time.Now().Add(5 * time.Second); ; {
		lines, err := st.s.DB.Logs(ctx, st.jobID, st.next, logPage)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if until > 0 && l.Seq >= until {
				return nil
			}
			if err := st.send(l); err != nil {
				return err
			}
		}
		if len(lines) == logPage {
			continue // more stored lines
		}
		if err := st.flush(); err != nil {
			return err
		}
		if until == 0 || st.next >= until || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
