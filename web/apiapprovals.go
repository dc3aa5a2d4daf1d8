package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// approvalsResponse is a plan's approval state in the API.
type approvalsResponse struct {
	PlanID     int64  `json:"plan_id"`
	PlanSHA256 string `json:"plan_sha256"`
	// Required: --plan-approval requires an approval before apply.
	Required bool `json:"required"`
	// Approved: the newest decision approves this plan file and has not
	// expired.
	Approved bool             `json:"approved"`
	State    string           `json:"state"`
	Current  *atoll.Approval  `json:"current"`
	History  []atoll.Approval `json:"history"`
}

// handleAPIApprovals returns a plan's approval state and every decision.
func (s *Server) handleAPIApprovals(w http.ResponseWriter, r *http.Request) {
	id, err := atoll.ParseID(r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	v, err := s.approvalView(r.Context(), id, "")
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, approvalsResponse{PlanID: id, PlanSHA256: v.PlanSHA256, Required: v.Required,
		Approved: v.Current.Approves(v.PlanSHA256, v.Now), State: v.State(), Current: v.Current, History: nonNil(v.History)})
}

type decideRequest struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
}

// handleAPIDecide records the caller's decision: {"decision":"approve"|
// "reject","reason":"..."}.
func (s *Server) handleAPIDecide(w http.ResponseWriter, r *http.Request) {
	id, err := atoll.ParseID(r.PathValue("id"))
	if err != nil {
		s.error(w, r, err)
		return
	}
	var in decideRequest
	if err := readJSON(w, r, &in, jsonBody{Limit: 64 << 10, Like: `{"decision":"approve","reason":"checked the diff"}`}); err != nil {
		s.error(w, r, err)
		return
	}
	a, err := s.decide(r, id, in.Decision, in.Reason)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, a)
}
