package web

import (
	"net/http"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// The worker protocol (docs/workers.md): `atoll worker` processes pull
// jobs of their pool over HTTP(S). These routes take no session or API
// token: a claim authenticates with the worker token's secret, every job
// call with the job token its claim was given, both as
// `Authorization: Bearer`, checked by s.Workers. The authentication
// middleware lets exactly these paths through, as it lets /events
// (workerPath); they go to the active node, and being no browser's
// forms they are out of the cross-origin form checks (guardMutations).

// Bounds of the worker routes' bodies.
const (
	maxWorkerHello = 4 << 10
	maxWorkerLogs  = 1 << 20
	// maxWorkerResult bounds a job's result: the executor's result
	// carries the plan file (the store bounds it too).
	maxWorkerResult = 256 << 20
	// maxUploadPackRequest bounds an upload-pack request (wants and
	// haves), after gunzip.
	maxUploadPackRequest = 64 << 20
)

// Long polls and transfers of the worker routes.
const (
	defaultClaimWait = 25 * time.Second
	maxClaimWait     = 30 * time.Second
	// workerTransfer is how long a result upload or a fetch may take,
	// past the server's read and write timeouts.
	workerTransfer = 30 * time.Minute
)

// workerRoutes registers the worker protocol's routes and the workers page.
func (s *Server) workerRoutes(mux *routeMux) {
	mux.HandleFunc("POST /api/v1/workers/claim", s.workerCall(s.handleWorkerClaim))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/heartbeat", s.jobCall(s.handleWorkerHeartbeat))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/logs", s.jobCall(s.handleWorkerLogs))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/applying", s.jobCall(s.handleWorkerApplying))
	mux.HandleFunc("GET /api/v1/workers/jobs/{id}/plan", s.jobCall(s.handleWorkerPlan))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/result", s.jobCall(s.handleWorkerResult))
	mux.HandleFunc("GET /api/v1/workers/jobs/{id}/git/info/refs", s.jobCall(s.handleWorkerInfoRefs))
	mux.HandleFunc("POST /api/v1/workers/jobs/{id}/git/git-upload-pack", s.jobCall(s.handleWorkerUploadPack))
	// The dashboard's page of the pools (worker tokens are made and
	// revoked on the admin page: adminRoutes).
	mux.HandleFunc("GET /workers", s.handleWorkersPage)
}

// workerJobCalls are the paths of a job's calls after /jobs/{id}/.
var workerJobCalls = map[string]bool{
	"heartbeat": true, "logs": true, "applying": true, "plan": true, "result": true,
	"git/info/refs": true, "git/git-upload-pack": true,
}

// workerPath reports the worker routes' paths, and no other: the routes
// workerRoutes registers, whatever their method, with any {id} segment
// (the handler refuses one that is not an id). Nothing else under
// /api/v1/workers/ is open.
func workerPath(p string) bool {
	if p == "/api/v1/workers/claim" {
		return true
	}
	rest, ok := strings.CutPrefix(p, "/api/v1/workers/jobs/")
	if !ok {
		return false
	}
	id, call, ok := strings.Cut(rest, "/")
	return ok && id != "" && id != "." && id != ".." && workerJobCalls[call]
}

// workerHandler is a worker route's handler, given the bearer token.
type workerHandler func(w http.ResponseWriter, r *http.Request, token string)

// workerCall answers 404 when this server has no worker pools, and 401
// for a request without a bearer token, before h (and the service) runs.
func (s *Server) workerCall(h workerHandler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.Workers == nil {
			s.error(w, r, errNoWorkerPools)
			return
		}
		token, ok := bearerToken(r.Header.Get("Authorization"))
		if !ok || token == "" || strings.ContainsAny(token, " \t") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="atoll workers"`)
			s.error(w, r, atoll.Errorf(atoll.EUNAUTHORIZED, "Authorization: Bearer TOKEN is required: the worker token for a claim, the job token for a job's calls."))
			return
		}
		h(w, r, token)
	}
}

// jobHandler is a job call's handler, given the job and its job token.
type jobHandler func(w http.ResponseWriter, r *http.Request, jobID int64, token string)

// jobCall is workerCall for a job's calls, which also need {id} to be a
// job id (400).
func (s *Server) jobCall(h jobHandler) http.HandlerFunc {
	return s.workerCall(func(w http.ResponseWriter, r *http.Request, token string) {
		id, err := atoll.ParseID(r.PathValue("id"))
		if err != nil {
			s.error(w, r, atoll.Errorf(atoll.EINVALID, "The job id must be a positive integer."))
			return
		}
		h(w, r, id, token)
	})
}

var errNoWorkerPools = atoll.Errorf(atoll.ENOTFOUND, "This server has no worker pools.")
