package store

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
)

// CancelQueued finishes the queued requests of a pull request that came
// before request before, with msg as their error, and cancels their queued
// jobs (a request put back in the queue by a restart may have some). It
// returns the canceled requests' comments, oldest first ("" for autoplans).
// Running requests are left alone.
func (tx *Tx) CancelQueued(pullID, before int64, msg string) ([]*atoll.Request, error) {
	rows, err := tx.query(`SELECT `+requestColumns+requestFrom+`WHERE q.pull_id = ? AND q.state = 'queued' AND q.id < ? ORDER BY q.id`, pullID, before)
	if err != nil {
		return nil, fmt.Errorf("store cancel queued of pull %d: %w", pullID, err)
	}
	var out []*atoll.Request
	for rows.Next() {
		q, err := scanRequest(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store cancel queued of pull %d: %w", pullID, err)
		}
		out = append(out, q)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store cancel queued of pull %d: %w", pullID, err)
	}
	for _, q := range out {
		if _, err := tx.exec(`UPDATE jobs SET state = ?, error = ?, finished_at = ? WHERE request_id = ? AND state = 'queued'`,
			atoll.JobCanceled, msg, ts(tx.now), q.ID); err != nil {
			return nil, fmt.Errorf("store cancel jobs of request %d: %w", q.ID, err)
		}
		if err := tx.FinishRequest(q.ID, atoll.RequestDone, msg); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// CanceledBy returns the requests of a pull request finished with msg, the
// mark CancelQueued left, oldest first.
func (db *DB) CanceledBy(ctx context.Context, pullID int64, msg string) ([]*atoll.Request, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+requestColumns+requestFrom+`WHERE q.pull_id = ? AND q.state = 'done' AND q.error = ? ORDER BY q.id`, pullID, msg)
	if err != nil {
		return nil, fmt.Errorf("store canceled requests of pull %d: %w", pullID, err)
	}
	defer rows.Close()
	var out []*atoll.Request
	for rows.Next() {
		q, err := scanRequest(rows)
		if err != nil {
			return nil, fmt.Errorf("store canceled requests of pull %d: %w", pullID, err)
		}
		out = append(out, q)
	}
	return out, rows.Err()
}

// CancelRequestJobs cancels the queued jobs of a request, with msg as their
// error: a canceled request's jobs that never started.
func (tx *Tx) CancelRequestJobs(requestID int64, msg string) error {
	res, err := tx.exec(`UPDATE jobs SET state = ?, error = ?, finished_at = ? WHERE request_id = ? AND state = 'queued'`,
		atoll.JobCanceled, msg, ts(tx.now), requestID)
	if err != nil {
		return fmt.Errorf("store cancel jobs of request %d: %w", requestID, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		tx.Notify(atoll.Change{Topic: atoll.TopicJob})
	}
	return nil
}
