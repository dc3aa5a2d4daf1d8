package web

import (
	"context"
	"net/http"
	"strconv"
)

type changeMarkKey struct{}

// markChanges notes, as a request starts and before it reads anything,
// how many changes this node had published ("node:seq"). A page carries
// the mark (body[data-changes]); the change stream's first event carries
// the mark as of its subscription; when they differ, a change fell between
// the page's reads and the subscription and assets/live.js re-reads the
// page's sections. Without it such a change would be lost: the stream
// does not replay.
func (s *Server) markChanges(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Changes != nil {
			r = r.WithContext(context.WithValue(r.Context(), changeMarkKey{}, s.changeMark()))
		}
		next.ServeHTTP(w, r)
	})
}

// changeMark is this node's mark now.
func (s *Server) changeMark() string {
	return s.Node + ":" + strconv.FormatUint(s.Changes.Published(), 10)
}

// changeMarkOf is the mark noted when the request started ("" without a
// change service).
func changeMarkOf(ctx context.Context) string {
	m, _ := ctx.Value(changeMarkKey{}).(string)
	return m
}
