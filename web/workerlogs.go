package web

import (
	"net/http"

	"github.com/atollhq/atoll"
)

// workerLogs is the body of a job's log batch.
type workerLogs struct {
	Lines []atoll.WorkerLogLine `json:"lines"`
}

// handleWorkerLogs stores a batch of a job's lines, body
// {"lines":[atoll.WorkerLogLine]} (at most 1 MiB): 204 once committed.
func (s *Server) handleWorkerLogs(w http.ResponseWriter, r *http.Request, jobID int64, token string) {
	var in workerLogs
	if err := readJSON(w, r, &in, jsonBody{Limit: maxWorkerLogs,
		Like: `{"lines":[{"seq":1,"stream":"stdout","time":"2026-01-02T03:04:05Z","text":"..."}]}`}); err != nil {
		s.error(w, r, err)
		return
	}
	if err := s.Workers.Logs(r.Context(), jobID, token, in.Lines); err != nil {
		s.error(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
