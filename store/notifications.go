package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
)

// InsertNotification queues n (ID, Attempts and times are set here) to be
// sent at once. It is called in the transaction that records the apply's
// final state, so that both are committed or neither is.
func (tx *Tx) InsertNotification(n atoll.Notification) (int64, error) {
	res, err := tx.exec(`INSERT INTO notifications (job_id, dest, kind, payload, created_at, next_attempt_at) VALUES (?, ?, ?, ?, ?, ?)`,
		n.JobID, n.Dest, n.Kind, string(n.Payload), ts(tx.now), ts(tx.now))
	if err != nil {
		return 0, fmt.Errorf("store insert notification of job %d: %w", n.JobID, err)
	}
	return res.LastInsertId()
}

// ClaimNotifications returns up to limit pending notifications whose next
// attempt is due, counting the attempt and putting the next one off by
// lease: a node that dies while sending leaves them to be sent again once
// the lease ends (at least once, never lost).
func (db *DB) ClaimNotifications(ctx context.Context, limit int, lease time.Duration) ([]atoll.Notification, error) {
	var out []atoll.Notification
	err := db.Update(ctx, func(tx *Tx) error {
		out = nil
		rows, err := tx.query(`SELECT id, job_id, dest, kind, payload, attempts, created_at, next_attempt_at, last_error FROM notifications
			WHERE sent_at IS NULL AND failed_at IS NULL AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`, ts(tx.now), limit)
		if err != nil {
			return fmt.Errorf("store claim notifications: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var n atoll.Notification
			var payload string
			var created, next int64
			if err := rows.Scan(&n.ID, &n.JobID, &n.Dest, &n.Kind, &payload, &n.Attempts, &created, &next, &n.LastError); err != nil {
				return fmt.Errorf("store claim notifications: %w", err)
			}
			n.Payload, n.CreatedAt, n.NextAt = []byte(payload), fromTS(created), fromTS(next)
			out = append(out, n)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("store claim notifications: %w", err)
		}
		rows.Close()
		for i := range out {
			out[i].Attempts++
			out[i].NextAt = tx.now.Add(lease)
			if _, err := tx.exec(`UPDATE notifications SET attempts = ?, next_attempt_at = ? WHERE id = ?`,
				out[i].Attempts, ts(out[i].NextAt), out[i].ID); err != nil {
				return fmt.Errorf("store claim notification %d: %w", out[i].ID, err)
			}
		}
		return nil
	})
	return out, err
}

// NotificationSent records that notification id was delivered.
func (db *DB) NotificationSent(ctx context.Context, id int64) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.exec(`UPDATE notifications SET sent_at = ?, last_error = '' WHERE id = ?`, ts(tx.now), id); err != nil {
			return fmt.Errorf("store notification %d sent: %w", id, err)
		}
		return nil
	})
}

// NotificationRetry records a failed attempt of notification id and when
// to try again. msg must hold no secret.
func (db *DB) NotificationRetry(ctx context.Context, id int64, next time.Time, msg string) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.exec(`UPDATE notifications SET next_attempt_at = ?, last_error = ? WHERE id = ?`, ts(next), msg, id); err != nil {
			return fmt.Errorf("store notification %d retry: %w", id, err)
		}
		return nil
	})
}

// NotificationFailed gives notification id up after its last failed
// attempt. msg must hold no secret.
func (db *DB) NotificationFailed(ctx context.Context, id int64, msg string) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.exec(`UPDATE notifications SET failed_at = ?, last_error = ? WHERE id = ?`, ts(tx.now), msg, id); err != nil {
			return fmt.Errorf("store notification %d failed: %w", id, err)
		}
		return nil
	})
}

// NotificationState is how a notification stands, for tests and operators.
type NotificationState struct {
	atoll.Notification
	Sent, Failed bool
}

// Notifications returns every notification of job jobID, oldest first.
func (db *DB) Notifications(ctx context.Context, jobID int64) ([]NotificationState, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT id, job_id, dest, kind, payload, attempts, created_at, next_attempt_at, last_error,
		sent_at IS NOT NULL, failed_at IS NOT NULL FROM notifications WHERE job_id = ? ORDER BY id`, jobID)
	if err != nil {
		return nil, fmt.Errorf("store notifications of job %d: %w", jobID, err)
	}
	defer rows.Close()
	var out []NotificationState
	for rows.Next() {
		var n NotificationState
		var payload string
		var created, next int64
		if err := rows.Scan(&n.ID, &n.JobID, &n.Dest, &n.Kind, &payload, &n.Attempts, &created, &next, &n.LastError, &n.Sent, &n.Failed); err != nil {
			return nil, fmt.Errorf("store notifications of job %d: %w", jobID, err)
		}
		n.Payload, n.CreatedAt, n.NextAt = []byte(payload), fromTS(created), fromTS(next)
		out = append(out, n)
	}
	return out, rows.Err()
}

// NextNotificationAt returns when the next pending notification is due;
// ok is false when none is pending. It only reads, so that an idle sender
// writes nothing.
func (db *DB) NextNotificationAt(ctx context.Context) (next time.Time, ok bool, err error) {
	var n sql.NullInt64
	err = db.reader().QueryRowContext(ctx, `SELECT MIN(next_attempt_at) FROM notifications WHERE sent_at IS NULL AND failed_at IS NULL`).Scan(&n)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("store next notification: %w", err)
	}
	if !n.Valid {
		return time.Time{}, false, nil
	}
	return fromTS(n.Int64), true, nil
}
