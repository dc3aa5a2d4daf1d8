package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// handleLocks lists every lock.
func (s *Server) handleLocks(w http.ResponseWriter, r *http.Request) {
	if err := listParams(r.URL.Query(), lockParams); err != nil {
		s.error(w, r, err)
		return
	}
	locks, err := s.DB.Locks(r.Context())
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(locks))
}

// handleUnlock deletes one lock and discards the holder's plan for it,
// then tells the pull request who unlocked it.
func (s *Server) handleUnlock(w http.ResponseWriter, r *http.Request) {
	id, err := atoll.ParseID(r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	locks, err := s.DB.ReleaseLock(r.Context(), id, actor(r), source(r), "via API")
	if err != nil {
		s.error(w, r, err)
		return
	}
	s.tellUnlocked(r.Context(), locks, actor(r), "the API") // logged if it fails; the lock is released
	writeJSON(w, http.StatusOK, locks[0])
}

// actor names who made a call, for the audit log and as the user of the
// jobs it queues: always the signed-in user (the session's, or the API
// token's owner), never a name from the request.
func actor(r *http.Request) string {
	if u := atoll.UserFromContext(r.Context()); u != nil {
		return u.Name
	}
	return "anonymous" // unreachable behind s.require
}

// nonNil makes empty lists encode as [] rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
