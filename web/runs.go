package web

import (
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// handleRunsPage shows every job ever, newest first, a page at a time,
// filtered; with q, the jobs whose logs match and their matching lines.
// A filter or search that cannot run is explained on the page (400).
func (s *Server) handleRunsPage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	f, typed, err := jobFilter(r.URL.Query())
	page := templates.RunsPage{Meta: s.pageMeta(ctx), Filter: typed}
	if err == nil {
		if typed.Q != "" {
			err = s.runsSearch(r, f, &page)
		} else {
			err = s.runsHistory(r, f, &page)
		}
	}
	if err != nil {
		if atoll.ErrorCode(err) != atoll.EINVALID {
			s.pageError(w, r, err)
			return
		}
		page.Error = atoll.ErrorMessage(err)
		s.renderPage(w, r, http.StatusBadRequest, templates.Runs(page))
		return
	}
	s.renderPage(w, r, http.StatusOK, templates.Runs(page))
}

func (s *Server) runsHistory(r *http.Request, f atoll.JobFilter, page *templates.RunsPage) error {
	h, err := s.DB.JobHistory(r.Context(), f)
	if err != nil {
		return err
	}
	page.Jobs = h.Jobs
	if h.Older && len(h.Jobs) > 0 {
		page.OlderURL = templates.RunsQuery(page.Filter, "before", strconv.FormatInt(h.Jobs[len(h.Jobs)-1].ID, 10))
	}
	if h.Newer && len(h.Jobs) > 0 {
		page.NewerURL = templates.RunsQuery(page.Filter, "after", strconv.FormatInt(h.Jobs[0].ID, 10))
	} else if h.Newer {
		page.NewerURL = templates.RunsQuery(page.Filter)
	}
	return nil
}

func (s *Server) runsSearch(r *http.Request, f atoll.JobFilter, page *templates.RunsPage) error {
	if f.After != 0 {
		return atoll.Errorf(atoll.EINVALID, "A search pages towards older jobs only: use before, not after.")
	}
	res, err := s.DB.SearchLogs(r.Context(), page.Filter.Q, f)
	if err != nil {
		return err
	}
	page.Search = &res
	if res.Older && len(res.Hits) > 0 {
		page.OlderURL = templates.RunsQuery(page.Filter, "before", strconv.FormatInt(res.Hits[len(res.Hits)-1].Job.ID, 10))
	}
	if f.Before != 0 {
		page.NewerURL = templates.RunsQuery(page.Filter) // back to the newest matches
	}
	return nil
}
