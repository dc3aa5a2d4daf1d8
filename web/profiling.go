package web

import (
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/atollhq/atoll"
)

// profilingRoutes serves net/http/pprof under /debug/pprof/ when
// Profiling is set (Atlantis's --enable-profiling-api), to admins only:
// profiles show memory, goroutines and command lines. A CPU profile or
// trace runs for as long as asked, past the write timeout.
func (s *Server) profilingRoutes(mux *routeMux) {
	if !s.Profiling {
		return
	}
	admin := func(h http.HandlerFunc) http.HandlerFunc {
		return s.require(atoll.RoleAdmin, func(w http.ResponseWriter, r *http.Request) {
			liftDeadlines(w, time.Time{})
			h(w, r)
		})
	}
	mux.HandleFunc("GET /debug/pprof/", admin(pprof.Index))
	mux.HandleFunc("GET /debug/pprof/cmdline", admin(pprof.Cmdline))
	mux.HandleFunc("GET /debug/pprof/profile", admin(pprof.Profile))
	mux.HandleFunc("GET /debug/pprof/symbol", admin(pprof.Symbol))
	mux.HandleFunc("GET /debug/pprof/trace", admin(pprof.Trace))
}
