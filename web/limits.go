package web

import (
	"context"
	"net"
	"sync"
	"time"
)

// byteBudget bounds the bytes of webhook bodies held in memory at once: a
// body reserves its declared length (or the 25 MB limit when it declares
// none) before it is read.
type byteBudget struct {
	mu      sync.Mutex
	free    int64
	changed chan struct{} // closed when bytes are released
}

func newByteBudget(n int64) *byteBudget { return &byteBudget{free: n, changed: make(chan struct{})} }

// acquire reserves n bytes, waiting until ctx ends; it reports success.
func (b *byteBudget) acquire(ctx context.Context, n int64) bool {
	for {
		b.mu.Lock()
		if b.free >= n {
			b.free -= n
			b.mu.Unlock()
			return true
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

func (b *byteBudget) release(n int64) {
	b.mu.Lock()
	b.free += n
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// warnLimiter lets one warning per remote host through per window, and
// counts the ones it suppressed, so that a flood of bad webhooks cannot
// flood the log.
type warnLimiter struct {
	window time.Duration
	mu     sync.Mutex
	hosts  map[string]*warnState
}

type warnState struct {
	last       time.Time
	suppressed int
}

// maxWarnHosts bounds the limiter's memory; older entries are dropped first.
const maxWarnHosts = 4096

// allow reports whether to log a warning for remote (host:port) now, and
// how many warnings for its host were suppressed since the last one.
func (l *warnLimiter) allow(remote string, now time.Time) (bool, int) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hosts == nil {
		l.hosts = map[string]*warnState{}
	}
	st, ok := l.hosts[host]
	if ok && now.Sub(st.last) < l.window {
		st.suppressed++
		return false, 0
	}
	if !ok {
		if len(l.hosts) >= maxWarnHosts {
			l.prune(now)
		}
		st = &warnState{}
		l.hosts[host] = st
	}
	suppressed := st.suppressed
	st.last, st.suppressed = now, 0
	return true, suppressed
}

// prune drops hosts whose window has passed (their suppressed counts are
// lost), or every host if none has.
func (l *warnLimiter) prune(now time.Time) {
	for h, st := range l.hosts {
		if now.Sub(st.last) >= l.window {
			delete(l.hosts, h)
		}
	}
	if len(l.hosts) >= maxWarnHosts {
		clear(l.hosts)
	}
}
