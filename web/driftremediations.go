package web

import (
	"encoding/json"
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/drift"
)

// handleDriftRemediations is GET /api/drift/remediate: the repository's
// remediation runs, newest first (limit: 10 by default, at most 100).
func (s *Server) handleDriftRemediations(w http.ResponseWriter, r *http.Request) {
	repo, e := s.driftReadScope(r, drift.MsgRemediationDisabled)
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	q := r.URL.Query()
	limit, e := drift.ParseLimit(q.Get("limit"), q.Has("limit"))
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	runs, err := s.DB.DriftRemediations(r.Context(), driftKey(repo), limit)
	if err != nil {
		s.driftError(w, r, err)
		return
	}
	var results []drift.RemediationResult
	for _, run := range runs {
		var res drift.RemediationResult
		if err := json.Unmarshal(run.Result, &res); err != nil {
			s.driftError(w, r, err)
			return
		}
		results = append(results, res)
	}
	s.driftOK(w, r, http.StatusOK, drift.NewRemediationList(q.Get("repository"), results))
}

// handleDriftRemediation is GET /api/drift/remediate/{id}: one run of the
// repository (another repository's is not found, 404).
func (s *Server) handleDriftRemediation(w http.ResponseWriter, r *http.Request) {
	repo, e := s.driftReadScope(r, drift.MsgRemediationDisabled)
	if e != nil {
		s.driftFail(w, r, e)
		return
	}
	id := r.PathValue("id")
	if id == "" {
		s.driftFail(w, r, drift.Invalid(drift.MsgMissingParameter, "id", "id parameter is required"))
		return
	}
	run, err := s.DB.DriftRemediation(r.Context(), id)
	if atoll.ErrorCode(err) == atoll.ENOTFOUND || err == nil && run.Repo != driftKey(repo) {
		s.driftFail(w, r, drift.ResultNotFound(id))
		return
	} else if err != nil {
		s.driftError(w, r, err)
		return
	}
	var res drift.RemediationResult
	if err := json.Unmarshal(run.Result, &res); err != nil {
		s.driftError(w, r, err)
		return
	}
	s.driftOK(w, r, http.StatusOK, res)
}
