package store

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
)

// AddEvent appends an audit event.
func (tx *Tx) AddEvent(e atoll.Event) error {
	_, err := tx.exec(`INSERT INTO events (time, actor, action, repo, pull, detail) VALUES (?, ?, ?, ?, ?, ?)`,
		ts(tx.now), e.Actor, e.Action, e.Repo, e.Pull, e.Detail)
	if err != nil {
		return fmt.Errorf("store add event %s: %w", e.Action, err)
	}
	return nil
}

// Events lists the newest audit events first.
func (db *DB) Events(ctx context.Context, limit int) ([]atoll.Event, error) {
	if limit <= 0 || limit > 1000 {
		limit = 100
	}
	rows, err := db.reader().QueryContext(ctx, `SELECT id, time, actor, action, repo, pull, detail FROM events ORDER BY id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("store events: %w", err)
	}
	defer rows.Close()
	var out []atoll.Event
	for rows.Next() {
		var e atoll.Event
		var t int64
		if err := rows.Scan(&e.ID, &t, &e.Actor, &e.Action, &e.Repo, &e.Pull, &e.Detail); err != nil {
			return nil, fmt.Errorf("store events: %w", err)
		}
		e.Time = fromTS(t)
		out = append(out, e)
	}
	return out, rows.Err()
}
