package web

import (
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// handleWorkersPage shows the worker pools (any signed-in user): the
// workers seen, the jobs they hold, the jobs queued per pool and the
// worker tokens, read-only (admins revoke them on /admin); with
// ?section=workers the content alone, for live.js to swap in place when a
// job changed. Without worker pools the page says so.
func (s *Server) handleWorkersPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	d := templates.WorkersPage{Meta: s.pageMeta(ctx)}
	if s.WorkerAdmin != nil {
		o, err := s.WorkerAdmin.Workers(ctx)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		d.Overview = o
	}
	switch section := r.URL.Query().Get("section"); section {
	case "":
		s.renderPage(w, r, http.StatusOK, templates.Workers(d))
	case templates.SectionWorkers:
		s.renderPage(w, r, http.StatusOK, templates.WorkersSection(d))
	default:
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No section %q on this page.", section))
	}
}
