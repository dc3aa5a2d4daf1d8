package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

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
	l.CreatedAt, l.PullID = fromTS(created), pullID
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
	tx.notifyPull(atoll.TopicLock, pullID, 0)
	return nil, nil
}

// TakeLocks locks every claimed project for pull, or none: when another
// pull request holds any of them, it takes nothing and returns the holders
// by project id. Locks the pull request already holds count as taken.
func (tx *Tx) TakeLocks(pullID int64, user string, claims []atoll.LockClaim) (map[int64]*atoll.Lock, error) {
	holders := map[int64]*atoll.Lock{}
	held := map[int64]bool{}
	for _, c := range claims {
		l, holder, err := scanLock(tx.queryRow(`SELECT `+lockColumns+lockFrom+`WHERE l.project_id = ?`, c.ProjectID))
		switch {
		case err == nil && holder != pullID:
			holders[c.ProjectID] = l
		case err == nil:
			held[c.ProjectID] = true
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("store lock project %d: %w", c.ProjectID, err)
		}
	}
	if len(holders) > 0 {
		return holders, nil
	}
	for i, c := range claims {
		if held[c.ProjectID] {
			continue
		}
		held[c.ProjectID] = true // a project claimed twice is locked once
		if _, err := tx.exec(`INSERT INTO locks (project_id, pull_id, user, created_at) VALUES (?, ?, ?, ?)`, c.ProjectID, pullID, user, ts(tx.now)); err != nil {
			return nil, fmt.Errorf("store lock project %d: %w", c.ProjectID, err)
		}
		claims[i].Taken = true
	}
	tx.notifyPull(atoll.TopicLock, pullID, 0)
	return nil, nil
}

// ReleaseLocks is the one way to release locks. It deletes the selected
// locks, discards their holders' unapplied plans for those projects (for a
// whole pull request: all its unapplied plans), since a plan must never be
// applied without its lock, and records one audit event by actor (from
// source: an address, "pr-comment", ...) with action and reason. It returns
// the released locks.
func (tx *Tx) ReleaseLocks(sel atoll.LockSelector, actor, source, action, reason string) ([]*atoll.Lock, error) {
	if (sel.PullID == 0) == (sel.LockID == 0) || (sel.ProjectID != 0 && sel.PullID == 0) {
		return nil, fmt.Errorf("store release locks: select a pull request or a lock, not %+v", sel)
	}
	if sel.ProjectID != 0 {
		err := tx.queryRow(`SELECT id FROM locks WHERE project_id = ? AND pull_id = ?`, sel.ProjectID, sel.PullID).Scan(&sel.LockID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, nil
		} else if err != nil {
			return nil, fmt.Errorf("store lock of project %d: %w", sel.ProjectID, err)
		}
		sel.PullID = 0
	}
	var ev atoll.Event
	var locks []*atoll.Lock
	if sel.PullID != 0 {
		pull, err := tx.Pull(sel.PullID)
		if err != nil {
			return nil, err
		}
		ev.Repo, ev.Pull = pull.Repo, pull.Number
		if locks, err = locksWhere(tx.ctx, tx.tx, `l.pull_id = ?`, sel.PullID); err != nil {
			return nil, err
		}
		if !sel.KeepPlans {
			if err := tx.DiscardPlans(sel.PullID); err != nil {
				return nil, err
			}
		}
		if _, err := tx.exec(`DELETE FROM locks WHERE pull_id = ?`, sel.PullID); err != nil {
			return nil, fmt.Errorf("store delete locks of pull %d: %w", sel.PullID, err)
		}
	} else {
		l, pullID, err := scanLock(tx.queryRow(`SELECT `+lockColumns+lockFrom+`WHERE l.id = ?`, sel.LockID))
		if errors.Is(err, sql.ErrNoRows) {
			return nil, atoll.Errorf(atoll.ENOTFOUND, "Lock %d not found.", sel.LockID)
		} else if err != nil {
			return nil, fmt.Errorf("store lock %d: %w", sel.LockID, err)
		}
		ev.Repo, ev.Pull, locks = l.Repo, l.Pull, []*atoll.Lock{l}
		if _, err := tx.exec(`UPDATE plans SET discarded_at = ? WHERE pull_id = ? AND project_id = (SELECT project_id FROM locks WHERE id = ?)
			AND applied_at IS NULL AND discarded_at IS NULL AND ? = 0`, ts(tx.now), pullID, sel.LockID, sel.KeepPlans); err != nil {
			return nil, fmt.Errorf("store discard plan of lock %d: %w", sel.LockID, err)
		}
		if _, err := tx.exec(`DELETE FROM locks WHERE id = ?`, sel.LockID); err != nil {
			return nil, fmt.Errorf("store delete lock %d: %w", sel.LockID, err)
		}
	}
	ev.Actor, ev.Source, ev.Action, ev.Detail = actor, source, action, releaseDetail(reason, locks)
	if err := tx.AddEvent(ev); err != nil {
		return nil, err
	}
	if len(locks) > 0 {
		// Their pull request's unapplied plans for them went too.
		tx.Notify(atoll.Change{Topic: atoll.TopicLock, Repo: ev.Repo, Pull: ev.Pull})
		tx.Notify(atoll.Change{Topic: atoll.TopicPlan, Repo: ev.Repo, Pull: ev.Pull})
	}
	return locks, nil
}

// releaseDetail is the audit detail of a release: why, and what.
func releaseDetail(reason string, locks []*atoll.Lock) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: released %d lock(s)", reason, len(locks))
	for i, l := range locks {
		sep := ", "
		if i == 0 {
			sep = ": "
		}
		fmt.Fprintf(&b, "%sdir %s workspace %s", sep, l.Dir, l.Workspace)
	}
	return b.String()
}

// Locks lists all locks, oldest first.
func (db *DB) Locks(ctx context.Context) ([]*atoll.Lock, error) {
	return locksWhere(ctx, db.reader(), `1=1`)
}

// PullLocks lists the locks a pull request holds.
func (db *DB) PullLocks(ctx context.Context, pullID int64) ([]*atoll.Lock, error) {
	return locksWhere(ctx, db.reader(), `l.pull_id = ?`, pullID)
}

// FilteredLocks lists the locks matching f, oldest first (by id: a lock's
// id grows with the time it was taken).
func (db *DB) FilteredLocks(ctx context.Context, f atoll.LockFilter) ([]*atoll.Lock, error) {
	where := []string{"1=1"}
	var args []any
	if f.Repo != "" {
		owner, name, ok := splitFullName(f.Repo)
		if !ok {
			return nil, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name.")
		}
		where = append(where, `r.owner = ? COLLATE NOCASE AND r.name = ? COLLATE NOCASE`)
		args = append(args, owner, name)
	}
	if f.Pull != 0 {
		where = append(where, `p.number = ?`)
		args = append(args, f.Pull)
	}
	if f.User != "" {
		where = append(where, `l.user = ?`)
		args = append(args, f.User)
	}
	if !f.OlderThan.IsZero() {
		where = append(where, `l.created_at < ?`)
		args = append(args, ts(f.OlderThan))
	}
	if f.After != 0 {
		where = append(where, `l.id > ?`)
		args = append(args, f.After)
	}
	limit := ""
	if f.Limit > 0 {
		limit = ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := db.reader().QueryContext(ctx, `SELECT `+lockColumns+lockFrom+`WHERE `+strings.Join(where, " AND ")+` ORDER BY l.id`+limit, args...)
	return collect(rows, err, "locks", func(s scanner) (*atoll.Lock, error) {
		l, _, err := scanLock(s)
		return l, err
	})
}

// LocksByID returns the locks among ids that exist, oldest first.
func (db *DB) LocksByID(ctx context.Context, ids []int64) ([]*atoll.Lock, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	return locksWhere(ctx, db.reader(), `l.id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`, anys(ids)...)
}

// LockCount is the number of locks held.
func (db *DB) LockCount(ctx context.Context) (int, error) {
	var n int
	if err := db.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM locks`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store lock count: %w", err)
	}
	return n, nil
}

// ReleaseLock releases lock id (ENOTFOUND if it is not held) as actor
// from source, through ReleaseLocks (its plan discarded, one audit event
// "lock.delete" with reason), in a transaction of its own.
func (db *DB) ReleaseLock(ctx context.Context, id int64, actor, source, reason string) ([]*atoll.Lock, error) {
	var locks []*atoll.Lock
	err := db.Update(ctx, func(tx *Tx) (err error) {
		locks, err = tx.ReleaseLocks(atoll.LockSelector{LockID: id}, actor, source, "lock.delete", reason)
		return err
	})
	if err != nil {
		return nil, err
	}
	return locks, nil
}

// ReleaseLocksByID releases, in one transaction, every lock of ids still
// held, as ReleaseLock does each; the ids no longer held are returned in
// missing, not as an error.
func (db *DB) ReleaseLocksByID(ctx context.Context, ids []int64, actor, source, reason string) (released []*atoll.Lock, missing []int64, err error) {
	err = db.Update(ctx, func(tx *Tx) error {
		released, missing = nil, nil // Update may run this more than once
		for _, id := range ids {
			locks, err := tx.ReleaseLocks(atoll.LockSelector{LockID: id}, actor, source, "lock.delete", reason)
			if atoll.ErrorCode(err) == atoll.ENOTFOUND {
				missing = append(missing, id)
				continue
			} else if err != nil {
				return err
			}
			released = append(released, locks...)
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return released, missing, nil
}
