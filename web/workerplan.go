package web

import (
	"net/http"
	"strconv"
)

// handleWorkerPlan is the plan file an apply applies, as bytes.
func (s *Server) handleWorkerPlan(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	plan, err := s.Workers.Plan(r.Context(), jobID, token)
	if err != nil {
		s.error(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Length", strconv.Itoa(len(plan)))
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	w.Write(plan)
}
