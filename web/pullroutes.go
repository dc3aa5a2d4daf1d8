package web

import (
	"github.com/atollhq/atoll"
)

// pullRoutes registers the pull request page with its Plan and Apply
// buttons and comment box, and the plan page with its API.
func (s *Server) pullRoutes(mux *routeMux) {
	mux.HandleFunc("GET /repos/{owner}/{name}/pulls/{number}", s.handlePullPage)
	mux.HandleFunc("POST /repos/{owner}/{name}/pulls/{number}/commands", s.require(atoll.RoleOperator, s.handlePullCommand))
	mux.HandleFunc("POST /repos/{owner}/{name}/pulls/{number}/comment", s.require(atoll.RoleOperator, s.handleCommentForm))
	mux.HandleFunc("GET /plans/{id}", s.handlePlanPage)
	mux.HandleFunc("GET /api/v1/plans/{id}", s.handleAPIPlanView)
}
