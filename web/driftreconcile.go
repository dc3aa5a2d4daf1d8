package web

import "net/http"

// handleDriftReconcile queues a drifted project's reconcile (operators): a
// form with repo (owner/name), branch and project (a name or dir). The
// reconcile is a fresh plan of the branch's head that waits for an
// approval on its plan page; POST /drift/apply then applies it. It
// answers back on the drift page (a notice), or JSON. Without drift
// checks on this server: 404.
func (s *Server) handleDriftReconcile(w http.ResponseWriter, r *http.Request) {
	c, back, ok := s.driftForm(w, r, true, "A reconcile needs a repository (repo=owner/name), a branch and a project.")
	if !ok {
		return
	}
	c.Reconcile = true
	s.queueDrift(w, r, back, c, "Reconcile queued: a fresh plan of "+c.Branch+"; approve it on its plan page, then apply.")
}
