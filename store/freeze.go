package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/atollhq/atoll"
)

const freezeSetting = "freeze"

func readFreeze(ctx context.Context, q querier) (atoll.Freeze, error) {
	var f atoll.Freeze
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, freezeSetting).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return f, nil
	} else if err != nil {
		return f, fmt.Errorf("store freeze: %w", err)
	}
	if err := json.Unmarshal([]byte(v), &f); err != nil {
		return f, fmt.Errorf("store freeze: %w", err)
	}
	return f, nil
}

// Freeze returns the global apply freeze: one primary-key read, cheap
// enough for every page.
func (db *DB) Freeze(ctx context.Context) (atoll.Freeze, error) { return readFreeze(ctx, db.reader()) }

// Freeze returns the apply freeze as this transaction sees it: an apply
// checks it in the transaction that marks its plan applied.
func (tx *Tx) Freeze() (atoll.Freeze, error) { return readFreeze(tx.ctx, tx.tx) }

// SetFreeze turns the global apply freeze on or off as user (from source),
// with its audit event in the same transaction. Turning it on needs a
// reason, which every refused apply quotes.
func (tx *Tx) SetFreeze(on bool, user, reason, source string) (atoll.Freeze, error) {
	reason = strings.TrimSpace(reason)
	switch {
	case user == "":
		return atoll.Freeze{}, atoll.Errorf(atoll.EUNAUTHORIZED, "Sign in first.")
	case on && reason == "":
		return atoll.Freeze{}, atoll.Errorf(atoll.EINVALID, "Say why applies are frozen: the reason is shown to everyone whose apply is refused.")
	case utf8.RuneCountInString(reason) > maxReason || !utf8.ValidString(reason):
		return atoll.Freeze{}, atoll.Errorf(atoll.EINVALID, "The reason must be at most %d characters of text.", maxReason)
	}
	f := atoll.Freeze{On: on, By: user, Reason: reason, Since: tx.now}
	v, err := json.Marshal(f)
	if err != nil {
		return f, fmt.Errorf("store set freeze: %w", err)
	}
	if _, err := tx.exec(`INSERT INTO settings (name, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`, freezeSetting, string(v), ts(tx.now)); err != nil {
		return f, fmt.Errorf("store set freeze: %w", err)
	}
	action, detail := "freeze.off", "applies allowed again"
	if on {
		action, detail = "freeze.on", "applies frozen: "+reason
	} else if reason != "" {
		detail += ": " + reason
	}
	if err := tx.AddEvent(atoll.Event{Actor: user, Action: action, Detail: detail, Source: source}); err != nil {
		return f, err
	}
	tx.Notify(atoll.Change{Topic: atoll.TopicFreeze})
	return f, nil
}

// SetFreeze is Tx.SetFreeze in a transaction of its own: the freeze and its
// audit event, both or neither.
func (db *DB) SetFreeze(ctx context.Context, on bool, user, reason, source string) (atoll.Freeze, error) {
	var f atoll.Freeze
	err := db.Update(ctx, func(tx *Tx) (err error) {
		f, err = tx.SetFreeze(on, user, reason, source)
		return err
	})
	return f, err
}
