package runner

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
)

// logSink numbers a job's output lines, publishes each at once and writes
// them to the store in batches (every flushEvery or batchSize lines), so a
// chatty job costs a few transactions a second rather than one per line.
//
// Flushes are serialised and a failed one keeps its lines, so the stored
// log is always a prefix of what was written, in order; Close returns only
// once every line is stored (or the runner is stopping), which is what lets
// a job be recorded finished after its whole log.
type logSink struct {
	r      *Runner
	hub    *Hub
	jobID  int64
	logger *slog.Logger

	// verbose keeps every line (Atoll's own included) for the comment of a
	// command given --verbose.
	verbose bool
	all     strings.Builder

	flushMu sync.Mutex // held while lines are being stored

	mu      sync.Mutex // guards what follows
	seq     int64
	pending []atoll.LogLine
	timer   *time.Timer
}

const (
	flushEvery      = 100 * time.Millisecond
	retryFlushEvery = time.Second // after a failed flush
	batchSize       = 500
)

// newLogSink starts a job's sink after the lines already stored for it (a
// job that ran before, such as an interrupted one, keeps its old lines).
func (r *Runner) newLogSink(j *atoll.Job, logger *slog.Logger) (*logSink, error) {
	var last int64
	err := retry(r, "read last log line", func() (err error) {
		last, err = r.DB.LastLogSeq(context.Background(), j.ID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &logSink{r: r, hub: r.Hub, jobID: j.ID, seq: last, logger: logger, verbose: j.Spec.Verbose}, nil
}

// Write records one line.
func (s *logSink) Write(stream, text string) {
	s.mu.Lock()
	s.seq++
	l := atoll.LogLine{JobID: s.jobID, Seq: s.seq, Stream: stream, Time: time.Now().UTC(), Text: text}
	s.pending = append(s.pending, l)
	if s.verbose {
		s.all.WriteString(text)
		s.all.WriteByte('\n')
	}
	s.hub.Publish(l)
	full := len(s.pending) >= batchSize
	if !full && s.timer == nil {
		s.timer = time.AfterFunc(flushEvery, func() { s.flush(false) })
	}
	s.mu.Unlock()
	if full {
		s.flush(false)
	}
}

// Text is every line so far, when the sink is verbose.
func (s *logSink) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all.String()
}

// Flush stores every line written so far, retrying while the store fails;
// it returns an error only when the runner stops before they are stored.
func (s *logSink) Flush() error { return s.flush(true) }

// flush stores the pending lines. A background flush (wait false) tries
// once and leaves failed lines pending for the next flush; a waiting one
// retries until they are stored or the runner stops.
func (s *logSink) flush(wait bool) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.mu.Lock()
	lines := s.pending
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	if len(lines) == 0 {
		return nil
	}
	appendLines := func(ctx context.Context) error { return s.r.DB.AppendLogs(ctx, lines) }
	var err error
	if wait {
		err = s.r.commit("store log lines", appendLines)
	} else if err = appendLines(context.Background()); err != nil {
		s.logger.Warn("store log lines: kept for the next flush", "job", s.jobID, "lines", len(lines), "err", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		// Lines written meanwhile stay pending; only the stored ones go.
		s.pending = append(s.pending[:0:0], s.pending[len(lines):]...)
	} else if !wait && s.timer == nil {
		s.timer = time.AfterFunc(retryFlushEvery, func() { s.flush(false) })
	}
	return err
}

// Close stores every remaining line and ends live subscriptions.
func (s *logSink) Close() error {
	err := s.Flush()
	s.hub.End(s.jobID)
	return err
}
