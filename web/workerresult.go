package web

import (
	"net/http"
	"time"

	"github.com/atollhq/atoll"
)

// handleWorkerResult stores a job's result, body atoll.WorkerResult (at
// most maxWorkerResult: it carries the plan file): 204 once committed.
func (s *Server) handleWorkerResult(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	// Nobody but the job's worker makes this server read a large body.
	if err := s.Workers.Holds(r.Context(), jobID, token); err != nil {
		s.error(w, r, err)
		return
	}
	// A large plan takes a while to upload and store.
	liftDeadlines(w, time.Now().Add(workerTransfer))
	var res atoll.WorkerResult
	if err := readJSON(w, r, &res, jsonBody{Limit: maxWorkerResult,
		Like: `{"result":{...},"plan_sha256":"...","error":null}`}); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.Workers.Result(r.Context(), jobID, token, res); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
