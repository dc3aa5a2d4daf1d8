package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

const lockColumns = `l.id, r.owner || '/' || r.name, p.number, p.url, pr.name, pr.dir, pr.workspace, l.user, l.created_at, l.pull_id`

const lockFrom = ` FROM locks l JOIN projects pr ON pr.id = l.project_id JOIN pulls p ON p.id = l.pull_id JOIN repos r ON r.id = p.repo_id `

func scanLock(s scanner) (*atoll.Lock, int64, error) {
	var l atoll.Lock
	var created, pullID int64
	if err := s.Scan(&l.ID, &l.Repo, &l.Pull, &l.PullURL, &l.Project, &l.Dir, &l.Workspace, &l.User, &created, &pullID); err != nil {
		return nil, 0, err
	}
	l.CreatedAt = fromTS(created)
	return &l, pullID, nil
}

func locksWhere(ctx context.Context, q querier, where string, args ...any) ([]*atoll.Lock, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+lockColumns+lockFrom+`WHERE `+where+` ORDER BY l.id`, args...)
	return collect(rows, err, "locks", func(s scanner) (*atoll.Lock, error) {
		l, _, err := scanLock(s)
		return l, err
	})
}

// TakeLock locks project for pull. It returns the lock held by another pull
// request when there is one (and takes nothing), else nil.
func (tx *Tx) TakeLock(projectID, pullID int64, user string) (*atoll.Lock, error) {
	l, holder, err := scanLock(tx.queryRow(`SELECT `+lockColumns+lockFrom+`WHERE l.project_id = ?`, projectID))
	switch {
	case err == nil && holder != pullID:
		return l, nil
	case err == nil:
		return nil, nil
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("store lock project %d: %w", projectID, err)
	}
	if _, err := tx.exec(`INSERT INTO locks (project_id, pull_id, user, created_at) VALUES (?, ?, ?, ?)`, projectID, pullID, user, ts(tx.now)); err != nil {
		return nil, fmt.Errorf("store lock project %d: %w", projectID, err)
	}
	return nil, nil
}

// DeleteLock removes one lock and discards the holder's unapplied plan for
// that project (it could otherwise be applied over someone else's).
func (tx *Tx) DeleteLock(id int64) (*atoll.Lock, error) {
	l, pullID, err := scanLock(tx.queryRow(`SELECT `+lockColumns+lockFrom+`WHERE l.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Lock %d not found.", id)
	} else if err != nil {
		return nil, fmt.Errorf("store lock %d: %w", id, err)
	}
	if _, err := tx.exec(`UPDATE plans SET discarded_at = ? WHERE pull_id = ? AND project_id = (SELECT project_id FROM locks WHERE id = ?)
		AND applied_at IS NULL AND discarded_at IS NULL`, ts(tx.now), pullID, id); err != nil {
		return nil, fmt.Errorf("store discard plan of lock %d: %w", id, err)
	}
	if _, err := tx.exec(`DELETE FROM locks WHERE id = ?`, id); err != nil {
		return nil, fmt.Errorf("store delete lock %d: %w", id, err)
	}
	return l, nil
}

// DeletePullLocks removes every lock a pull request holds and returns them.
func (tx *Tx) DeletePullLocks(pullID int64) ([]*atoll.Lock, error) {
	locks, err := locksWhere(tx.ctx, tx.tx, `l.pull_id = ?`, pullID)
	if err != nil {
		return nil, err
	}
	if _, err := tx.exec(`DELETE FROM locks WHERE pull_id = ?`, pullID); err != nil {
		return nil, fmt.Errorf("store delete locks of pull %d: %w", pullID, err)
	}
	return locks, nil
}

// Locks lists all locks, oldest first.
func (db *DB) Locks(ctx context.Context) ([]*atoll.Lock, error) {
	return locksWhere(ctx, db.read, `1=1`)
}

// PullLocks lists the locks a pull request holds.
func (db *DB) PullLocks(ctx context.Context, pullID int64) ([]*atoll.Lock, error) {
	return locksWhere(ctx, db.read, `l.pull_id = ?`, pullID)
}
