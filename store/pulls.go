package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// UpsertPull records the pull request's latest metadata and returns its id.
// Empty fields in p (comment webhooks carry little, not even the state) keep
// their stored value; a new pull request without a state is open.
func (tx *Tx) UpsertPull(repoID int64, p atoll.Pull) (int64, error) {
	var id int64
	err := tx.queryRow(`
		INSERT INTO pulls (repo_id, number, title, author, head_sha, head_ref, base_sha, base_ref, state, url, created_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, COALESCE(NULLIF(?, ''), 'open'), ?, ?, ?)
		ON CONFLICT (repo_id, number) DO UPDATE SET
			title    = CASE WHEN excluded.title    <> '' THEN excluded.title    ELSE title END,
			author   = CASE WHEN excluded.author   <> '' THEN excluded.author   ELSE author END,
			head_sha = CASE WHEN excluded.head_sha <> '' THEN excluded.head_sha ELSE head_sha END,
			head_ref = CASE WHEN excluded.head_ref <> '' THEN excluded.head_ref ELSE head_ref END,
			base_sha = CASE WHEN excluded.base_sha <> '' THEN excluded.base_sha ELSE base_sha END,
			base_ref = CASE WHEN excluded.base_ref <> '' THEN excluded.base_ref ELSE base_ref END,
			url      = CASE WHEN excluded.url      <> '' THEN excluded.url      ELSE url END,
			state    = CASE WHEN ? <> '' THEN excluded.state ELSE state END,
			updated_at = excluded.updated_at
		RETURNING id`,
		repoID, p.Number, p.Title, p.Author, p.HeadSHA, p.HeadRef, p.BaseSHA, p.BaseRef, p.State, p.URL,
		ts(tx.now), ts(tx.now), p.State).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store upsert pull %d: %w", p.Number, err)
	}
	tx.notifyPull(atoll.TopicPull, id, 0)
	return id, nil
}

const pullColumns = `p.id, p.repo_id, r.owner || '/' || r.name, p.number, p.title, p.author, p.head_sha, p.head_ref,
	p.base_sha, p.base_ref, p.state, p.url, p.created_at, p.updated_at`

const pullFrom = ` FROM pulls p JOIN repos r ON r.id = p.repo_id `

func scanPull(s scanner) (*atoll.Pull, error) {
	var p atoll.Pull
	var created, updated int64
	err := s.Scan(&p.ID, &p.RepoID, &p.Repo, &p.Number, &p.Title, &p.Author, &p.HeadSHA, &p.HeadRef,
		&p.BaseSHA, &p.BaseRef, &p.State, &p.URL, &created, &updated)
	if err != nil {
		return nil, err
	}
	p.CreatedAt, p.UpdatedAt = fromTS(created), fromTS(updated)
	return &p, nil
}

// Pull returns the pull request with the given id.
func (db *DB) Pull(ctx context.Context, id int64) (*atoll.Pull, error) {
	return pullWhere(ctx, db.reader(), `p.id = ?`, id)
}

// PullByNumber returns pull request number of repo owner/name (matched
// case-insensitively).
func (db *DB) PullByNumber(ctx context.Context, fullName string, number int) (*atoll.Pull, error) {
	owner, name, ok := splitFullName(fullName)
	if !ok {
		return nil, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name.")
	}
	return pullWhere(ctx, db.reader(), `r.owner = ? COLLATE NOCASE AND r.name = ? COLLATE NOCASE AND p.number = ?`, owner, name, number)
}

// Pull returns the pull request with the given id as seen in the transaction.
func (tx *Tx) Pull(id int64) (*atoll.Pull, error) {
	return pullWhere(tx.ctx, tx.tx, `p.id = ?`, id)
}

// SetPullState sets a pull request's state (e.g. when a VCS reports it merged).
func (tx *Tx) SetPullState(id int64, state string) error {
	if _, err := tx.exec(`UPDATE pulls SET state = ?, updated_at = ? WHERE id = ?`, state, ts(tx.now), id); err != nil {
		return fmt.Errorf("store set pull %d state: %w", id, err)
	}
	tx.notifyPull(atoll.TopicPull, id, 0)
	return nil
}

func pullWhere(ctx context.Context, q querier, where string, args ...any) (*atoll.Pull, error) {
	p, err := scanPull(q.QueryRowContext(ctx, `SELECT `+pullColumns+pullFrom+`WHERE `+where, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Pull request not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store pull: %w", err)
	}
	return p, nil
}

// Pulls lists pull requests, most recently updated first. Drift targets
// (state atoll.PullDrift) are no pull requests: never listed.
func (db *DB) Pulls(ctx context.Context, f atoll.PullFilter) ([]*atoll.Pull, error) {
	where := []string{`p.state <> '` + atoll.PullDrift + `'`}
	var args []any
	if f.Repo != "" {
		owner, name, ok := splitFullName(f.Repo)
		if !ok {
			return nil, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name.")
		}
		where = append(where, `r.owner = ? COLLATE NOCASE AND r.name = ? COLLATE NOCASE`)
		args = append(args, owner, name)
	}
	if f.State != "" {
		where = append(where, `p.state = ?`)
		args = append(args, f.State)
	}
	q := `SELECT ` + pullColumns + pullFrom + `WHERE ` + strings.Join(where, ` AND `)
	rows, err := db.reader().QueryContext(ctx, q+` ORDER BY p.updated_at DESC, p.id DESC LIMIT 500`, args...)
	return collect(rows, err, "pulls", scanPull)
}
