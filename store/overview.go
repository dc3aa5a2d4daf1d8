package store

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
)

// NewestLocks returns the newest limit locks, newest first, and how many
// there are: the overview shows a few of many.
func (db *DB) NewestLocks(ctx context.Context, limit int) ([]*atoll.Lock, int, error) {
	var n int
	if err := db.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM locks`).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("store count locks: %w", err)
	}
	rows, err := db.reader().QueryContext(ctx, `SELECT `+lockColumns+lockFrom+`ORDER BY l.id DESC LIMIT ?`, limit)
	locks, err := collect(rows, err, "newest locks", func(s scanner) (*atoll.Lock, error) {
		l, _, err := scanLock(s)
		return l, err
	})
	return locks, n, err
}

// NewestPulls returns the newest limit pull requests in state (by last
// update) and how many are in it. Drift targets are never among them.
func (db *DB) NewestPulls(ctx context.Context, state string, limit int) ([]*atoll.Pull, int, error) {
	if state == atoll.PullDrift {
		return nil, 0, nil
	}
	var n int
	if err := db.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM pulls WHERE state = ?`, state).Scan(&n); err != nil {
		return nil, 0, fmt.Errorf("store count pulls: %w", err)
	}
	rows, err := db.reader().QueryContext(ctx, `SELECT `+pullColumns+pullFrom+`WHERE p.state = ? ORDER BY p.updated_at DESC, p.id DESC LIMIT ?`, state, limit)
	pulls, err := collect(rows, err, "newest pulls", scanPull)
	return pulls, n, err
}

// FinishedJobs returns the newest limit jobs in a final state.
func (db *DB) FinishedJobs(ctx context.Context, limit int) ([]*atoll.Job, error) {
	return jobsWhere(ctx, db.reader(), `j.state NOT IN ('queued', 'running') ORDER BY j.id DESC LIMIT ?`, limit)
}

// LogWindow returns at most limit lines of a job's log from seq from, and
// how many stored lines come before and after them.
func (db *DB) LogWindow(ctx context.Context, jobID, from int64, limit int) (lines []atoll.LogLine, earlier, later int64, err error) {
	if lines, err = db.Logs(ctx, jobID, from, limit); err != nil {
		return nil, 0, 0, err
	}
	after := from - 1
	if len(lines) > 0 {
		after = lines[len(lines)-1].Seq
	}
	err = db.reader().QueryRowContext(ctx, `SELECT COALESCE(SUM(seq < ?), 0), COALESCE(SUM(seq > ?), 0) FROM log_lines WHERE job_id = ?`,
		from, after, jobID).Scan(&earlier, &later)
	if err != nil {
		return nil, 0, 0, fmt.Errorf("store log window of job %d: %w", jobID, err)
	}
	return lines, earlier, later, nil
}

// LogTail returns the last limit lines of a job's log and how many stored
// lines come before them, reading only those lines.
func (db *DB) LogTail(ctx context.Context, jobID int64, limit int) (lines []atoll.LogLine, earlier int64, err error) {
	var first, last int64
	err = db.reader().QueryRowContext(ctx, `SELECT COALESCE(MIN(seq), 0), COALESCE(MAX(seq), 0) FROM log_lines WHERE job_id = ?`, jobID).
		Scan(&first, &last)
	if err != nil {
		return nil, 0, fmt.Errorf("store log tail of job %d: %w", jobID, err)
	}
	if last == 0 {
		return nil, 0, nil
	}
	from := max(first, last-int64(limit)+1)
	if lines, err = db.Logs(ctx, jobID, from, limit); err != nil {
		return nil, 0, err
	}
	if from > first {
		// Seqs count from the job's first line; a pruned log has none.
		var n int64
		if err := db.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM log_lines WHERE job_id = ? AND seq < ?`, jobID, from).Scan(&n); err != nil {
			return nil, 0, fmt.Errorf("store log tail of job %d: %w", jobID, err)
		}
		earlier = n
	}
	return lines, earlier, nil
}
