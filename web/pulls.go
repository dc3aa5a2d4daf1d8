package web

import (
	"net/http"
	"strconv"

	"github.com/atollhq/atoll"
)

type pullResponse struct {
	*atoll.Pull
	Projects []atoll.Project `json:"projects"`
}

type pullDetailResponse struct {
	pullResponse
	Plans []*atoll.Plan `json:"plans"`
	Jobs  []*atoll.Job  `json:"jobs"`
	Locks []*atoll.Lock `json:"locks"`
}

// handlePulls lists pull requests with their projects.
func (s *Server) handlePulls(w http.ResponseWriter, r *http.Request) {
	if err := listParams(r.URL.Query(), pullParams); err != nil {
		s.error(w, r, err)
		return
	}
	f, err := pullFilter(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	pulls, err := s.DB.Pulls(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	out := make([]pullResponse, 0, len(pulls))
	for _, p := range pulls {
		projects, err := s.DB.PullProjects(r.Context(), p.ID)
		if err != nil {
			s.error(w, r, err)
			return
		}
		out = append(out, pullResponse{Pull: p, Projects: nonNil(projects)})
	}
	writeJSON(w, http.StatusOK, out)
}

// handlePull shows one pull request with its projects, plans, jobs and locks.
func (s *Server) handlePull(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	number, err := strconv.Atoi(r.PathValue("number"))
	if err != nil || number <= 0 { // a drift target's negative number is no pull request
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "Invalid pull request number."))
		return
	}
	pull, err := s.DB.PullByNumber(ctx, r.PathValue("owner")+"/"+r.PathValue("name"), number)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var out pullDetailResponse
	out.Pull = pull
	if out.Projects, err = s.DB.PullProjects(ctx, pull.ID); err == nil {
		if out.Plans, err = s.DB.PendingPlans(ctx, pull.ID); err == nil {
			if out.Jobs, err = s.DB.PullJobs(ctx, pull.ID); err == nil {
				out.Locks, err = s.DB.PullLocks(ctx, pull.ID)
			}
		}
	}
	if err != nil {
		s.error(w, r, err)
		return
	}
	out.Projects, out.Plans, out.Jobs, out.Locks = nonNil(out.Projects), nonNil(out.Plans), nonNil(out.Jobs), nonNil(out.Locks)
	writeJSON(w, http.StatusOK, out)
}
