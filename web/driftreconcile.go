package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// handleDriftReconcile queues a drifted project's reconcile (operators): a
// form with repo (owner/name), branch and project (a name or dir). The
// reconcile is a fresh plan of the branch's head that waits for an
// approval on its plan page; POST /drift/apply then applies it. It
// answers back on the drift page (a notice), or JSON. Without drift
// checks on this server: 404.
func (s *Server) handleDriftReconcile(w http.ResponseWriter, r *http.Request) {
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
		s.failed(w, r, back, atoll.Errorf(atoll.EINVALID, "A reconcile needs a repository (repo=owner/name), a branch and a project."))
		return
	}
	repo, err := s.DB.RepoByName(ctx, name)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	c := atoll.DriftCheck{Reconcile: true, Repo: *repo, Branch: branch, Projects: []string{project},
		User: atoll.UserFromContext(ctx).Name, Source: source(r)}
	req, err := s.Drift.CheckDrift(ctx, c)
	if err != nil {
		s.failed(w, r, back, err)
		return
	}
	msg := "Reconcile queued: a fresh plan of " + branch + "; approve it on its plan page, then apply."
	s.done(w, r, back, msg, nil, driftCheckResult{Message: msg, Request: req})
}
