package store

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/atollhq/atoll"
)

// The tables in this file back vcs/local: a pull request's conversation,
// commit statuses and approvals when there is no remote host.

// AddComment stores a comment and returns its id.
func (tx *Tx) AddComment(pullID int64, author, body string) (int64, error) {
	var id int64
	err := tx.queryRow(`INSERT INTO comments (pull_id, author, body, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id`,
		pullID, author, body, ts(tx.now), ts(tx.now)).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store add comment: %w", err)
	}
	tx.notifyPull(atoll.TopicPull, pullID, 0)
	return id, nil
}

// UpdateComment replaces a comment's body.
func (tx *Tx) UpdateComment(id int64, body string) error {
	if _, err := tx.exec(`UPDATE comments SET body = ?, updated_at = ? WHERE id = ?`, body, ts(tx.now), id); err != nil {
		return fmt.Errorf("store update comment %d: %w", id, err)
	}
	var pullID int64
	if err := tx.queryRow(`SELECT pull_id FROM comments WHERE id = ?`, id).Scan(&pullID); err == nil {
		tx.notifyPull(atoll.TopicPull, pullID, 0)
	}
	return nil
}

// HideComments hides the comments of pullID by author whose body contains
// marker, except those in keep.
func (tx *Tx) HideComments(pullID int64, author, marker string, keep ...int64) error {
	keepJSON, _ := json.Marshal(append([]int64{}, keep...))
	_, err := tx.exec(`UPDATE comments SET hidden = 1 WHERE pull_id = ? AND author = ? AND instr(body, ?) > 0
		AND id NOT IN (SELECT value FROM json_each(?))`, pullID, author, marker, string(keepJSON))
	if err != nil {
		return fmt.Errorf("store hide comments: %w", err)
	}
	tx.notifyPull(atoll.TopicPull, pullID, 0)
	return nil
}

// Comments lists a pull request's comments in order.
func (db *DB) Comments(ctx context.Context, pullID int64) ([]atoll.PullComment, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT id, author, body, hidden, created_at FROM comments WHERE pull_id = ? ORDER BY id`, pullID)
	if err != nil {
		return nil, fmt.Errorf("store comments: %w", err)
	}
	defer rows.Close()
	var out []atoll.PullComment
	for rows.Next() {
		var c atoll.PullComment
		var t int64
		if err := rows.Scan(&c.ID, &c.Author, &c.Body, &c.Hidden, &t); err != nil {
			return nil, fmt.Errorf("store comments: %w", err)
		}
		c.CreatedAt = fromTS(t)
		out = append(out, c)
	}
	return out, rows.Err()
}

// SetStatus creates or replaces the status context on sha.
func (tx *Tx) SetStatus(repoID int64, st atoll.CommitStatus) error {
	_, err := tx.exec(`INSERT INTO statuses (repo_id, sha, context, state, description, target_url, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo_id, sha, context) DO UPDATE SET state = excluded.state, description = excluded.description,
			target_url = excluded.target_url, updated_at = excluded.updated_at`,
		repoID, st.SHA, st.Context, st.State, st.Description, st.TargetURL, ts(tx.now))
	if err != nil {
		return fmt.Errorf("store set status %s: %w", st.Context, err)
	}
	var repo string
	if err := tx.queryRow(`SELECT owner || '/' || name FROM repos WHERE id = ?`, repoID).Scan(&repo); err == nil {
		tx.Notify(atoll.Change{Topic: atoll.TopicPull, Repo: repo})
	}
	return nil
}

// Statuses lists the statuses on sha of a repository.
func (db *DB) Statuses(ctx context.Context, repoID int64, sha string) ([]atoll.CommitStatus, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT sha, context, state, description, target_url FROM statuses WHERE repo_id = ? AND sha = ? ORDER BY context`, repoID, sha)
	if err != nil {
		return nil, fmt.Errorf("store statuses: %w", err)
	}
	defer rows.Close()
	var out []atoll.CommitStatus
	for rows.Next() {
		var s atoll.CommitStatus
		if err := rows.Scan(&s.SHA, &s.Context, &s.State, &s.Description, &s.TargetURL); err != nil {
			return nil, fmt.Errorf("store statuses: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// Approve records user's approval of a pull request.
func (tx *Tx) Approve(pullID int64, user string) error {
	if _, err := tx.exec(`INSERT OR IGNORE INTO approvals (pull_id, user, created_at) VALUES (?, ?, ?)`, pullID, user, ts(tx.now)); err != nil {
		return fmt.Errorf("store approve pull %d: %w", pullID, err)
	}
	tx.notifyPull(atoll.TopicPull, pullID, 0)
	return nil
}

// Approvers lists who approved a pull request.
func (db *DB) Approvers(ctx context.Context, pullID int64) ([]string, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT user FROM approvals WHERE pull_id = ? ORDER BY user`, pullID)
	if err != nil {
		return nil, fmt.Errorf("store approvers: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var u string
		if err := rows.Scan(&u); err != nil {
			return nil, fmt.Errorf("store approvers: %w", err)
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// AddComment stores a comment on a local repository's pull request in a
// transaction of its own (the dashboard posts it before the runner sees
// it) and returns its id.
func (db *DB) AddComment(ctx context.Context, pullID int64, author, body string) (int64, error) {
	var id int64
	err := db.Update(ctx, func(tx *Tx) (err error) {
		id, err = tx.AddComment(pullID, author, body)
		return err
	})
	return id, err
}

// UpdateComment is Tx.UpdateComment in a transaction of its own.
func (db *DB) UpdateComment(ctx context.Context, id int64, body string) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.UpdateComment(id, body) })
}

// HideComments is Tx.HideComments in a transaction of its own.
func (db *DB) HideComments(ctx context.Context, pullID int64, author, marker string, keep ...int64) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.HideComments(pullID, author, marker, keep...) })
}

// SetStatus is Tx.SetStatus in a transaction of its own.
func (db *DB) SetStatus(ctx context.Context, repoID int64, st atoll.CommitStatus) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.SetStatus(repoID, st) })
}

// MarkPullMerged marks a local repository's pull request merged, in a
// transaction of its own, once its merge commit is on the base branch.
func (db *DB) MarkPullMerged(ctx context.Context, pullID int64) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.SetPullState(pullID, atoll.PullMerged) })
}
