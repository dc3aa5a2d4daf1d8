package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// handleDriftApply applies a project's approved reconcile plan
// (operators): a form with repo (owner/name), branch and project (a name
// or dir). The runner applies the project's pending plan on the branch's
// drift target under the project's lock, and refuses it without an
// approval. It answers back on the drift page (a notice), or JSON.
// Without drift checks on this server: 404.
func (s *Server) handleDriftApply(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if err := readForm(w, r, maxForm); err != nil {
		s.failed(w, r, "/drift", err)
		return
	}
	back := "/drift"
	if b := r.PostFormValue("back"); b != "" {
		back = safeBack(b)
	}
	if s.Drift == nil {
		s.failed(w, r, back, atoll.Errorf(atoll.ENOTFOUND, "This server runs no drift checks."))
		return
	}
	name, branch, project := r.PostFormValue("repo"), r.PostFormValue("branch"), r.PostFormValue("project")
	if name == "" || branch == "" || project == "" {
		s.failed(w, r, back, atoll.Errorf(atoll.EINVALID, "A reconcile's apply needs a repository (repo=owner/name), a branch and a project."))
		return
	}
	repo, err := s.DB.RepoByName(ctx, name)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	c := atoll.DriftCheck{Apply: true, Repo: *repo, Branch: branch, Projects: []string{project},
		User: atoll.UserFromContext(ctx).Name, Source: source(r)}
	req, err := s.Drift.CheckDrift(ctx, c)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	msg := "Apply of " + project + "'s reconcile plan of " + repo.FullName() + " " + branch + " queued."
	s.done(w, r, back, msg, nil, driftCheckResult{Message: msg, Request: req})
}
