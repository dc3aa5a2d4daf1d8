package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// AddEvent appends an audit event: who (Actor), what (Action), from where
// (Source); the time is the transaction's.
func (tx *Tx) AddEvent(e atoll.Event) error {
	_, err := tx.exec(`INSERT INTO events (time, actor, action, repo, pull, detail, source) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		ts(tx.now), e.Actor, e.Action, e.Repo, e.Pull, e.Detail, e.Source)
	if err != nil {
		return fmt.Errorf("store add event %s: %w", e.Action, err)
	}
	return nil
}

// Events lists the newest audit events first.
func (db *DB) Events(ctx context.Context, limit int) ([]atoll.Event, error) {
	return db.AuditEvents(ctx, atoll.EventFilter{Limit: limit})
}

// maxEvents bounds one page of audit events.
const maxEvents = 1000

// AuditEvents lists the audit events f selects, newest first. Pages are
// keyed by id (f.Before: the last id of the previous page), so paging back
// costs the same on the millionth event as on the first.
func (db *DB) AuditEvents(ctx context.Context, f atoll.EventFilter) ([]atoll.Event, error) {
	if f.Limit <= 0 || f.Limit > maxEvents {
		f.Limit = 100
	}
	var where []string
	var args []any
	if f.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, f.Actor)
	}
	if f.Action != "" {
		// "apply" matches apply.start; "plan.approve" only itself.
		where, args = append(where, "(action = ? OR action LIKE ? ESCAPE '\\')"), append(args, f.Action, escapeLike(f.Action)+".%")
	}
	if f.Repo != "" {
		where, args = append(where, "repo = ?"), append(args, f.Repo)
	}
	if !f.Since.IsZero() {
		where, args = append(where, "time >= ?"), append(args, ts(f.Since))
	}
	if f.Before > 0 {
		where, args = append(where, "id < ?"), append(args, f.Before)
	}
	q := `SELECT id, time, actor, action, repo, pull, detail, source FROM events`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY id DESC LIMIT ?`
	rows, err := db.reader().QueryContext(ctx, q, append(args, f.Limit)...)
	return collect(rows, err, "events", func(s scanner) (atoll.Event, error) {
		var e atoll.Event
		var t int64
		err := s.Scan(&e.ID, &t, &e.Actor, &e.Action, &e.Repo, &e.Pull, &e.Detail, &e.Source)
		e.Time = fromTS(t)
		return e, err
	})
}

// escapeLike escapes LIKE's wildcards in s.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// AddEvent records an audit event in a transaction of its own, for what
// writes nothing else (a failed sign-in).
func (db *DB) AddEvent(ctx context.Context, e atoll.Event) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.AddEvent(e) })
}
