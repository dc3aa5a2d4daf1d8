package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// pullRoutes registers the pull request page with its Plan and Apply
// buttons, and the plan page with its API.
func (s *Server) pullRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /repos/{owner}/{name}/pulls/{number}", s.handlePullPage)
	mux.HandleFunc("POST /repos/{owner}/{name}/pulls/{number}/commands", s.require(atoll.RoleOperator, s.handlePullCommand))
	mux.HandleFunc("GET /plans/{id}", s.handlePlanPage)
	mux.HandleFunc("GET /api/v1/plans/{id}", s.handleAPIPlanView)
}
