package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

// UpsertRepo records r (keyed by VCS, host, owner and name) and returns its id.
func (tx *Tx) UpsertRepo(r atoll.Repo) (int64, error) {
	var id int64
	err := tx.queryRow(`
		INSERT INTO repos (vcs, host, owner, name, clone_url, html_url, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (vcs, host, owner, name) DO UPDATE SET
			clone_url = CASE WHEN excluded.clone_url <> '' THEN excluded.clone_url ELSE clone_url END,
			html_url = CASE WHEN excluded.html_url <> '' THEN excluded.html_url ELSE html_url END
		RETURNING id`,
		r.VCS, r.Host, r.Owner, r.Name, r.CloneURL, r.HTMLURL, ts(tx.now)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store upsert repo %s: %w", r.FullName(), err)
	}
	return id, nil
}

const repoColumns = `r.id, r.vcs, r.host, r.owner, r.name, r.clone_url, r.html_url, r.created_at`

func scanRepo(s scanner) (*atoll.Repo, error) {
	var r atoll.Repo
	var created int64
	if err := s.Scan(&r.ID, &r.VCS, &r.Host, &r.Owner, &r.Name, &r.CloneURL, &r.HTMLURL, &created); err != nil {
		return nil, err
	}
	r.CreatedAt = fromTS(created)
	return &r, nil
}

// Repo returns the repository with the given id.
func (db *DB) Repo(ctx context.Context, id int64) (*atoll.Repo, error) {
	r, err := scanRepo(db.reader().QueryRowContext(ctx, `SELECT `+repoColumns+` FROM repos r WHERE r.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Repository not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store repo %d: %w", id, err)
	}
	return r, nil
}

// RepoByName returns the repository owner/name (of any VCS; the first one),
// matched case-insensitively as GitHub does.
func (db *DB) RepoByName(ctx context.Context, fullName string) (*atoll.Repo, error) {
	owner, name, ok := splitFullName(fullName)
	if !ok {
		return nil, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name.")
	}
	r, err := scanRepo(db.reader().QueryRowContext(ctx, `SELECT `+repoColumns+` FROM repos r WHERE r.owner = ? COLLATE NOCASE AND r.name = ? COLLATE NOCASE ORDER BY r.id LIMIT 1`, owner, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Repository %s not found.", fullName)
	} else if err != nil {
		return nil, fmt.Errorf("store repo %s: %w", fullName, err)
	}
	return r, nil
}

// Repos lists the repositories Atoll knows, oldest first.
func (db *DB) Repos(ctx context.Context) ([]*atoll.Repo, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+repoColumns+` FROM repos r ORDER BY r.id`)
	return collect(rows, err, "repos", scanRepo)
}
