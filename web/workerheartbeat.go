package web

import "net/http"

// handleWorkerHeartbeat extends a claim's lease: 200 atoll.WorkerLease.
func (s *Server) handleWorkerHeartbeat(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	lease, err := s.Workers.Heartbeat(r.Context(), jobID, token)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, lease)
}
