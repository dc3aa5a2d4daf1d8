package web

import (
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/store"
)

// handleJobs lists jobs, newest first.
func (s *Server) handleJobs(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := atoll.JobFilter{Repo: q.Get("repo"), State: q.Get("state"), Kind: q.Get("kind")}
	if p := q.Get("pull"); p != "" {
		n, err := strconv.Atoi(p)
		if err != nil || n <= 0 {
			s.error(w, r, atoll.Errorf(atoll.EINVALID, "Invalid pull number %q.", p))
			return
		}
		f.Pull = n
	}
	jobs, err := s.DB.Jobs(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(jobs))
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
	id, err := store.ParseID(r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return s.DB.Job(r.Context(), id)
}
