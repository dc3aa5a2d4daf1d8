package runner

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

// queue is a scheduler's store: queued requests, claimed in order.
type queue struct {
	mu     sync.Mutex
	queued []*atoll.Request
}

func (q *queue) ClaimRequest(context.Context, string) (*atoll.Request, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.queued) == 0 {
		return nil, nil
	}
	req := q.queued[0]
	q.queued = q.queued[1:]
	return req, nil
}

func (q *queue) RequeueOrphans(context.Context, string, []int64) (int, error) { return 0, nil }

// The scheduler needs only the store's claim and requeue and a function
// that works a request: its workers run every queued request, at most
// parallelism at once, and Stop waits for them.
func TestSchedulerRunsQueuedRequests(t *testing.T) {
	q := &queue{}
	for id := int64(1); id <= 6; id++ {
		q.queued = append(q.queued, &atoll.Request{ID: id})
	}
	var mu sync.Mutex
	ran, now, most := map[int64]bool{}, 0, 0
	s := &scheduler{db: q, node: "n", parallelism: 2, logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		run: func(req *atoll.Request) {
			mu.Lock()
			now++
			most = max(most, now)
			mu.Unlock()
			time.Sleep(5 * time.Millisecond)
			mu.Lock()
			now--
			ran[req.ID] = true
			mu.Unlock()
		}}
	s.init()
	s.start()
	s.Wake()
	deadline := time.Now().Add(10 * time.Second)
	for {
		mu.Lock()
		n := len(ran)
		mu.Unlock()
		if n == 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	s.Stop()
	if len(ran) != 6 {
		t.Errorf("ran %d of 6 requests", len(ran))
	}
	if most > 2 {
		t.Errorf("%d requests ran at once, parallelism is 2", most)
	}
	if s.jobCtx.Err() == nil {
		t.Errorf("the jobs' context outlived Stop")
	}
}
