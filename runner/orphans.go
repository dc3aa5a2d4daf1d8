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
func (r *Runner) claim() (*atoll.Request, error) {
	r.claimMu.RLock()
	defer r.claimMu.RUnlock()
	req, err := r.DB.ClaimRequest(context.Background(), r.Node)
	if err != nil {
		// The claim may be committed all the same.
		r.orphans.Store(true)
		return nil, err
	}
	if req != nil {
		r.liveMu.Lock()
		if r.live == nil {
			r.live = map[int64]bool{}
		}
		r.live[req.ID] = true
		r.liveMu.Unlock()
	}
	return req, nil
}

// release lets request id go once its worker has recorded how it ended;
// unknown says that record failed, so the request may still be running.
func (r *Runner) release(id int64, unknown bool) {
	r.liveMu.Lock()
	delete(r.live, id)
	r.liveMu.Unlock()
	// After it left live: a sweep that started before would skip it.
	if unknown {
		r.orphans.Store(true)
	}
}

// requeueOrphans puts back in the queue the requests running under this
// node that no worker holds. If it fails it is tried again on the next
// worker's turn.
func (r *Runner) requeueOrphans() {
	// No claim is in flight while the sweep runs: every claimed request
	// is in live.
	r.claimMu.Lock()
	defer r.claimMu.Unlock()
	if !r.orphans.Swap(false) {
		return // another worker swept
	}
	r.liveMu.Lock()
	live := make([]int64, 0, len(r.live))
	for id := range r.live {
		live = append(live, id)
	}
	r.liveMu.Unlock()
	n, err := r.DB.RequeueOrphans(context.Background(), r.Node, live)
	if err != nil {
		r.orphans.Store(true)
		r.Logger.Error("requeue requests left running without a worker", "err", err)
		return
	}
	if n > 0 {
		r.Logger.Warn("requeued requests left running without a worker (a claim or finish whose outcome was unknown)", "requests", n)
		r.Wake()
	}
}
