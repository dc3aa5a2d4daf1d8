package web

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/atollhq/atoll"
)

// handleJobWS streams a job's log over a websocket: first the stored lines
// from ?from=SEQ (default 1), then live lines as the job prints them, and
// closes normally once the job has ended and every line was sent. Each
// message is one atoll.LogLine as JSON.
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
	// Subscribe before reading the store, so no line falls between the two.
	live, cancel := s.Runner.Hub.Subscribe(job.ID)
	defer cancel()
	// The stream lasts as long as the job, past the server's read and write
	// timeouts. net/http clears the connection's deadlines when it is
	// hijacked; clearing them here does not depend on that.
	liftDeadlines(w, time.Time{})
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept has answered the client
	}
	defer conn.CloseNow()
	ctx := conn.CloseRead(r.Context()) // the client only listens
	st := &logStream{s: s, conn: conn, jobID: job.ID, next: from}
	if err := st.catchUp(ctx, 0); err != nil {
		return
	}
	if cur, err := s.DB.Job(ctx, job.ID); err != nil || cur.Final() {
		// Ended before we subscribed: everything is stored already.
		st.catchUp(ctx, 0)
		conn.Close(websocket.StatusNormalClosure, "job ended")
		return
	}
	for {
		select {
		case l, ok := <-live:
			if !ok {
				st.catchUp(ctx, 0) // the job ended; its log was flushed first
				conn.Close(websocket.StatusNormalClosure, "job ended")
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
			if err := st.send(ctx, l); err != nil {
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

type logStream struct {
	s     *Server
	conn  *websocket.Conn
	jobID int64
	next  int64 // seq of the next line to send
}

func (st *logStream) send(ctx context.Context, l atoll.LogLine) error {
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := wsjson.Write(wctx, st.conn, l); err != nil {
		return err
	}
	st.next = l.Seq + 1
	return nil
}

// catchUp sends stored lines from st.next; with until > 0 it waits (briefly:
// the log is flushed every 100 ms) until every line before until is stored.
func (st *logStream) catchUp(ctx context.Context, until int64) error {
	for deadline := time.Now().Add(5 * time.Second); ; {
		lines, err := st.s.DB.Logs(ctx, st.jobID, st.next, 0)
		if err != nil {
			return err
		}
		for _, l := range lines {
			if until > 0 && l.Seq >= until {
				break
			}
			if err := st.send(ctx, l); err != nil {
				return err
			}
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
