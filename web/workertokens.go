package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// handleCreateWorkerToken makes a worker token of a pool (form name,
// pool) and shows its secret once, on the page it answers with (never in
// a redirect, cookie or log), as API tokens are. The service checks the
// pool's name.
func (s *Server) handleCreateWorkerToken(w http.ResponseWriter, r *http.Request) {
	if s.WorkerAdmin == nil {
		s.failed(w, r, "/admin", errNoWorkerPools)
		return
	}
	name, pool := strings.TrimSpace(r.PostFormValue("name")), strings.TrimSpace(r.PostFormValue("pool"))
	// The store holds the rule (atoll.CheckWorkerToken) and says what to
	// fix.
	me := atoll.UserFromContext(r.Context())
	t, secret, err := s.WorkerAdmin.CreateWorkerToken(r.Context(), name, pool, me.Name, source(r))
	if err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	if !wantsHTML(r) {
		writeJSON(w, http.StatusCreated, map[string]any{"token": secret, "worker_token": t})
		return
	}
	s.renderAdmin(w, r, http.StatusCreated, templates.AdminPage{NewWorkerToken: secret, NewWorkerTokenName: t.Name, NewWorkerPool: t.Pool})
}

// handleRevokeWorkerToken revokes a worker token: its workers' polls and
// jobs stop at once.
func (s *Server) handleRevokeWorkerToken(w http.ResponseWriter, r *http.Request) {
	if s.WorkerAdmin == nil {
		s.failed(w, r, "/admin", errNoWorkerPools)
		return
	}
	id, err := atoll.ParseID(r.PathValue("id"))
	if err != nil {
		s.failed(w, r, "/admin", atoll.Errorf(atoll.EINVALID, "Invalid worker token id."))
		return
	}
	// The token's name, for the message (its id if it cannot be read).
	name := "#" + strconv.FormatInt(id, 10)
	if o, err := s.WorkerAdmin.Workers(r.Context()); err == nil {
		for _, t := range o.Tokens {
			if t.ID == id {
				name = t.Name + " (pool " + t.Pool + ")"
			}
		}
	}
	me := atoll.UserFromContext(r.Context())
	if err := s.WorkerAdmin.RevokeWorkerToken(r.Context(), id, me.Name, source(r)); err != nil {
		s.failed(w, r, "/admin", err)
		return
	}
	msg := "Revoked the worker token " + name + ": its workers stop."
	s.done(w, r, "/admin", msg, nil, map[string]string{"message": msg})
}
