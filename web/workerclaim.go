package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/atollhq/atoll"
)

// handleWorkerClaim is a worker's long poll for a job of its pool: body
// atoll.WorkerHello, ?wait=SECONDS (default 25, at most 30, 0 to ask
// without waiting). 200 with the atoll.WorkerAssignment, 204 when no job
// came within the wait.
func (s *Server) handleWorkerClaim(w http.ResponseWriter, r *http.Request, secret string) {
	wait, err := claimWait(r)
	if err != nil {
		s.error(w, r, err)
		return
	}
	var hello atoll.WorkerHello
	if err := readJSON(w, r, &hello, jsonBody{Limit: maxWorkerHello,
		Like: `{"worker":"worker-1","pool":"default","version":"v1.2.3","protocol":1}`}); err != nil {
		s.error(w, r, err)
		return
	}
	// The poll waits on purpose, past the server's write timeout.
	liftDeadlines(w, time.Now().Add(wait+time.Minute))
	a, err := s.Workers.Claim(r.Context(), secret, hello, wait)
	if err != nil {
		if r.Context().Err() != nil {
			return // the worker left (a stop, a scale-down): nothing to answer
		}
		s.error(w, r, err)
		return
	}
	if a == nil {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, a)
}

// claimWait is the claim's ?wait=, in whole seconds.
func claimWait(r *http.Request) (time.Duration, error) {
	q := r.URL.Query()
	if len(q["wait"]) == 0 {
		return defaultClaimWait, nil
	}
	n, err := strconv.Atoi(q.Get("wait"))
	if len(q["wait"]) > 1 || err != nil || n < 0 {
		return 0, atoll.Errorf(atoll.EINVALID, "wait is a number of seconds, 0 to %d, given once.", int(maxClaimWait/time.Second))
	}
	return min(time.Duration(n)*time.Second, maxClaimWait), nil
}
