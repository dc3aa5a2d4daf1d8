package web

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// handleEvents receives VCS webhooks. The answer is sent only after the
// webhook and the work it queues are committed; the work happens later.
// Each is counted by result, with the time from its arrival to its answer.
func (s *Server) handleEvents(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	result := s.receiveWebhook(w, r)
	s.Metrics.Webhook(result, time.Since(start))
}

// receiveWebhook answers a webhook and returns its result: queued,
// ignored, rejected or error.
//
// Hostile clients are turned away cheaply: the signature header is checked
// before the body is read, bodies over maxBody get 413 (unread when they
// say so up front), and bodies being read share a memory budget.
func (s *Server) receiveWebhook(w http.ResponseWriter, r *http.Request) string {
	provider, err := s.webhookProvider(r)
	if err != nil {
		s.error(w, r, err)
		return "rejected"
	}
	if err := provider.CheckWebhook(r.Header); err != nil {
		w.Header().Set("Connection", "close") // rather than read the body
		return s.rejectWebhook(w, r, err)
	}
	if s.Commands == nil {
		s.error(w, r, atoll.Errorf(atoll.EUNAVAILABLE, "This server runs no commands."))
		return "error"
	}
	defer s.Commands.Receiving()()
	body, status, err := s.readWebhook(w, r)
	if err != nil {
		w.Header().Set("Connection", "close") // rather than read the rest
		writeJSON(w, status, map[string]string{"error": atoll.ErrorMessage(err)})
		return "rejected"
	}
	ev, err := provider.ParseWebhook(r, body)
	if err != nil {
		return s.rejectWebhook(w, r, err)
	}
	if ev == nil {
		writeJSON(w, http.StatusOK, map[string]any{"queued": false, "message": "Ignored: not an event Atoll acts on."})
		return "ignored"
	}
	id, err := s.Commands.Receive(r.Context(), ev)
	if err != nil {
		s.error(w, r, err)
		return "error"
	}
	queued := id != 0
	writeJSON(w, http.StatusOK, map[string]any{"queued": queued})
	if queued {
		return "queued"
	}
	return "ignored"
}

// rejectWebhook answers a webhook the provider refused. Bad signatures are
// logged, at most once per remote host per WarnInterval.
func (s *Server) rejectWebhook(w http.ResponseWriter, r *http.Request, err error) string {
	if atoll.ErrorCode(err) == atoll.EUNAUTHORIZED {
		if ok, suppressed := s.warns.allow(r.RemoteAddr, time.Now()); ok {
			s.Logger.Warn("webhook rejected", "remote", r.RemoteAddr, "reason", atoll.ErrorMessage(err),
				"suppressed_since_last", suppressed)
		}
	}
	s.error(w, r, err)
	return "rejected"
}

// webhookWait is how long a webhook waits for room in the body budget
// before it is answered 503 with Retry-After.
const webhookWait = 5 * time.Second

// readWebhook reads the body within maxBody and the body budget. On error
// it returns the HTTP status to answer with.
func (s *Server) readWebhook(w http.ResponseWriter, r *http.Request) ([]byte, int, error) {
	tooLarge := atoll.Errorf(atoll.EINVALID, "Webhook body over the %d MB limit.", maxBody>>20)
	if r.ContentLength > maxBody {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	}
	size := r.ContentLength
	if size < 0 { // chunked: it may be as large as the limit
		size = maxBody
	}
	ctx, cancel := context.WithTimeout(r.Context(), webhookWait)
	ok := s.budget.acquire(ctx, size)
	cancel()
	if !ok {
		w.Header().Set("Retry-After", strconv.Itoa(int(webhookWait/time.Second)))
		return nil, http.StatusServiceUnavailable, atoll.Errorf(atoll.EUNAVAILABLE, "Too many webhooks are being received: retry later.")
	}
	defer s.budget.release(size)
	body := http.MaxBytesReader(w, r.Body, maxBody)
	var buf []byte
	var err error
	if r.ContentLength >= 0 {
		// The server's body reader stops at ContentLength; reading into a
		// buffer of that size avoids ReadAll's doubling.
		buf = make([]byte, r.ContentLength)
		_, err = io.ReadFull(body, buf)
	} else {
		buf, err = io.ReadAll(body)
	}
	var maxErr *http.MaxBytesError
	if errors.As(err, &maxErr) {
		return nil, http.StatusRequestEntityTooLarge, tooLarge
	} else if err != nil {
		return nil, http.StatusBadRequest, atoll.Errorf(atoll.EINVALID, "Request body unreadable or incomplete.")
	}
	return buf, 0, nil
}

// webhookProvider picks the VCS a webhook comes from: the first host that
// recognises its headers. A host Atoll knows but this server does not
// serve gets a clear "not configured".
func (s *Server) webhookProvider(r *http.Request) (vcs.Provider, error) {
	var hints []string
	for _, h := range s.webhookHosts() {
		if !h.Recognizes(r.Header) {
			if hint := h.WebhookHint(); hint != "" {
				hints = append(hints, hint)
			}
			continue
		}
		p, ok := s.Providers[h.Kind()]
		if !ok {
			return nil, atoll.Errorf(atoll.EINVALID, "Webhooks from %s are not configured on this server.", h.Kind())
		}
		return p, nil
	}
	if len(hints) == 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "Unrecognised webhook: no VCS host that sends webhooks is configured.")
	}
	return nil, atoll.Errorf(atoll.EINVALID, "Unrecognised webhook: expected %s.", strings.Join(hints, " or "))
}

// webhookHosts is s.Hosts followed by the configured providers it misses,
// in the order of their kinds: the same order on every request.
func (s *Server) webhookHosts() []vcs.Recognizer {
	hosts := append([]vcs.Recognizer{}, s.Hosts...)
	listed := map[string]bool{}
	for _, h := range hosts {
		listed[h.Kind()] = true
	}
	var rest []string
	for kind := range s.Providers {
		if !listed[kind] {
			rest = append(rest, kind)
		}
	}
	slices.Sort(rest)
	for _, kind := range rest {
		hosts = append(hosts, s.Providers[kind])
	}
	return hosts
}
