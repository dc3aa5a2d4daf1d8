package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// require lets a request through only when its signed-in user (put in the
// context by the authentication middleware) has at least role need:
// otherwise 401 (nobody signed in) or 403, and the handler does not run.
func (s *Server) require(need atoll.Role, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := atoll.UserFromContext(r.Context())
		switch {
		case u == nil:
			s.refuse(w, r, atoll.Errorf(atoll.EUNAUTHORIZED, "Sign in first."))
		case !u.Role.Allows(need):
			s.refuse(w, r, atoll.Errorf(atoll.EFORBIDDEN, "This needs the %s role; %s is %s.", need, u.Name, u.Role))
		default:
			h(w, r)
		}
	}
}

// refuse answers a refused request the way its client reads answers: JSON
// for the API and scripts, an HTML page for browsers.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if isHTMX(r) {
		s.failed(w, r, "/", err) // a message in place, not a page inside the page
		return
	}
	if wantsHTML(r) {
		s.pageError(w, r, err)
		return
	}
	s.error(w, r, err)
}
