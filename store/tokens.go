package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// Touch interval: last-used times are written at most this often per
// session or token, so that reading pages does not cost a commit each.
const touchEvery = time.Minute

// CreateToken stores the hash of a new API token of user id.
func (tx *Tx) CreateToken(userID int64, name string, hash []byte) (int64, error) {
	res, err := tx.exec(`INSERT INTO api_tokens (hash, user_id, name, created_at) VALUES (?, ?, ?, ?)`, hash, userID, name, ts(tx.now))
	if err != nil {
		return 0, fmt.Errorf("store create token for user %d: %w", userID, err)
	}
	return res.LastInsertId()
}

// RevokeToken deletes API token id.
func (tx *Tx) RevokeToken(id int64) (*atoll.APIToken, error) {
	var t atoll.APIToken
	var created int64
	var used sql.NullInt64
	err := tx.queryRow(`SELECT t.id, t.user_id, u.name, t.name, t.created_at, t.last_used_at FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.id = ?`, id).
		Scan(&t.ID, &t.UserID, &t.User, &t.Name, &created, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "No such API token.")
	} else if err != nil {
		return nil, fmt.Errorf("store revoke token %d: %w", id, err)
	}
	if _, err := tx.exec(`DELETE FROM api_tokens WHERE id = ?`, id); err != nil {
		return nil, fmt.Errorf("store revoke token %d: %w", id, err)
	}
	tx.notifyUser(t.UserID)
	t.CreatedAt, t.LastUsedAt = fromTS(created), fromNullTS(used)
	return &t, nil
}

// Tokens lists every API token, newest first.
func (db *DB) Tokens(ctx context.Context) ([]*atoll.APIToken, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT t.id, t.user_id, u.name, t.name, t.created_at, t.last_used_at FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.id DESC`)
	return collect(rows, err, "tokens", func(s scanner) (*atoll.APIToken, error) {
		var t atoll.APIToken
		var created int64
		var used sql.NullInt64
		if err := s.Scan(&t.ID, &t.UserID, &t.User, &t.Name, &created, &used); err != nil {
			return nil, err
		}
		t.CreatedAt, t.LastUsedAt = fromTS(created), fromNullTS(used)
		return &t, nil
	})
}

// TokenUser returns the enabled user whose API token hashes to hash
// (EUNAUTHORIZED if none). It records the use at most once a minute, and
// only where the database is writable (not on a standby's copy).
func (db *DB) TokenUser(ctx context.Context, hash []byte) (*atoll.User, error) {
	return db.tokenUser(ctx, hash, true)
}

// CheckToken is TokenUser without recording the use, for a live stream's
// checks.
func (db *DB) CheckToken(ctx context.Context, hash []byte) (*atoll.User, error) {
	return db.tokenUser(ctx, hash, false)
}

func (db *DB) tokenUser(ctx context.Context, hash []byte, touch bool) (*atoll.User, error) {
	var id int64
	var used sql.NullInt64
	a, err := scanAccountPlus(db.reader().QueryRowContext(ctx, `SELECT `+prefixed("u.", userColumns)+`, t.id, t.last_used_at
		FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.hash = ?`, hash), &id, &used)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && a.Disabled) {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "Invalid or revoked API token.")
	} else if err != nil {
		return nil, fmt.Errorf("store token user: %w", err)
	}
	now := db.Now()
	if touch && db.Writable() && (!used.Valid || now.Sub(fromTS(used.Int64)) >= touchEvery) {
		err := db.Update(ctx, func(tx *Tx) error {
			_, err := tx.exec(`UPDATE api_tokens SET last_used_at = ? WHERE id = ?`, ts(tx.now), id)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("store token %d last used: %w", id, err)
		}
	}
	return &a.User, nil
}

// scanAccountPlus scans userColumns then extra columns.
func scanAccountPlus(s scanner, extra ...any) (*atoll.Account, error) {
	var a atoll.Account
	var created int64
	var role, logins string
	dest := append([]any{&a.ID, &a.Name, &role, &a.Source, &a.PasswordHash, &a.OIDCSubject, &a.Disabled, &created, &logins}, extra...)
	if err := s.Scan(dest...); err != nil {
		return nil, err
	}
	a.Role = atoll.Role(role)
	a.VCSLogins = strings.Fields(logins)
	a.CreatedAt = fromTS(created)
	return &a, nil
}

// prefixed qualifies each of the comma-separated columns with p.
func prefixed(p, columns string) string {
	cols := strings.Split(columns, ",")
	for i, c := range cols {
		cols[i] = p + strings.TrimSpace(c)
	}
	return strings.Join(cols, ", ")
}

// CreateToken stores the hash of a new API token of user id with its audit
// event ("token.create") by actor from source, in one transaction: a token
// nobody can account for never exists.
func (db *DB) CreateToken(ctx context.Context, userID int64, name string, hash []byte, actor, source string) error {
	return db.Update(ctx, func(tx *Tx) error {
		user, err := tx.userName(userID)
		if err != nil {
			return err
		}
		if _, err := tx.CreateToken(userID, name, hash); err != nil {
			return err
		}
		return tx.AddEvent(atoll.Event{Actor: actor, Action: "token.create", Detail: name + " for " + user + " from " + source})
	})
}

// RevokeToken deletes API token id with its audit event ("token.revoke"),
// in one transaction, and returns the token as it was.
func (db *DB) RevokeToken(ctx context.Context, id int64, actor, source string) (*atoll.APIToken, error) {
	var t *atoll.APIToken
	err := db.Update(ctx, func(tx *Tx) (err error) {
		if t, err = tx.RevokeToken(id); err != nil {
			return err
		}
		return tx.AddEvent(atoll.Event{Actor: actor, Action: "token.revoke", Detail: t.Name + " of " + t.User + " from " + source})
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}
