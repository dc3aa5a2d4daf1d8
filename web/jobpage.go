package web

import (
	"context"
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// jobPageLines is how many of the last log lines the job page shows; the
// rest is in the download. live.js appends live lines after them.
const jobPageLines = 2000

// jobPageContext is how many lines before ?line= the page starts.
const jobPageContext = 100

// handleJobPage shows one job and the end of its log, read from the store
// in one page, or with ?line=SEQ the lines around SEQ (a search hit links to
// /jobs/{id}#L<seq>; live.js asks for ?line= when that line is not on the
// page); with ?section=header only the header, for live.js to swap in place
// when the job changed.
func (s *Server) handleJobPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	job, err := s.job(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	d := templates.JobPage{Meta: s.pageMeta(ctx), Job: job, Dispatch: s.jobDispatch(ctx, job.ID)}
	switch r.URL.Query().Get("section") {
	case "":
	case "header":
		s.renderPage(w, r, http.StatusOK, templates.JobHeader(d))
		return
	default:
		s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "No section %q on this page.", r.URL.Query().Get("section")))
		return
	}
	if v := r.URL.Query().Get("line"); v != "" {
		line, err := strconv.ParseInt(v, 10, 64)
		if err != nil || line < 1 {
			s.pageError(w, r, atoll.Errorf(atoll.EINVALID, "line must be a positive line number."))
			return
		}
		// The line, with some context before it.
		from := max(1, line-jobPageContext)
		if d.Lines, d.Earlier, d.Later, err = s.DB.LogWindow(ctx, job.ID, from, jobPageLines); err != nil {
			s.pageError(w, r, err)
			return
		}
	} else if d.Lines, d.Earlier, err = s.DB.LogTail(ctx, job.ID, jobPageLines); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.renderPage(w, r, http.StatusOK, templates.Job(d))
}

// jobDispatch is job id's dispatch to a worker pool, which the job page
// names; nil for a job the node runs itself (ENOTFOUND). A failure to
// read it only leaves it out, as the freeze banner's does.
func (s *Server) jobDispatch(ctx context.Context, id int64) *atoll.Dispatch {
	d, err := s.DB.Dispatch(ctx, id)
	if err != nil {
		if atoll.ErrorCode(err) != atoll.ENOTFOUND {
			s.Logger.Warn("read job dispatch", "job", id, "err", err)
		}
		return nil
	}
	return d
}
