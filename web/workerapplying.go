package web

import "net/http"

// handleWorkerApplying asks whether an apply may start: 204 yes, else the
// service's refusal (409 once the claim is not held).
func (s *Server) handleWorkerApplying(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	if err := s.Workers.Applying(r.Context(), jobID, token); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
