package atoll

import (
	"context"
	"time"
)

// Event is an audit record: who did what, when.
type Event struct {
	ID     int64     `json:"id"`
	Time   time.Time `json:"time"`
	Actor  string    `json:"actor"`
	Action string    `json:"action"`
	Repo   string    `json:"repo,omitempty"`
	Pull   int       `json:"pull,omitempty"`
	Detail string    `json:"detail,omitempty"`
	// Source is where the action came from: the client's IP address for
	// the dashboard and the API, "pr-comment" for a pull request comment,
	// "webhook" for the VCS host's own events, "atoll" for the server.
	Source string `json:"source,omitempty"`
}

// Sources of events that are not an HTTP client's address.
const (
	SourcePRComment = "pr-comment"
	SourceWebhook   = "webhook"
	SourceAPI       = "api"
	SourceAtoll     = "atoll"
)

// EventFilter selects audit events; zero fields match anything. Before
// pages back: only events with an id below it (keyset pagination).
type EventFilter struct {
	Actor  string
	Action string
	Repo   string
	Since  time.Time
	Before int64
	Limit  int
}

// AuditService reads and records audit events.
type AuditService interface {
	AuditEvents(ctx context.Context, f EventFilter) ([]Event, error)
	// AddEvent records e in a transaction of its own.
	AddEvent(ctx context.Context, e Event) error
}
