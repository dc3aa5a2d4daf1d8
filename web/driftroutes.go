package web

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/drift"
)

// Atlantis's alpha drift API (/api/drift/...): its requests, checks and
// answers are Atlantis's (package drift), in its envelope, whatever the
// error, authentication included. Atoll runs a detection as a drift
// check (atoll.Drifter) and keeps remediation runs in the database.
func (s *Server) driftRoutes(mux *routeMux) {
	mux.HandleFunc("GET /api/drift/status", s.driftAuth(atoll.RoleViewer, s.handleDriftStatus))
	mux.HandleFunc("POST /api/drift/detect", s.driftAuth(atoll.RoleOperator, s.handleDriftDetect))
	mux.HandleFunc("GET /api/drift/remediate", s.driftAuth(atoll.RoleViewer, s.handleDriftRemediations))
	mux.HandleFunc("GET /api/drift/remediate/{id}", s.driftAuth(atoll.RoleViewer, s.handleDriftRemediation))
	mux.HandleFunc("POST /api/drift/remediate", s.driftAuth(atoll.RoleOperator, s.handleDriftRemediate))
}

// driftPath reports the drift API's routes: identify and gate let their
// requests through without a user, so that the handler refuses them in
// the drift envelope (driftAuth).
func driftPath(p string) bool {
	switch p {
	case "/api/drift/status", "/api/drift/detect", "/api/drift/remediate":
		return true
	}
	id, ok := strings.CutPrefix(p, "/api/drift/remediate/")
	return ok && id != "" && !strings.Contains(id, "/")
}

// driftAuth refuses a request without a user (no credential, or one
// refused: Atlantis's 401 "invalid or missing API token") or below role
// need (403), in the drift envelope. Every way to sign in to Atoll's API
// works (API tokens, --api-secret, basic auth, a session), so there is no
// "API is disabled" state.
func (s *Server) driftAuth(need atoll.Role, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u := atoll.UserFromContext(r.Context())
		switch {
		case u == nil:
			s.driftFail(w, r, &drift.EnvelopeError{Code: drift.CodeUnauthorized, Message: drift.MsgBadToken})
		case !u.Role.Allows(need):
			s.driftFail(w, r, &drift.EnvelopeError{Code: drift.CodeForbidden,
				Message: fmt.Sprintf("this needs the %s role; %s is %s", need, u.Name, u.Role)})
		default:
			h(w, r)
		}
	}
}

// driftRequestID is the envelope's request_id: the client's X-Request-ID,
// else a new UUID.
func driftRequestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-ID"); id != "" {
		return id
	}
	return newUUID()
}

// newUUID is a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// driftWrite writes envelope env with status, as Atlantis does (one line,
// HTML escaped).
func driftWrite(w http.ResponseWriter, status int, env drift.Envelope) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(env)
}

// driftOK answers data with status.
func (s *Server) driftOK(w http.ResponseWriter, r *http.Request, status int, data any) {
	driftWrite(w, status, drift.OK(data, driftRequestID(r), time.Now()))
}

// driftFail answers e with its code's status.
func (s *Server) driftFail(w http.ResponseWriter, r *http.Request, e *drift.EnvelopeError) {
	driftWrite(w, drift.StatusOf(e.Code), drift.Fail(e.Code, e.Message, e.Details, driftRequestID(r), time.Now()))
}

// driftError answers err (an atoll error) in the envelope: a 500 says
// only "internal server error", the error itself goes to the log.
func (s *Server) driftError(w http.ResponseWriter, r *http.Request, err error) {
	var e drift.EnvelopeError
	switch atoll.ErrorCode(err) {
	case atoll.EINVALID:
		e = drift.EnvelopeError{Code: drift.CodeValidation, Message: atoll.ErrorMessage(err)}
	case atoll.EFORBIDDEN:
		e = drift.EnvelopeError{Code: drift.CodeForbidden, Message: drift.MsgNotAllowlisted}
	case atoll.ENOTFOUND:
		e = drift.EnvelopeError{Code: drift.CodeNotFound, Message: atoll.ErrorMessage(err)}
	case atoll.EUNAVAILABLE:
		e = drift.EnvelopeError{Code: drift.CodeServiceUnavailable, Message: atoll.ErrorMessage(err)}
	default:
		s.Logger.Error("drift api", "path", r.URL.Path, "err", err)
		e = drift.EnvelopeError{Code: drift.CodeInternal, Message: drift.MsgInternal}
	}
	s.driftFail(w, r, &e)
}

// driftRepo is the repository a drift request names (type Github only:
// the types Atlantis serves drift for that Atoll hosts; Gitlab and Gitea
// are valid types Atoll has no host for). Atoll must know it (from a
// webhook) to know its clone URL: otherwise 404.
func (s *Server) driftRepo(ctx context.Context, vcsType, repository string) (*atoll.Repo, *drift.EnvelopeError) {
	if vcsType != "Github" {
		return nil, drift.Invalid(drift.MsgUnsupportedType, "type", "this server serves drift for Github repositories only")
	}
	repo, err := s.DB.RepoByName(ctx, strings.TrimSpace(repository))
	if err == nil && repo.VCS != atoll.VCSGitHub && repo.VCS != atoll.VCSLocal {
		err = atoll.Errorf(atoll.ENOTFOUND, "not on GitHub")
	}
	switch atoll.ErrorCode(err) {
	case "":
	case atoll.ENOTFOUND, atoll.EINVALID:
		return nil, &drift.EnvelopeError{Code: drift.CodeNotFound, Message: "repository not found: " + repository}
	default:
		s.Logger.Error("drift api: repository", "repo", repository, "err", err)
		return nil, &drift.EnvelopeError{Code: drift.CodeInternal, Message: drift.MsgInternal}
	}
	if s.Allowlist != nil && !s.Allowlist.Allows(repo.Host, repo.Owner, repo.Name) {
		return nil, &drift.EnvelopeError{Code: drift.CodeForbidden, Message: drift.MsgNotAllowlisted}
	}
	return repo, nil
}

// driftKey is a repository's key in the remediation history: host and
// full name, as Atlantis's Repo.ID().
func driftKey(repo *atoll.Repo) string { return repo.Host + "/" + repo.FullName() }

// driftReadScope checks a read route's enabled state and its repository
// and type parameters, and returns the repository.
func (s *Server) driftReadScope(r *http.Request, disabled string) (*atoll.Repo, *drift.EnvelopeError) {
	if !s.DriftDetection {
		return nil, &drift.EnvelopeError{Code: drift.CodeServiceUnavailable, Message: disabled}
	}
	q := r.URL.Query()
	repository, vcsType := q.Get("repository"), q.Get("type")
	if e := drift.CheckScope(repository, vcsType); e != nil {
		return nil, e
	}
	return s.driftRepo(r.Context(), vcsType, repository)
}
