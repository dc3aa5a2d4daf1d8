package web

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/atollhq/atoll"
)

// apiJobsLimit is GET /api/v1/jobs's page size unless limit= says.
const apiJobsLimit = 200

// handleJobs lists jobs, newest first, filtered as the runs page is (see
// jobFilter). The body stays a plain array; the next pages are in a Link
// header (rel="next": older, rel="prev": newer), with before= or after=
// cursors (job ids).
func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	if err := listParams(r.URL.Query(), jobParams); err != nil {
		s.error(w, r, err)
		return
	}
	f, _, err := jobFilter(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	if f.Limit == 0 {
		f.Limit = apiJobsLimit
	}
	h, err := s.DB.JobHistory(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var links []string
	if h.Older && len(h.Jobs) > 0 {
		links = append(links, `<`+cursorURL(r, "before", h.Jobs[len(h.Jobs)-1].ID)+`>; rel="next"`)
	}
	if h.Newer && len(h.Jobs) > 0 {
		links = append(links, `<`+cursorURL(r, "after", h.Jobs[0].ID)+`>; rel="prev"`)
	}
	for _, l := range links {
		w.Header().Add("Link", l)
	}
	writeJSON(w, http.StatusOK, nonNil(h.Jobs))
}

// cursorURL is the request's path and query with one cursor set.
func cursorURL(r *http.Request, key string, id int64) string {
	q := r.URL.Query()
	q.Del("before")
	q.Del("after")
	q.Set(key, strconv.FormatInt(id, 10))
	return (&url.URL{Path: r.URL.Path, RawQuery: q.Encode()}).String()
}

// handleJob shows one job with its plan summary.
func (s *Server) handleJob(w http.ResponseWriter, r *http.Request) {
	job, err := s.job(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, job)
}

func (s *Server) job(r *http.Request) (*atoll.Job, error) {
	id, err := atoll.ParseID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return s.DB.Job(r.Context(), id)
}
