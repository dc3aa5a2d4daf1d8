package runner

import (
	"context"
	"testing"
)

// Only a plan is interrupted, only one that came before the cancel comment,
// and the context says which cancel request did it; a server stop is not a
// cancel.
func TestRunningCancelPlan(t *testing.T) {
	var s running
	stop, stopAll := context.WithCancel(context.Background())
	ctx, cancel := context.WithCancelCause(stop)
	defer cancel(nil)
	s.add(7, 10, cancel)
	if s.cancelPlan(7, 11) {
		t.Fatal("canceled a request that is not a plan")
	}
	s.markPlan(7, 10)
	if s.cancelPlan(8, 11) || s.cancelPlan(7, 9) {
		t.Fatal("canceled another pull request's plan, or one that came after the comment")
	}
	if ctx.Err() != nil {
		t.Fatal("context canceled too early")
	}
	if !s.cancelPlan(7, 11) {
		t.Fatal("running plan not canceled")
	}
	if id, ok := canceledCause(ctx); !ok || id != 11 {
		t.Fatalf("canceledCause = %d, %v; want 11", id, ok)
	}
	s.remove(7, 10)
	if s.cancelPlan(7, 12) {
		t.Fatal("canceled a request that finished")
	}

	other, cancel2 := context.WithCancelCause(stop)
	defer cancel2(nil)
	stopAll()
	if _, ok := canceledCause(other); ok || other.Err() == nil {
		t.Fatal("a server stop reads as a cancel comment")
	}
}
