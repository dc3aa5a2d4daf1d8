package web

import (
	"net/http"
	"sync"

	"github.com/atollhq/atoll"
)

// defaultStreamsPerUser bounds the live streams (change streams and job
// log websockets) one signed-in user holds at once: far more than a user
// with many tabs needs (a browser opens at most six connections per host
// over HTTP/1.1), few enough that a runaway script cannot hold the
// server's sockets and goroutines.
const defaultStreamsPerUser = 32

// streamLimit counts the live streams each user holds.
type streamLimit struct {
	mu   sync.Mutex
	held map[string]int
}

// acquire takes one of user's max streams; it reports success.
func (l *streamLimit) acquire(user string, max int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[user] >= max {
		return false
	}
	if l.held == nil {
		l.held = map[string]int{}
	}
	l.held[user]++
	return true
}

func (l *streamLimit) release(user string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[user]--; l.held[user] <= 0 {
		delete(l.held, user)
	}
}

// holdStream takes a live stream for the request's user, or answers 429
// and returns nil. The caller runs the returned release when the stream
// ends.
func (s *Server) holdStream(w http.ResponseWriter, r *http.Request) (release func()) {
	who := source(r)
	if u := atoll.UserFromContext(r.Context()); u != nil {
		who = u.Name
	}
	max := orDefault(s.StreamsPerUser, defaultStreamsPerUser)
	if !s.streams.acquire(who, max) {
		s.error(w, r, atoll.Errorf(atoll.ETOOMANY, "%s already holds %d live streams (change streams and job logs): close some pages or clients first.", who, max))
		return nil
	}
	return func() { s.streams.release(who) }
}
