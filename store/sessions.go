package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

// CreateSession stores the hash of a new session of user id.
func (tx *Tx) CreateSession(userID int64, hash []byte) error {
	_, err := tx.exec(`INSERT INTO sessions (hash, user_id, created_at, last_used_at, expires_at) VALUES (?, ?, ?, ?, ?)`,
		hash, userID, ts(tx.now), ts(tx.now), ts(tx.now.Add(atoll.SessionMaxAge)))
	if err != nil {
		return fmt.Errorf("store create session for user %d: %w", userID, err)
	}
	return nil
}

// DeleteSession ends the session hashing to hash and returns its user's
// name (” if there was none).
func (tx *Tx) DeleteSession(hash []byte) (string, error) {
	var name string
	var userID int64
	err := tx.queryRow(`SELECT u.id, u.name FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ?`, hash).Scan(&userID, &name)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	} else if err != nil {
		return "", fmt.Errorf("store delete session: %w", err)
	}
	if _, err := tx.exec(`DELETE FROM sessions WHERE hash = ?`, hash); err != nil {
		return "", fmt.Errorf("store delete session: %w", err)
	}
	tx.notifyUser(userID)
	return name, nil
}

// endSessions signs user id out everywhere.
func (tx *Tx) endSessions(userID int64) error {
	if _, err := tx.exec(`DELETE FROM sessions WHERE user_id = ?`, userID); err != nil {
		return fmt.Errorf("store end sessions of user %d: %w", userID, err)
	}
	tx.notifyUser(userID)
	return nil
}

// DeleteExpiredSessions removes sessions past either limit.
func (tx *Tx) DeleteExpiredSessions() (int64, error) {
	res, err := tx.exec(`DELETE FROM sessions WHERE expires_at <= ? OR last_used_at <= ?`, ts(tx.now), ts(tx.now.Add(-atoll.SessionIdle)))
	if err != nil {
		return 0, fmt.Errorf("store delete expired sessions: %w", err)
	}
	return res.RowsAffected()
}

// SessionUser returns the enabled user of the live session hashing to hash
// (EUNAUTHORIZED if none, or expired). Like TokenUser, it records the use
// at most once a minute, and only where the database is writable.
func (db *DB) SessionUser(ctx context.Context, hash []byte) (*atoll.User, error) {
	return db.sessionUser(ctx, hash, true)
}

// CheckSession is SessionUser without recording the use: a live stream's
// checks must not keep an idle session alive.
func (db *DB) CheckSession(ctx context.Context, hash []byte) (*atoll.User, error) {
	return db.sessionUser(ctx, hash, false)
}

func (db *DB) sessionUser(ctx context.Context, hash []byte, touch bool) (*atoll.User, error) {
	var used, expires int64
	a, err := scanAccountPlus(db.reader().QueryRowContext(ctx, `SELECT `+prefixed("u.", userColumns)+`, s.last_used_at, s.expires_at
		FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.hash = ?`, hash), &used, &expires)
	now := db.Now()
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (a.Disabled || !now.Before(fromTS(expires)) || now.Sub(fromTS(used)) >= atoll.SessionIdle)) {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "Your session has ended: sign in again.")
	} else if err != nil {
		return nil, fmt.Errorf("store session user: %w", err)
	}
	if touch && db.Writable() && now.Sub(fromTS(used)) >= touchEvery {
		err := db.Update(ctx, func(tx *Tx) error {
			_, err := tx.exec(`UPDATE sessions SET last_used_at = ? WHERE hash = ?`, ts(tx.now), hash)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("store session last used: %w", err)
		}
	}
	return &a.User, nil
}

// StartSession signs u in: it drops expired sessions, stores the hash of the
// new one and records the "login" event (how: "local", "oidc"; from
// source), in one transaction.
func (db *DB) StartSession(ctx context.Context, u *atoll.User, hash []byte, how, source string) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.DeleteExpiredSessions(); err != nil {
			return err
		}
		if err := tx.CreateSession(u.ID, hash); err != nil {
			return err
		}
		return tx.AddEvent(atoll.Event{Actor: u.Name, Action: "login", Detail: how + " from " + source})
	})
}

// EndSession deletes the session hashing to hash and, if there was one,
// records its user's "logout" event, in one transaction.
func (db *DB) EndSession(ctx context.Context, hash []byte, source string) error {
	return db.Update(ctx, func(tx *Tx) error {
		name, err := tx.DeleteSession(hash)
		if err != nil || name == "" {
			return err
		}
		return tx.AddEvent(atoll.Event{Actor: name, Action: "logout", Detail: "from " + source})
	})
}
