package web

import "net/http"

// handleHealthz answers while the process is alive.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 while this node serves writes, and 503 while its
// database cannot be written (a full disk, an I/O error): a load balancer
// then stops sending webhooks here, and GitHub retries the ones refused.
// Until the HA lease exists every node that started is the active one.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if err := s.DB.WriteHealth(); err != nil {
		s.Logger.Warn("not ready: the database cannot be written", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "role": "active",
			"error": "The database cannot be written (is the disk full?)."})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "role": "active"})
}
