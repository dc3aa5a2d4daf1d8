package web

import (
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// jobPageLines is how many of the last log lines the job page shows; the
// rest is in the download. live.js appends live lines after them.
const jobPageLines = 2000

// handleJobPage shows one job and the end of its log, read from the store
// in one page; with ?section=header only the header, for live.js to swap
// in place when the job changed.
func (s *Server) handleJobPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	job, err := s.job(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	d := templates.JobPage{Meta: s.pageMeta(ctx), Job: job}
	switch r.URL.Query().Get("section") {
	case "":
	case "header":
		s.renderPage(w, r, http.StatusOK, templates.JobHeader(d))
		return
	default:
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No section %q on this page.", r.URL.Query().Get("section")))
		return
	}
	if d.Lines, d.Earlier, err = s.DB.LogTail(ctx, job.ID, jobPageLines); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderPage(w, r, http.StatusOK, templates.Job(d))
}
