package web

import "net/http"

// handleDriftApply applies a project's approved reconcile plan
// (operators): a form with repo (owner/name), branch and project (a name
// or dir). The runner applies the project's pending plan on the branch's
// drift target under the project's lock, and refuses it without an
// approval. It answers back on the drift page (a notice), or JSON.
// Without drift checks on this server: 404.
func (s *Server) handleDriftApply(w http.ResponseWriter, r *http.Request) {
	c, back, ok := s.driftForm(w, r, true, "A reconcile's apply needs a repository (repo=owner/name), a branch and a project.")
	if !ok {
		return
	}
	c.Apply = true
	s.queueDrift(w, r, back, c, "Apply of "+c.Projects[0]+"'s reconcile plan of "+c.Repo.FullName()+" "+c.Branch+" queued.")
}
