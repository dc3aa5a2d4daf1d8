package atoll

import (
	"context"
	"fmt"
	"time"
)

// ErrFenced is wrapped by every outward action (a VCS write, a
// notification) refused because this node's lease deadline has passed: the
// other node may already be the active one, and two nodes talking to a pull
// request at once contradict each other. It is coded EUNAVAILABLE so that
// nobody retries it.
var ErrFenced = &Error{Code: EUNAVAILABLE, Message: "This node no longer holds the lease: it sends nothing to the VCS host or to notification webhooks."}

// Fence says whether this node may still act outward. The active node of a
// pair may until its lease deadline (the one its replica uploads stop at);
// a standby, a node still promoting and a fenced node may not (their
// deadline is the zero time). A nil *Fence is a single node, never fenced.
type Fence struct {
	// Deadline is the instant until which this node may act outward.
	Deadline func() time.Time
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Check returns nil while the deadline is ahead, else an error wrapping
// ErrFenced that names op. It reads the clock each time: a process frozen
// (SIGSTOP, a paused VM) past its deadline finds out when it resumes,
// before it sends anything.
func (f *Fence) Check(op string) error {
	_, _, err := f.left(op)
	return err
}

// Context is ctx limited to the deadline, so that a request still in
// flight when the deadline passes is abandoned; or an error wrapping
// ErrFenced when the deadline has passed already. A nil Fence returns ctx.
func (f *Fence) Context(ctx context.Context, op string) (context.Context, context.CancelFunc, error) {
	if f == nil {
		return ctx, func() {}, nil
	}
	now, left, err := f.left(op)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithDeadline(ctx, now.Add(left))
	return ctx, cancel, nil
}

// left is the time from now until the deadline, or an error wrapping
// ErrFenced.
func (f *Fence) left(op string) (now time.Time, left time.Duration, err error) {
	now = time.Now()
	if f == nil {
		return now, 0, nil
	}
	var deadline time.Time
	if f.Deadline != nil {
		deadline = f.Deadline()
	}
	if f.Now != nil {
		now = f.Now()
	}
	// Fenced when either the monotonic or the wall clock says the deadline
	// passed: the lease's expiry is wall-clock time shared with the other
	// node, and a monotonic clock does not count a suspended VM.
	if !now.Before(deadline) || !now.Round(0).Before(deadline.Round(0)) {
		if deadline.IsZero() {
			return now, 0, fmt.Errorf("%s: not the active node: %w", op, ErrFenced)
		}
		return now, 0, fmt.Errorf("%s: lease deadline %s passed (now %s): %w", op,
			deadline.Round(0).Format(time.RFC3339Nano), now.Round(0).Format(time.RFC3339Nano), ErrFenced)
	}
	return now, min(deadline.Sub(now), deadline.Round(0).Sub(now.Round(0))), nil
}
