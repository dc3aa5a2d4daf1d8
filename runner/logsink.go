package runner

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// logSink numbers a job's output lines, publishes each at once and writes
// them to the store in batches (every flushEvery or batchSize lines), so a
// chatty job costs a few transactions a second rather than one per line.
type logSink struct {
	db     *store.DB
	hub    *Hub
	jobID  int64
	logger *slog.Logger

	// verbose keeps every line (Atoll's own included) for the comment of a
	// command given --verbose.
	verbose bool
	all     strings.Builder

	mu      sync.Mutex
	seq     int64
	pending []atoll.LogLine
	timer   *time.Timer
}

const (
	flushEvery = 100 * time.Millisecond
	batchSize  = 500
)

func newLogSink(db *store.DB, hub *Hub, jobID, lastSeq int64, logger *slog.Logger) *logSink {
	return &logSink{db: db, hub: hub, jobID: jobID, seq: lastSeq, logger: logger}
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
		s.timer = time.AfterFunc(flushEvery, func() { s.Flush(context.Background()) })
	}
	s.mu.Unlock()
	if full {
		s.Flush(context.Background())
	}
}

// Text is every line so far, when the sink is verbose.
func (s *logSink) Text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all.String()
}

// Flush writes pending lines to the store.
func (s *logSink) Flush(ctx context.Context) {
	s.mu.Lock()
	lines := s.pending
	s.pending = nil
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	s.mu.Unlock()
	if err := s.db.AppendLogs(ctx, lines); err != nil {
		s.logger.Error("store log lines", "job", s.jobID, "lines", len(lines), "err", err)
	}
}

// Close flushes and ends live subscriptions.
func (s *logSink) Close(ctx context.Context) {
	s.Flush(ctx)
	s.hub.End(s.jobID)
}
