package web

import (
	"github.com/atollhq/atoll"
)

// historyRoutes registers the locks page and its unlock action, the runs
// history and the log search.
func (s *Server) historyRoutes(mux *routeMux) {
	mux.HandleFunc("GET /locks", s.handleLocksPage)
	mux.HandleFunc("POST /locks/unlock", s.require(atoll.RoleOperator, s.handleUnlockLocks))
	mux.HandleFunc("GET /runs", s.handleRunsPage)
	mux.HandleFunc("GET /api/v1/search", s.handleSearch)
}
