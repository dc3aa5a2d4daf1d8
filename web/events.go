package web

import (
	"io"
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// handleEvents receives VCS webhooks. The answer is sent only after the
// webhook and the work it queues are committed; the work happens later.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	defer s.Runner.Receiving()()
	provider, err := s.webhookProvider(r)
	if err != nil {
		s.Metrics.Webhook("rejected")
		s.error(w, r, err)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		s.Metrics.Webhook("rejected")
		s.error(w, r, atoll.Errorf(atoll.EINVALID, "Request body too large or unreadable."))
		return
	}
	ev, err := provider.ParseWebhook(r, body)
	if err != nil {
		s.Metrics.Webhook("rejected")
		if atoll.ErrorCode(err) == atoll.EUNAUTHORIZED {
			s.Logger.Warn("webhook rejected", "remote", r.RemoteAddr, "reason", atoll.ErrorMessage(err))
		}
		s.error(w, r, err)
		return
	}
	if ev == nil {
		s.Metrics.Webhook("ignored")
		writeJSON(w, http.StatusOK, map[string]any{"queued": false, "message": "Ignored: not an event Atoll acts on."})
		return
	}
	queued, err := s.Runner.HandleEvent(r.Context(), ev)
	if err != nil {
		s.Metrics.Webhook("error")
		s.error(w, r, err)
		return
	}
	result := "ignored"
	if queued {
		result = "queued"
	}
	s.Metrics.Webhook(result)
	writeJSON(w, http.StatusOK, map[string]any{"queued": queued})
}

// webhookProvider picks the VCS a webhook comes from by its headers.
func (s *Server) webhookProvider(r *http.Request) (vcs.Provider, error) {
	kind := ""
	switch {
	case r.Header.Get("X-GitHub-Event") != "":
		kind = atoll.VCSGitHub
	case r.Header.Get("Authorization") != "" || r.Header.Get("X-Vss-Activityid") != "":
		kind = atoll.VCSAzureDevOps
	default:
		return nil, atoll.Errorf(atoll.EINVALID, "Unrecognised webhook: expected an X-GitHub-Event header.")
	}
	p, ok := s.Providers[kind]
	if !ok {
		return nil, atoll.Errorf(atoll.EINVALID, "Webhooks from %s are not configured on this server.", kind)
	}
	return p, nil
}
