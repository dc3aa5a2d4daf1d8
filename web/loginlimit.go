package web

import (
	"sync"
	"time"
)

// Failed sign-ins allowed from one address per window; past them every
// attempt from it is refused, the right password too, until the window
// has passed since its first failure.
const (
	loginFailures = 10
	loginWindow   = 5 * time.Minute
	// maxLoginAddrs bounds the limiter's memory under a flood of addresses.
	maxLoginAddrs = 4096
)

// loginLimiter slows password guessing: it counts failed sign-ins per
// client address. Refused attempts check no password and write nothing, so
// a flood costs the database nothing either.
type loginLimiter struct {
	mu    sync.Mutex
	addrs map[string]*loginFailuresOf
	clock func() time.Time // nil: the server's clock (tests move it)
}

type loginFailuresOf struct {
	first time.Time // of the window's first failure
	count int
}

// allow reports whether addr may try to sign in at now, and if not, how
// long until it may.
func (l *loginLimiter) allow(addr string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.addrs[addr]
	if f == nil || now.Sub(f.first) >= loginWindow {
		return true, 0
	}
	if f.count < loginFailures {
		return true, 0
	}
	return false, f.first.Add(loginWindow).Sub(now)
}

// failed counts a failed sign-in from addr.
func (l *loginLimiter) failed(addr string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.addrs == nil {
		l.addrs = map[string]*loginFailuresOf{}
	}
	f := l.addrs[addr]
	if f == nil || now.Sub(f.first) >= loginWindow {
		if f == nil && len(l.addrs) >= maxLoginAddrs {
			l.prune(now)
		}
		f = &loginFailuresOf{first: now}
		l.addrs[addr] = f
	}
	f.count++
}

// succeeded forgets addr's failures.
func (l *loginLimiter) succeeded(addr string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.addrs, addr)
}

// prune drops windows that have passed and, if that is not enough, all:
// forgetting counts only ever lets someone try again sooner.
func (l *loginLimiter) prune(now time.Time) {
	for a, f := range l.addrs {
		if now.Sub(f.first) >= loginWindow {
			delete(l.addrs, a)
		}
	}
	if len(l.addrs) >= maxLoginAddrs {
		clear(l.addrs)
	}
}
