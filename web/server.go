// Package web is Atoll's HTTP side: VCS webhooks, the JSON API, the HTML
// pages and metrics. Handlers live one per file.
package web

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// Server serves HTTP.
type Server struct {
	// DB is the database's services, all in one value (store.DB is one):
	// one field rather than one per service, since every handler reaches
	// the same store. Web never imports the store package.
	DB atoll.Store
	// Commands queues what webhooks, the dashboard and the API ask for
	// (nil: this server runs no commands). Web writes no command comment
	// itself: it hands structured commands over.
	Commands atoll.CommandService
	// Drift runs drift checks for the drift page and Atlantis's
	// /api/drift routes (nil: none).
	Drift atoll.Drifter
	// Unlocks tells pull requests of the locks released from the
	// dashboard or the API (nil: they are not told).
	Unlocks atoll.UnlockReporter
	// Logs is the live output of running jobs (nil: no live logs; the
	// stored lines are still shown).
	Logs atoll.LogStream
	// Approvals is --plan-approval (nil: no plan needs an approval).
	Approvals atoll.ApprovalPolicy
	Providers map[string]vcs.Provider
	// Hosts are the VCS hosts whose webhooks are told apart, configured or
	// not, in the order they are asked (the first that recognises a
	// webhook's headers owns it). Configured providers missing from it are
	// asked after them, in the order of their kinds.
	Hosts     []vcs.Recognizer
	Logger    *slog.Logger
	Version   string
	Node      string
	PublicURL string
	// Profiling serves net/http/pprof to admins (--enable-profiling-api).
	Profiling bool
	// DriftDetection serves Atlantis's /api/drift routes
	// (--enable-drift-detection; off, they answer 503); DriftRemediation
	// also accepts action apply on /api/drift/remediate
	// (--enable-drift-remediation).
	DriftDetection, DriftRemediation bool
	// Allowlist is --repo-allowlist, which the drift API's read routes
	// check (nil: every repository).
	Allowlist interface {
		Allows(host, owner, name string) bool
	}
	// TLS, if set, makes Listen serve https (--ssl-cert-file).
	TLS *tls.Config
	// APISecret, if set, is an admin API token named "api-secret"
	// (X-Atlantis-Token or Authorization: Bearer), kept for Atlantis's API
	// clients; API tokens made on the admin page are the better way.
	APISecret string
	Demo      bool
	// ApprovalTTL is how long a plan approval lasts (--approval-ttl; zero
	// means atoll.DefaultApprovalTTL).
	ApprovalTTL time.Duration
	// ApprovalFourEyes keeps a plan's trigger from approving it, as its
	// pull request's author never may (--approval-four-eyes).
	ApprovalFourEyes bool
	// OIDC, if set, adds sign-in through an OpenID Connect provider.
	OIDC    *OIDC
	Metrics *Metrics
	// Cluster reports this node's role (nil: a single node, always active).
	// A standby forwards what it does not serve itself to the active.
	Cluster atoll.NodeService
	// Changes tells the live pages what changed (nil: no live updates).
	Changes atoll.ChangeService
	// Workers serves the worker protocol, /api/v1/workers (nil: no worker
	// pools; those routes answer 404).
	Workers atoll.WorkerService
	// WorkerAdmin is the worker pools' dashboard: the workers page, the
	// worker tokens on the admin page, the queued counts of the overview
	// (nil: no worker pools).
	WorkerAdmin atoll.WorkerAdmin
	// Now is the clock of the pages (nil: time.Now, in UTC); give it the
	// database's clock (store.DB.Now) so pages and stored times agree.
	Now func() time.Time

	// ReadTimeout, WriteTimeout and IdleTimeout bound every connection, so
	// that slow or idle clients cannot hold sockets (zero means 30 s, 60 s
	// and 60 s). The job log websocket and the plan/apply API, which wait
	// on purpose, lift them for their own requests.
	ReadTimeout, WriteTimeout, IdleTimeout time.Duration
	// WebhookMemory bounds the bytes of webhook bodies read at once (zero
	// means 4 × 25 MB); webhooks beyond it wait, then get 503.
	WebhookMemory int64
	// WarnInterval is how often a remote host's rejected webhooks may log a
	// warning (zero means a minute).
	WarnInterval time.Duration
	// StreamsPerUser bounds the live streams (the change stream, job log
	// websockets) one user holds at once (zero means 32); more get 429.
	StreamsPerUser int

	// patterns are the registered routes (see routeMux).
	patterns []string
	budget   *byteBudget
	logins   loginLimiter
	warns    *warnLimiter
	streams  streamLimit
	// streamRecheck is how often a live stream checks its credential
	// again (zero means defaultStreamRecheck; tests shorten it).
	streamRecheck time.Duration
	// streamsEnd is closed by Shutdown: long-lived responses (the change
	// stream) end, as Shutdown waits for every response.
	streamsEnd  chan struct{}
	streamsOnce sync.Once
	server      *http.Server
	ln          net.Listener
}

// maxBody bounds request bodies; GitHub caps webhook payloads at 25 MB.
const maxBody = 25 << 20

// Defaults of the Server's limits.
const (
	defaultReadTimeout   = 30 * time.Second
	defaultWriteTimeout  = 60 * time.Second
	defaultIdleTimeout   = 60 * time.Second
	readHeaderTimeout    = 10 * time.Second
	defaultWebhookMemory = 4 * maxBody
	defaultWarnInterval  = time.Minute
)

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// Handler returns the routes.
func (s *Server) Handler() http.Handler {
	if s.Metrics == nil {
		s.Metrics = NewMetrics()
	}
	s.budget = newByteBudget(orDefault(s.WebhookMemory, defaultWebhookMemory))
	s.warns = &warnLimiter{window: orDefault(s.WarnInterval, defaultWarnInterval)}
	mux := &routeMux{mux: http.NewServeMux()}
	mux.HandleFunc("POST /events", s.handleEvents)
	mux.HandleFunc("GET /healthz", s.handleHealthz)
	mux.HandleFunc("GET /readyz", s.handleReadyz)
	mux.HandleFunc("GET /api/v1/status", s.handleStatus)
	mux.HandleFunc("GET /api/v1/locks", s.handleLocks)
	mux.HandleFunc("DELETE /api/v1/locks/{id}", s.require(atoll.RoleOperator, s.handleUnlock))
	mux.HandleFunc("GET /api/v1/pulls", s.handlePulls)
	mux.HandleFunc("GET /api/v1/repos/{owner}/{name}/pulls/{number}", s.handlePull)
	mux.HandleFunc("POST /api/v1/repos/{owner}/{name}/pulls/{number}/comments", s.require(atoll.RoleOperator, s.handleComment))
	mux.HandleFunc("GET /api/v1/jobs", s.handleJobs)
	mux.HandleFunc("GET /api/v1/jobs/{id}", s.handleJob)
	mux.HandleFunc("GET /api/v1/jobs/{id}/log", s.handleJobLog)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	// Atlantis's API, under its own paths too for drop-in clients.
	for _, prefix := range []string{"/api/v1", "/api"} {
		mux.HandleFunc("POST "+prefix+"/plan", s.require(atoll.RoleOperator, s.handleAPIPlan))
		mux.HandleFunc("POST "+prefix+"/apply", s.require(atoll.RoleOperator, s.handleAPIApply))
	}
	s.approvalRoutes(mux)
	s.driftPageRoutes(mux)
	s.historyRoutes(mux)
	s.pageRoutes(mux)
	s.pullRoutes(mux)
	s.authRoutes(mux)
	s.liveRoutes(mux)
	s.profilingRoutes(mux)
	s.workerRoutes(mux)
	s.driftRoutes(mux)
	s.patterns = mux.patterns
	return s.logRequests(s.markChanges(securityHeaders(s.forwardToActive(guardMutations(withFlash(s.identify(s.gate(mux.mux))))))))
}

// Listen binds addr (":0" picks a free port).
func (s *Server) Listen(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	if s.TLS != nil {
		ln = tls.NewListener(ln, s.TLS)
	}
	s.ln = ln
	read := orDefault(s.ReadTimeout, defaultReadTimeout)
	s.server = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: min(read, readHeaderTimeout),
		ReadTimeout:       read,
		WriteTimeout:      orDefault(s.WriteTimeout, defaultWriteTimeout),
		IdleTimeout:       orDefault(s.IdleTimeout, defaultIdleTimeout),
	}
	s.server.RegisterOnShutdown(s.endStreams)
	return nil
}

// Addr is the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Shutdown.
func (s *Server) Serve() error {
	if err := s.server.Serve(s.ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops accepting requests and waits for in-flight ones. It also
// closes the listener of a server that never served.
func (s *Server) Shutdown(ctx context.Context) error {
	if s.server == nil {
		return nil
	}
	err := s.server.Shutdown(ctx)
	if cerr := s.ln.Close(); cerr != nil && !errors.Is(cerr, net.ErrClosed) && err == nil {
		err = cerr
	}
	return err
}

// liftDeadlines gives a request that waits on purpose (a websocket, the
// plan/apply API) until `until` to read and write; the zero time means no
// deadline. Writers that cannot (test recorders) are left as they are.
func liftDeadlines(w http.ResponseWriter, until time.Time) {
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(until)
	rc.SetWriteDeadline(until)
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rw := &statusWriter{ResponseWriter: w, status: 200}
		next.ServeHTTP(rw, r)
		s.Logger.Debug("http", "method", r.Method, "path", r.URL.Path, "status", rw.status, "us", time.Since(start).Microseconds())
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack lets the websocket handler take over the connection.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	w.status = http.StatusSwitchingProtocols
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var statusOf = map[string]int{
	atoll.ECONFLICT:       http.StatusConflict,
	atoll.EINVALID:        http.StatusBadRequest,
	atoll.ENOTFOUND:       http.StatusNotFound,
	atoll.EUNAUTHORIZED:   http.StatusUnauthorized,
	atoll.EFORBIDDEN:      http.StatusForbidden,
	atoll.EUNAVAILABLE:    http.StatusServiceUnavailable,
	atoll.ENOTIMPLEMENTED: http.StatusNotImplemented,
	atoll.ETOOMANY:        http.StatusTooManyRequests,
	atoll.ETOOLARGE:       http.StatusRequestEntityTooLarge,
	atoll.EINTERNAL:       http.StatusInternalServerError,
}

// error writes {"error": message} with the status for err's code; internal
// errors are logged and shown as a generic message.
func (s *Server) error(w http.ResponseWriter, r *http.Request, err error) {
	writeJSON(w, s.errorStatus(r, err), map[string]string{"error": atoll.ErrorMessage(err)})
}

// errorStatus is the HTTP status for err's code; internal errors, whose
// details users never see, are logged here.
func (s *Server) errorStatus(r *http.Request, err error) int {
	code := atoll.ErrorCode(err)
	if code == atoll.EINTERNAL {
		s.Logger.Error("http error", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	if status, ok := statusOf[code]; ok {
		return status
	}
	return http.StatusInternalServerError
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(v)
}
