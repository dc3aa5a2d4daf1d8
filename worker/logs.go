package worker

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/atollhq/atoll"
)

// Log batching: lines go to the control plane in the background, every
// flushEvery or as soon as batchLines are waiting, in batches the server
// accepts (at most batchLines lines and batchBytes of JSON).
const (
	flushEvery = 100 * time.Millisecond
	batchLines = 500
	batchBytes = 512 << 10
	// maxLine caps one line, so that any line fits in a batch.
	maxLine = 64 << 10
)

// logShipper numbers a job's lines from 1 and sends them until each is
// acknowledged. A batch the server did not acknowledge is sent again:
// the server skips the lines it stored already (by Seq).
type logShipper struct {
	send func(context.Context, []atoll.WorkerLogLine) error

	mu      sync.Mutex
	changed *sync.Cond
	pending []atoll.WorkerLogLine // written, not yet acknowledged
	seq     int64                 // the last line written
	acked   int64                 // the last line acknowledged
	err     error                 // why shipping stopped, if it did
	kick    chan struct{}
	done    chan struct{}
}

// newLogShipper starts shipping with send until ctx ends.
func newLogShipper(ctx context.Context, send func(context.Context, []atoll.WorkerLogLine) error) *logShipper {
	l := &logShipper{send: send, kick: make(chan struct{}, 1), done: make(chan struct{})}
	l.changed = sync.NewCond(&l.mu)
	go l.loop(ctx)
	return l
}

// Write numbers and queues one line.
func (l *logShipper) Write(stream, text string) {
	if len(text) > maxLine {
		text = text[:maxLine] + " [line truncated]"
	}
	l.mu.Lock()
	l.seq++
	l.pending = append(l.pending, atoll.WorkerLogLine{Seq: l.seq, Stream: stream, Time: time.Now().UTC(), Text: text})
	full := len(l.pending) >= batchLines
	l.mu.Unlock()
	if full {
		l.wake()
	}
}

func (l *logShipper) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// Flush returns once every line written so far is acknowledged, or with
// the error that stopped shipping.
func (l *logShipper) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	want := l.seq
	if l.acked < want && l.err == nil {
		l.wake()
	}
	for l.acked < want && l.err == nil {
		l.changed.Wait()
	}
	if l.acked >= want {
		return nil
	}
	return l.err
}

// loop sends batches until ctx ends or a batch fails for good.
func (l *logShipper) loop(ctx context.Context) {
	defer close(l.done)
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			l.stop(context.Cause(ctx))
			return
		case <-t.C:
		case <-l.kick:
		}
		if err := l.drain(ctx); err != nil {
			l.stop(err)
			return
		}
	}
}

// drain sends every pending line, batch by batch.
func (l *logShipper) drain(ctx context.Context) error {
	for {
		batch := l.batch()
		if len(batch) == 0 {
			return nil
		}
		if err := l.send(ctx, batch); err != nil {
			return err
		}
		l.ack(batch[len(batch)-1].Seq)
	}
}

// batch is the oldest pending lines, as many as a batch holds.
func (l *logShipper) batch() []atoll.WorkerLogLine {
	l.mu.Lock()
	n := min(len(l.pending), batchLines)
	batch := append([]atoll.WorkerLogLine(nil), l.pending[:n]...)
	l.mu.Unlock()
	// JSON escaping makes the size unknowable before encoding (an ANSI
	// escape byte takes six): halve until it fits.
	for len(batch) > 1 {
		b, err := json.Marshal(batch)
		if err == nil && len(b) <= batchBytes-64 {
			break
		}
		batch = batch[:len(batch)/2]
	}
	return batch
}

// ack drops the lines up to seq.
func (l *logShipper) ack(seq int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	k := 0
	for k < len(l.pending) && l.pending[k].Seq <= seq {
		k++
	}
	l.pending = l.pending[k:]
	l.acked = max(l.acked, seq)
	l.changed.Broadcast()
}

func (l *logShipper) stop(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		l.err = err
	}
	if l.err == nil {
		l.err = context.Canceled
	}
	l.changed.Broadcast()
}
