package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// handleHealthz answers while the process is alive.
func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// handleReadyz answers 200 only on the active node while it serves writes:
// 503 on a standby, on an active that has not finished promoting or is
// fencing itself, and while the database cannot be written (a full disk, an
// I/O error), so a load balancer sends webhooks elsewhere meanwhile.
func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	st := s.nodeStatus(r.Context())
	if !st.Ready {
		body := map[string]string{"status": "unavailable", "role": st.Role, "active_node": st.ActiveNode}
		if err := s.DB.WriteHealth(); err != nil && st.Role == atoll.RoleActive {
			s.Logger.Warn("not ready: the database cannot be written", "err", err)
			body["error"] = "The database cannot be written (is the disk full?)."
		}
		writeJSON(w, http.StatusServiceUnavailable, body)
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "role": st.Role})
}
