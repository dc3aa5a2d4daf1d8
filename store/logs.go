package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// AppendLogs stores a batch of log lines in one write. Seq must be set by the
// caller and increase per job.
func (db *DB) AppendLogs(ctx context.Context, lines []atoll.LogLine) error {
	if len(lines) == 0 {
		return nil
	}
	return db.Update(ctx, func(tx *Tx) error { return tx.AppendLogs(lines) })
}

// AppendLogs stores log lines in the caller's transaction.
func (tx *Tx) AppendLogs(lines []atoll.LogLine) error {
	// One multi-row INSERT per chunk keeps the per-line cost low for chatty
	// jobs; 200 rows × 5 params stays under SQLite's limit.
	for start := 0; start < len(lines); start += 200 {
		chunk := lines[start:min(start+200, len(lines))]
		var sb strings.Builder
		sb.WriteString(`INSERT INTO log_lines (job_id, seq, stream, time, text) VALUES `)
		args := make([]any, 0, len(chunk)*5)
		for i, l := range chunk {
			if i > 0 {
				sb.WriteString(",")
			}
			sb.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, l.JobID, l.Seq, l.Stream, ts(l.Time), l.Text)
		}
		if _, err := tx.exec(sb.String(), args...); err != nil {
			return fmt.Errorf("store append %d log lines: %w", len(chunk), err)
		}
	}
	return nil
}

// Logs returns a job's lines with seq >= from, at most limit (0: all).
func (db *DB) Logs(ctx context.Context, jobID, from int64, limit int) ([]atoll.LogLine, error) {
	if limit <= 0 {
		limit = -1
	}
	rows, err := db.reader().QueryContext(ctx, `SELECT job_id, seq, stream, time, text FROM log_lines
		WHERE job_id = ? AND seq >= ? ORDER BY seq LIMIT ?`, jobID, from, limit)
	if err != nil {
		return nil, fmt.Errorf("store logs of job %d: %w", jobID, err)
	}
	defer rows.Close()
	var out []atoll.LogLine
	for rows.Next() {
		var l atoll.LogLine
		var t int64
		if err := rows.Scan(&l.JobID, &l.Seq, &l.Stream, &t, &l.Text); err != nil {
			return nil, fmt.Errorf("store logs of job %d: %w", jobID, err)
		}
		l.Time = fromTS(t)
		out = append(out, l)
	}
	return out, rows.Err()
}

// LastLogSeq returns the highest seq stored for a job, or 0.
func (db *DB) LastLogSeq(ctx context.Context, jobID int64) (int64, error) {
	var n int64
	if err := db.reader().QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM log_lines WHERE job_id = ?`, jobID).Scan(&n); err != nil {
		return 0, fmt.Errorf("store last log seq of job %d: %w", jobID, err)
	}
	return n, nil
}
