package atoll_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/atollhq/atoll"
)

func TestFence(t *testing.T) {
	var nilFence *atoll.Fence
	if err := nilFence.Check("x"); err != nil {
		t.Fatalf("a nil fence (single node) refused: %v", err)
	}
	ctx, cancel, err := nilFence.Context(context.Background(), "x")
	if err != nil || ctx != context.Background() {
		t.Fatalf("nil fence Context = %v %v", ctx, err)
	}
	cancel()

	now := time.Now()
	for _, tc := range []struct {
		name     string
		deadline time.Time
		fenced   bool
	}{
		{"ahead", now.Add(time.Second), false},
		{"passed", now.Add(-time.Nanosecond), true},
		{"exactly now", now, true},
		{"zero (standby)", time.Time{}, true},
		// The monotonic clock says ahead, the wall clock (which the other
		// node's lease is read against) says passed: fenced.
		{"wall clock passed", now.Add(time.Second).Round(0).Add(-2 * time.Second), true},
	} {
		f := &atoll.Fence{Deadline: func() time.Time { return tc.deadline }, Now: func() time.Time { return now }}
		err := f.Check("post comment")
		if got := errors.Is(err, atoll.ErrFenced); got != tc.fenced {
			t.Errorf("%s: Check = %v, fenced %v", tc.name, err, tc.fenced)
		}
		if tc.fenced && (atoll.ErrorCode(err) != atoll.EUNAVAILABLE || atoll.ErrorMessage(err) != atoll.ErrFenced.Message) {
			t.Errorf("%s: code %q message %q", tc.name, atoll.ErrorCode(err), atoll.ErrorMessage(err))
		}
		ctx, cancel, err := f.Context(context.Background(), "post comment")
		if tc.fenced != (err != nil) {
			t.Errorf("%s: Context err = %v", tc.name, err)
		}
		if err == nil {
			if d, ok := ctx.Deadline(); !ok || d.After(tc.deadline) {
				t.Errorf("%s: context deadline %v %v, want at most %v", tc.name, d, ok, tc.deadline)
			}
			cancel()
		}
	}
}
