package azuredevops

import (
	"testing"
	"time"
)

// A reason is logged again after ignoreEvery, with the count of the
// deliveries ignored without a line in between; reasons are independent.
func TestIgnoreLogOncePerReasonPerHour(t *testing.T) {
	var l ignoreLog
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []struct {
		reason string
		at     time.Duration
		ok     bool
		n      int
	}{
		{"a", 0, true, 0},
		{"a", time.Minute, false, 0},
		{"b", time.Minute, true, 0},
		{"a", ignoreEvery - time.Second, false, 0},
		{"a", ignoreEvery, true, 2},
		{"a", ignoreEvery + time.Second, false, 0},
		{"b", 3 * ignoreEvery, true, 0},
	}
	for i, s := range steps {
		ok, n := l.allow(s.reason, t0.Add(s.at))
		if ok != s.ok || n != s.n {
			t.Errorf("step %d (%s at %v): got (%v, %d), want (%v, %d)", i, s.reason, s.at, ok, n, s.ok, s.n)
		}
	}
}
