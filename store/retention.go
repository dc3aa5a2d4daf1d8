package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Retention says how long each kind of history is kept. A zero window keeps
// that kind forever.
type Retention struct {
	// LogLines: the log of a job, counted from when the job finished. The
	// logs of queued and running jobs are never pruned.
	LogLines time.Duration
	// Webhooks: the record of a received webhook. Duplicate deliveries are
	// recognised only while their first delivery's record is kept.
	Webhooks time.Duration
	// Notifications: a sent or given-up apply notification (the outbox),
	// counted from when it was queued; pending ones are never pruned.
	// `atoll server` keeps them as long as webhooks (--retain-webhooks).
	Notifications time.Duration
	// Events: audit events.
	Events time.Duration
	// PlanFiles: the bytes (plan file and `show -json` output) of a plan,
	// counted from when it was applied or discarded. A pending plan is never
	// pruned; the plan's row, hash, summary and times are always kept.
	PlanFiles time.Duration
	// BatchSize bounds the rows one transaction changes (0:
	// DefaultPruneBatch), so that the writer, and with it webhook intake,
	// is never held for long.
	BatchSize int
}

// DefaultRetention is what `atoll server` keeps unless told otherwise.
var DefaultRetention = Retention{
	LogLines:      90 * 24 * time.Hour,
	Webhooks:      30 * 24 * time.Hour,
	Notifications: 30 * 24 * time.Hour,
	Events:        365 * 24 * time.Hour,
	PlanFiles:     30 * 24 * time.Hour,
}

// DefaultPruneBatch is the default Retention.BatchSize.
const DefaultPruneBatch = 500

// PruneResult counts what one Prune removed.
type PruneResult struct {
	LogLines  int64 // log lines deleted
	Webhooks  int64 // webhook records deleted
	Events    int64 // audit events deleted
	PlanFiles int64 // plans whose bytes were dropped
	// Notifications are sent or given-up notifications deleted.
	Notifications int64
	// Vacuumed is the number of free pages returned to the file system
	// (only when the database has auto_vacuum=INCREMENTAL).
	Vacuumed int64
	// Batches is the number of write transactions used; Longest is the
	// longest of them and Writing their sum, as Prune waited for them
	// (commit included).
	Batches int
	Longest time.Duration
	Writing time.Duration
}

// Total is the number of rows Prune deleted or emptied.
func (r PruneResult) Total() int64 {
	return r.LogLines + r.Webhooks + r.Events + r.PlanFiles + r.Notifications
}

// Prune removes what p no longer keeps, one small transaction at a time,
// oldest first, pausing between transactions. Cutoffs are taken once, from
// db.Now, when it starts. It stops between batches when ctx ends and returns
// what it did so far.
func (db *DB) Prune(ctx context.Context, p Retention) (PruneResult, error) {
	var res PruneResult
	limit := p.BatchSize
	if limit <= 0 {
		limit = DefaultPruneBatch
	}
	now := db.Now()
	kinds := []struct {
		what   string
		window time.Duration
		count  *int64
		batch  func(tx *Tx, cutoff int64, limit int) (n int64, more bool, err error)
	}{
		{"log lines", p.LogLines, &res.LogLines, (*Tx).pruneLogBatch},
		{"webhooks", p.Webhooks, &res.Webhooks, deleteOlder(`webhooks`, `received_at`)},
		{"events", p.Events, &res.Events, deleteOlder(`events`, `time`)},
		{"plan files", p.PlanFiles, &res.PlanFiles, (*Tx).prunePlanBatch},
		{"notifications", p.Notifications, &res.Notifications, pruneNotificationBatch},
	}
	for _, k := range kinds {
		if k.window <= 0 {
			continue // kept forever
		}
		cutoff := ts(now.Add(-k.window))
		for more := true; more; {
			if err := ctx.Err(); err != nil {
				return res, err
			}
			var n int64
			took, err := db.timedUpdate(ctx, &res, func(tx *Tx) (err error) {
				n, more, err = k.batch(tx, cutoff, limit)
				return err
			})
			if err != nil {
				return res, fmt.Errorf("store prune %s: %w", k.what, err)
			}
			*k.count += n
			if more {
				pause(ctx, took)
			}
		}
	}
	if res.Total() > 0 {
		if err := db.incrementalVacuum(ctx, &res, limit); err != nil {
			return res, err
		}
	}
	return res, nil
}

// timedUpdate is Update, counted in res; it returns how long it took.
func (db *DB) timedUpdate(ctx context.Context, res *PruneResult, fn func(*Tx) error) (time.Duration, error) {
	start := time.Now()
	err := db.Update(ctx, fn)
	took := time.Since(start)
	res.Batches++
	res.Longest = max(res.Longest, took)
	res.Writing += took
	return took, err
}

// pause leaves the writer to others for as long as the last batch took:
// pruning is never urgent, so webhook intake waits for at most one batch at
// a time, and only about half the time.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// deleteOlder returns a batch that deletes the oldest rows of table whose
// column is before the cutoff. The column must be indexed.
func deleteOlder(table, column string) func(*Tx, int64, int) (int64, bool, error) {
	query := `DELETE FROM ` + table + ` WHERE id IN (SELECT id FROM ` + table + ` WHERE ` + column + ` < ? ORDER BY ` + column + ` LIMIT ?)`
	return func(tx *Tx, cutoff int64, limit int) (int64, bool, error) {
		res, err := tx.exec(query, cutoff, limit)
		if err != nil {
			return 0, false, err
		}
		n, err := res.RowsAffected()
		return n, n == int64(limit), err
	}
}

// pruneNotificationBatch deletes the oldest notifications queued before
// the cutoff that were sent or given up. Ids grow with created_at, so the
// scan in id order starts at the oldest and stops after limit of them.
func pruneNotificationBatch(tx *Tx, cutoff int64, limit int) (int64, bool, error) {
	res, err := tx.exec(`DELETE FROM notifications WHERE id IN (SELECT id FROM notifications
		WHERE created_at < ? AND (sent_at IS NOT NULL OR failed_at IS NOT NULL) ORDER BY id LIMIT ?)`, cutoff, limit)
	if err != nil {
		return 0, false, err
	}
	n, err := res.RowsAffected()
	return n, n == int64(limit), err
}

// pruneLogBatch deletes up to limit log lines of the jobs that finished
// longest ago, job by job. A job whose log is gone is marked, so that no
// later batch looks at it again; a mark counts towards limit like a line.
// Only final jobs have finished_at; the state test guards the logs of live
// jobs even so.
func (tx *Tx) pruneLogBatch(cutoff int64, limit int) (deleted int64, more bool, err error) {
	for budget := int64(limit); ; {
		if budget <= 0 {
			return deleted, true, nil
		}
		var job int64
		err := tx.queryRow(`SELECT id FROM jobs WHERE logs_pruned_at IS NULL AND finished_at IS NOT NULL AND finished_at < ?
			AND state NOT IN ('queued', 'running') ORDER BY finished_at LIMIT 1`, cutoff).Scan(&job)
		if errors.Is(err, sql.ErrNoRows) {
			return deleted, false, nil
		} else if err != nil {
			return deleted, false, err
		}
		res, err := tx.exec(`DELETE FROM log_lines WHERE job_id = ? AND seq IN (
			SELECT seq FROM log_lines WHERE job_id = ? ORDER BY seq LIMIT ?)`, job, job, budget)
		if err != nil {
			return deleted, false, fmt.Errorf("job %d: %w", job, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return deleted, false, err
		}
		deleted, budget = deleted+n, budget-n
		if budget == 0 {
			continue // the job may have more lines: the next batch looks
		}
		if _, err := tx.exec(`UPDATE jobs SET logs_pruned_at = ? WHERE id = ?`, ts(tx.now), job); err != nil {
			return deleted, false, fmt.Errorf("job %d: %w", job, err)
		}
		budget--
	}
}

// PruneBatchBytes bounds the plan bytes one transaction drops (beyond a
// single plan): freeing a blob reads its whole overflow chain, so a batch of
// plans costs time in proportion to their size, not their number.
const PruneBatchBytes = 4 << 20

// prunePlanBatch empties the file and show -json output of up to limit plans
// applied or discarded before the cutoff, and at most PruneBatchBytes of
// them. The columns are NOT NULL (SQLite cannot relax that without
// rebuilding the table), so they become empty blobs and pruned_at records
// why.
func (tx *Tx) prunePlanBatch(cutoff int64, limit int) (int64, bool, error) {
	limit = min(limit, 1000) // the ids become parameters
	// length() of a blob is read from the record header, without loading it.
	rows, err := tx.query(`SELECT id, length(file) + length(show_json) FROM plans
		WHERE pruned_at IS NULL AND COALESCE(applied_at, discarded_at) < ?
		ORDER BY COALESCE(applied_at, discarded_at) LIMIT ?`, cutoff, limit)
	if err != nil {
		return 0, false, err
	}
	var ids []any
	var total int64
	full := false
	for rows.Next() {
		var id, size int64
		if err := rows.Scan(&id, &size); err != nil {
			rows.Close()
			return 0, false, err
		}
		if len(ids) > 0 && total+size > PruneBatchBytes {
			full = true
			break
		}
		ids, total = append(ids, id), total+size
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return 0, false, err
	}
	if len(ids) == 0 {
		return 0, false, nil
	}
	res, err := tx.exec(`UPDATE plans SET file = X'', show_json = X'', pruned_at = ? WHERE id IN (?`+strings.Repeat(`, ?`, len(ids)-1)+`)`,
		append([]any{ts(tx.now)}, ids...)...)
	if err != nil {
		return 0, false, err
	}
	n, err := res.RowsAffected()
	return n, full || len(ids) == limit, err
}

// incrementalVacuum returns free pages to the file system, limit pages per
// transaction, but only when the database was created with
// auto_vacuum=INCREMENTAL; Atoll does not set that. By default the pages a
// prune frees stay in the file and new rows reuse them: the file stops
// growing at its high-water mark, and nothing is rewritten. Shrinking it
// would move pages from the end of the file into the holes, and every moved
// page is another WAL frame for a replica to ship, to give back space the
// database will take again.
func (db *DB) incrementalVacuum(ctx context.Context, res *PruneResult, limit int) error {
	var mode int
	if err := db.reader().QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&mode); err != nil {
		return fmt.Errorf("store auto_vacuum: %w", err)
	}
	if mode != 2 { // 0 none, 1 full (SQLite vacuums at every commit), 2 incremental
		return nil
	}
	for left := int64(1); left > 0; {
		if err := ctx.Err(); err != nil {
			return err
		}
		var freed int64
		took, err := db.timedUpdate(ctx, res, func(tx *Tx) (err error) {
			freed, left, err = tx.vacuumPages(limit)
			return err
		})
		if err != nil {
			return fmt.Errorf("store incremental vacuum: %w", err)
		}
		res.Vacuumed += freed
		if freed == 0 {
			break
		}
		pause(ctx, took)
	}
	return nil
}

// vacuumPages runs one bounded incremental vacuum and reports the pages it
// freed and the free pages left.
func (tx *Tx) vacuumPages(limit int) (freed, left int64, err error) {
	var before int64
	if err := tx.queryRow(`PRAGMA freelist_count`).Scan(&before); err != nil {
		return 0, 0, err
	}
	// The pragma frees one page per step: read it to the end.
	rows, err := tx.query(fmt.Sprintf(`PRAGMA incremental_vacuum(%d)`, limit))
	if err != nil {
		return 0, 0, err
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		return 0, 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, 0, err
	}
	if err := tx.queryRow(`PRAGMA freelist_count`).Scan(&left); err != nil {
		return 0, 0, err
	}
	return before - left, left, nil
}
