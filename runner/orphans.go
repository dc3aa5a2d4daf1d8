package runner

import (
	"context"

	"github.com/atollhq/atoll"
)

// A request must never be left running with no worker on it: nothing would
// tell its pull request anything, and every later request of that pull
// request waits behind it. At a start, RequeueRunning puts back what an
// earlier process (or the previous active node) left running. While this
// process runs, a write whose outcome is unknown can leave one too: with
// replication, a claim or a finish told "not replicated" is committed on
// this disk, and the next successful sync uploads it. After such a failure
// the next worker sweeps: every request running under this node that no
// worker holds goes back to the queue (and is resumed like any requeued
// request: finished jobs are only reported, queued ones run).

// claim claims the next request and registers it as held, under claimMu
// (shared with other claims, exclusive of a sweep) so that a sweep never
// sees it claimed and not yet held.
func (s *scheduler) claim() (*atoll.Request, error) {
	s.claimMu.RLock()
	defer s.claimMu.RUnlock()
	req, err := s.db.ClaimRequest(context.Background(), s.node)
	if err != nil {
		// The claim may be committed all the same.
		s.orphans.Store(true)
		return nil, err
	}
	if req != nil {
		s.liveMu.Lock()
		if s.live == nil {
			s.live = map[int64]bool{}
		}
		s.live[req.ID] = true
		s.liveMu.Unlock()
	}
	return req, nil
}

// release lets request id go once its worker has recorded how it ended;
// unknown says that record failed, so the request may still be running.
func (s *scheduler) release(id int64, unknown bool) {
	s.liveMu.Lock()
	delete(s.live, id)
	s.liveMu.Unlock()
	// After it left live: a sweep that started before would skip it.
	if unknown {
		s.orphans.Store(true)
	}
}

// requeueOrphans puts back in the queue the requests running under this
// node that no worker holds. If it fails it is tried again on the next
// worker's turn.
func (s *scheduler) requeueOrphans() {
	// No claim is in flight while the sweep runs: every claimed request
	// is in live.
	s.claimMu.Lock()
	defer s.claimMu.Unlock()
	if !s.orphans.Swap(false) {
		return // another worker swept
	}
	s.liveMu.Lock()
	live := make([]int64, 0, len(s.live))
	for id := range s.live {
		live = append(live, id)
	}
	s.liveMu.Unlock()
	n, err := s.db.RequeueOrphans(context.Background(), s.node, live)
	if err != nil {
		s.orphans.Store(true)
		s.logger.Error("requeue requests left running without a worker", "err", err)
		return
	}
	if n > 0 {
		s.logger.Warn("requeued requests left running without a worker (a claim or finish whose outcome was unknown)", "requests", n)
		s.Wake()
	}
}
