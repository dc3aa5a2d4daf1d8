package web

import (
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
)

// markChanges notes, as a request starts and before it reads anything,
// how many changes this node had published ("node:seq"), in the request's
// context (atoll.ChangeMarkFromContext) and in the X-Atoll-Changes header.
// Pages (body[data-changes]) and their live sections and notices
// (data-changes) carry the mark they were read at; the change stream's
// hello event carries the mark as of its subscription. assets/live.js
// re-reads a section read before a change that concerns it arrived, and a
// page whose stream began past its mark: the stream does not replay, so
// such a change would otherwise be lost.
func (s *Server) markChanges(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.Changes != nil {
			mark := s.changeMark()
			w.Header().Set("X-Atoll-Changes", mark)
			r = r.WithContext(atoll.NewContextWithChangeMark(r.Context(), mark))
		}
		next.ServeHTTP(w, r)
	})
}

// changeMark is this node's mark now.
func (s *Server) changeMark() string {
	return s.Node + ":" + strconv.FormatUint(s.Changes.Published(), 10)
}
