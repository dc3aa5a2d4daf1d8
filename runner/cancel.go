package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// canceledBy is the cause of a request context a cancel comment canceled:
// the cancel request's id.
type canceledBy int64

func (c canceledBy) Error() string { return fmt.Sprintf("canceled by cancel request %d", int64(c)) }

// canceledCause reports whether ctx was canceled by a cancel comment, and
// by which request.
func canceledCause(ctx context.Context) (int64, bool) {
	var c canceledBy
	if errors.As(context.Cause(ctx), &c) {
		return int64(c), true
	}
	return 0, false
}

// running tracks the request each pull request is working on, with the
// cancel function of its context. Only a plan is ever canceled: an apply
// stopped halfway leaves the infrastructure in between.
type running struct {
	mu sync.Mutex
	m  map[int64]*runningRequest // by pull request id
}

type runningRequest struct {
	id     int64
	plan   bool
	cancel context.CancelCauseFunc
}

func (s *running) add(pullID, reqID int64, cancel context.CancelCauseFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[int64]*runningRequest{}
	}
	s.m[pullID] = &runningRequest{id: reqID, cancel: cancel}
}

func (s *running) remove(pullID, reqID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[pullID]; r != nil && r.id == reqID {
		delete(s.m, pullID)
	}
}

// markPlan records that request reqID plans, so cancel may interrupt it.
func (s *running) markPlan(pullID, reqID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[pullID]; r != nil && r.id == reqID {
		r.plan = true
	}
}

// planDone records that request reqID's plans are stored and told: a
// cancel has nothing left to interrupt (what remains, the plans' JSON, is
// not worth saying "interrupted" for).
func (s *running) planDone(pullID, reqID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.m[pullID]; r != nil && r.id == reqID {
		r.plan = false
	}
}

// cancelPlan interrupts the pull request's running request if it plans
// and came before request cancelID, and reports whether it did.
func (s *running) cancelPlan(pullID, cancelID int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[pullID]
	if r == nil || !r.plan || r.id > cancelID { // never a request that came after the comment
		return false
	}
	r.cancel(canceledBy(cancelID))
	return true
}
