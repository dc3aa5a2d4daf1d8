package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

// InsertJob queues j and sets its ID, state and creation time. j.PullID and
// j.ProjectID must be set.
func (tx *Tx) InsertJob(j *atoll.Job) error {
	spec, err := json.Marshal(j.Spec)
	if err != nil {
		return fmt.Errorf("store insert job: %w", err)
	}
	j.State, j.CreatedAt = atoll.JobQueued, tx.now
	var reqID any
	if j.RequestID != 0 {
		reqID = j.RequestID
	}
	err = tx.queryRow(`
		INSERT INTO jobs (request_id, pull_id, project_id, kind, state, head_sha, user, spec, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		reqID, j.PullID, j.ProjectID, j.Kind, j.State, j.HeadSHA, j.User, string(spec), ts(tx.now)).Scan(&j.ID)
	if err != nil {
		return fmt.Errorf("store insert job: %w", err)
	}
	tx.notifyPull(atoll.TopicJob, j.PullID, j.ID)
	return nil
}

// StartJob marks a queued job running.
func (tx *Tx) StartJob(id int64) error {
	res, err := tx.exec(`UPDATE jobs SET state = 'running', started_at = ?, attempt = attempt + 1 WHERE id = ? AND state = 'queued'`, ts(tx.now), id)
	if err != nil {
		return fmt.Errorf("store start job %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return atoll.Errorf(atoll.ECONFLICT, "Job %d is not queued.", id)
	}
	tx.notifyJob(id)
	return nil
}

// FinishJob records a job's final state, failure reason and summary.
func (tx *Tx) FinishJob(id int64, state, msg string, summary *atoll.Summary) error {
	var sum any
	if summary != nil {
		b, _ := json.Marshal(summary)
		sum = string(b)
	}
	_, err := tx.exec(`UPDATE jobs SET state = ?, error = ?, summary = COALESCE(?, summary), finished_at = ? WHERE id = ?`,
		state, msg, sum, ts(tx.now), id)
	if err != nil {
		return fmt.Errorf("store finish job %d: %w", id, err)
	}
	tx.notifyJob(id)
	return nil
}

// MarkJobsReported records that the final outcomes of jobs were told to
// their pull request.
func (tx *Tx) MarkJobsReported(ids []int64) error {
	for _, id := range ids {
		if _, err := tx.exec(`UPDATE jobs SET reported_at = ? WHERE id = ? AND reported_at IS NULL`, ts(tx.now), id); err != nil {
			return fmt.Errorf("store mark job %d reported: %w", id, err)
		}
	}
	return nil
}

const jobColumns = `j.id, j.kind, j.state, r.owner || '/' || r.name, p.number, pr.name, pr.dir, pr.workspace,
	j.head_sha, j.user, j.error, j.summary, j.spec, j.pull_id, j.project_id, COALESCE(j.request_id, 0), j.attempt,
	j.created_at, j.started_at, j.finished_at, j.reported_at IS NOT NULL`

const jobFrom = ` FROM jobs j JOIN pulls p ON p.id = j.pull_id JOIN repos r ON r.id = p.repo_id JOIN projects pr ON pr.id = j.project_id `

func scanJob(s scanner) (*atoll.Job, error) {
	var j atoll.Job
	var summary sql.NullString
	var spec string
	var created int64
	var started, finished sql.NullInt64
	err := s.Scan(&j.ID, &j.Kind, &j.State, &j.Repo, &j.Pull, &j.Project, &j.Dir, &j.Workspace,
		&j.HeadSHA, &j.User, &j.Error, &summary, &spec, &j.PullID, &j.ProjectID, &j.RequestID, &j.Attempt,
		&created, &started, &finished, &j.Reported)
	if err != nil {
		return nil, err
	}
	if summary.Valid {
		j.Summary = new(atoll.Summary)
		if err := json.Unmarshal([]byte(summary.String), j.Summary); err != nil {
			return nil, fmt.Errorf("job %d summary: %w", j.ID, err)
		}
	}
	if err := json.Unmarshal([]byte(spec), &j.Spec); err != nil {
		return nil, fmt.Errorf("job %d spec: %w", j.ID, err)
	}
	j.CreatedAt, j.StartedAt, j.FinishedAt = fromTS(created), fromNullTS(started), fromNullTS(finished)
	return &j, nil
}

func jobsWhere(ctx context.Context, q querier, where string, args ...any) ([]*atoll.Job, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+jobColumns+jobFrom+`WHERE `+where, args...)
	return collect(rows, err, "jobs", scanJob)
}

// Job returns one job.
func (db *DB) Job(ctx context.Context, id int64) (*atoll.Job, error) {
	j, err := scanJob(db.reader().QueryRowContext(ctx, `SELECT `+jobColumns+jobFrom+`WHERE j.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Job %d not found.", id)
	} else if err != nil {
		return nil, fmt.Errorf("store job %d: %w", id, err)
	}
	return j, nil
}

// Jobs lists jobs matching f, newest first (oldest first is never asked:
// f.After pages towards newer jobs but the result is still newest first).
func (db *DB) Jobs(ctx context.Context, f atoll.JobFilter) ([]*atoll.Job, error) {
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = 200
	}
	jobs, err := db.jobsPage(ctx, f, limit)
	if len(jobs) > limit {
		if f.After != 0 {
			jobs = jobs[len(jobs)-limit:]
		} else {
			jobs = jobs[:limit]
		}
	}
	return jobs, err
}

// RequestJobs lists a request's jobs in creation order.
func (db *DB) RequestJobs(ctx context.Context, requestID int64) ([]*atoll.Job, error) {
	return jobsWhere(ctx, db.reader(), `j.request_id = ? ORDER BY j.id`, requestID)
}

// PullJobs lists a pull request's jobs, newest first.
func (db *DB) PullJobs(ctx context.Context, pullID int64) ([]*atoll.Job, error) {
	return jobsWhere(ctx, db.reader(), `j.pull_id = ? ORDER BY j.id DESC`, pullID)
}

// JobCounts counts jobs by kind and state.
func (db *DB) JobCounts(ctx context.Context) ([]atoll.JobCount, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT kind, state, COUNT(*) FROM jobs GROUP BY kind, state ORDER BY kind, state`)
	if err != nil {
		return nil, fmt.Errorf("store job counts: %w", err)
	}
	defer rows.Close()
	var out []atoll.JobCount
	for rows.Next() {
		var c atoll.JobCount
		if err := rows.Scan(&c.Kind, &c.State, &c.N); err != nil {
			return nil, fmt.Errorf("store job counts: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}
