package web

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// auditPage is how many events one page of the audit log shows.
const auditPage = 100

// auditFilter reads the audit filters of a query: actor, action, repo,
// since (RFC 3339 or a date), before (an event id), limit.
func auditFilter(q url.Values) (atoll.EventFilter, error) {
	f := atoll.EventFilter{Actor: strings.TrimSpace(q.Get("actor")), Action: strings.TrimSpace(q.Get("action")),
		Repo: strings.TrimSpace(q.Get("repo")), Limit: auditPage}
	if err := repoParam(f.Repo); err != nil {
		return f, err
	}
	if v := strings.TrimSpace(q.Get("since")); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			if t, err = time.Parse(time.DateOnly, v); err != nil {
				return f, atoll.Errorf(atoll.EINVALID, "Invalid since %q: use a time like 2026-01-02T15:04:05Z or a date like 2026-01-02.", v)
			}
		}
		f.Since = t
	}
	if v := q.Get("before"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return f, atoll.Errorf(atoll.EINVALID, "Invalid before %q: use an event id.", v)
		}
		f.Before = n
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 1000 {
			return f, atoll.Errorf(atoll.EINVALID, "Invalid limit %q: use 1 to 1000.", v)
		}
		f.Limit = n
	}
	return f, nil
}

// handleAuditPage shows the audit log, newest first, with filters and a
// link to older events.
func (s *Server) handleAuditPage(w http.ResponseWriter, r *http.Request) {
	f, err := auditFilter(r.URL.Query())
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	events, err := s.DB.AuditEvents(r.Context(), f)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	m := s.pageMeta(r.Context())
	page := templates.AuditPage{Meta: m, Filter: f, Events: events, CanFreeze: m.User != nil && m.User.Role.Allows(admin)}
	if len(events) == f.Limit {
		older := f
		older.Before = events[len(events)-1].ID
		page.Older = templates.AuditPath(older)
	}
	s.renderPage(w, r, http.StatusOK, templates.Audit(page))
}

type auditResponse struct {
	Events []atoll.Event `json:"events"`
	// NextBefore is the before= of the next (older) page; 0 on the last.
	NextBefore int64 `json:"next_before,omitempty"`
}

// handleAPIAudit lists audit events: the same filters as the page.
func (s *Server) handleAPIAudit(w http.ResponseWriter, r *http.Request) {
	if err := listParams(r.URL.Query(), auditParams); err != nil {
		s.error(w, r, err)
		return
	}
	f, err := auditFilter(r.URL.Query())
	if err != nil {
		s.error(w, r, err)
		return
	}
	events, err := s.DB.AuditEvents(r.Context(), f)
	if err != nil {
		s.error(w, r, err)
		return
	}
	res := auditResponse{Events: nonNil(events)}
	if len(events) == f.Limit {
		res.NextBefore = events[len(events)-1].ID
	}
	writeJSON(w, http.StatusOK, res)
}
