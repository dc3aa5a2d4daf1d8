package runner

import (
	"sync"

	"github.com/atollhq/atoll"
)

// Hub fans out log lines to in-process subscribers (the websocket and the
// dashboard) as they are produced, before they reach the database.
type Hub struct {
	mu   sync.Mutex
	subs map[int64]map[chan atoll.LogLine]struct{}
}

// NewHub returns an empty hub.
func NewHub() *Hub { return &Hub{subs: map[int64]map[chan atoll.LogLine]struct{}{}} }

// Subscribe returns a channel of jobID's lines from now on; it is closed when
// the job ends or cancel is called. A subscriber that falls behind by more
// than the buffer loses lines and should re-read from the store by seq.
func (h *Hub) Subscribe(jobID int64) (<-chan atoll.LogLine, func()) {
	ch := make(chan atoll.LogLine, 1024)
	h.mu.Lock()
	if h.subs[jobID] == nil {
		h.subs[jobID] = map[chan atoll.LogLine]struct{}{}
	}
	h.subs[jobID][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if _, ok := h.subs[jobID][ch]; ok {
			delete(h.subs[jobID], ch)
			close(ch)
		}
	}
}

// Publish sends a line to jobID's subscribers without blocking.
func (h *Hub) Publish(l atoll.LogLine) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[l.JobID] {
		select {
		case ch <- l:
		default:
		}
	}
}

// End closes jobID's subscriptions: the job has no more lines.
func (h *Hub) End(jobID int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[jobID] {
		close(ch)
	}
	delete(h.subs, jobID)
}
