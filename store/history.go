package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
)

// DefaultHistoryPage is the number of jobs on a history page.
const DefaultHistoryPage = 50

// JobHistory returns one page of every job ever matching f, newest first.
// It pages by id (keyset: f.Before or f.After, never OFFSET), so a page
// deep in the history costs what the first one does, and jobs created
// while someone pages never shift a page.
func (db *DB) JobHistory(ctx context.Context, f atoll.JobFilter) (atoll.JobHistory, error) {
	limit := f.Limit
	if limit <= 0 || limit > 1000 {
		limit = DefaultHistoryPage
	}
	jobs, err := db.jobsPage(ctx, f, limit)
	if err != nil {
		return atoll.JobHistory{}, err
	}
	var h atoll.JobHistory
	more := len(jobs) > limit
	if f.After != 0 {
		if more {
			jobs = jobs[1:]
		}
		h.Newer = more
	} else {
		if more {
			jobs = jobs[:limit]
		}
		h.Older = more
	}
	h.Jobs = jobs
	// The other direction: is there anything past the cursor we came from?
	switch {
	case f.After != 0 && len(jobs) > 0:
		h.Older, err = db.jobsBeyond(ctx, f, jobs[len(jobs)-1].ID, false)
	case f.After != 0:
		h.Older, err = db.jobsBeyond(ctx, f, f.After+1, false)
	case f.Before != 0 && len(jobs) > 0:
		h.Newer, err = db.jobsBeyond(ctx, f, jobs[0].ID, true)
	case f.Before != 0:
		h.Newer, err = db.jobsBeyond(ctx, f, f.Before-1, true)
	}
	return h, err
}

// jobsBeyond reports whether a job matching f has an id above (newer) or
// below id.
func (db *DB) jobsBeyond(ctx context.Context, f atoll.JobFilter, id int64, newer bool) (bool, error) {
	f.Before, f.After = 0, 0
	if newer {
		f.After = id
	} else {
		f.Before = id
	}
	jobs, err := db.jobsPage(ctx, f, 0)
	return len(jobs) > 0, err
}

// jobsPage returns up to limit+1 jobs matching f, newest first; the extra
// one tells the caller there is more (it is the newest with f.After, the
// oldest otherwise).
func (db *DB) jobsPage(ctx context.Context, f atoll.JobFilter, limit int) ([]*atoll.Job, error) {
	where, args, err := db.jobFilterSQL(ctx, f)
	if err != nil {
		return nil, err
	}
	order := ` ORDER BY j.id DESC LIMIT ?`
	if f.After != 0 {
		order = ` ORDER BY j.id ASC LIMIT ?`
	}
	jobs, err := jobsWhere(ctx, db.reader(), where+order, append(args, limit+1)...)
	if err != nil {
		return nil, err
	}
	if f.After != 0 {
		slices.Reverse(jobs)
	}
	return jobs, nil
}

// jobFilterSQL is the WHERE clause (on jobFrom's aliases) of f. Each filter
// is written so that SQLite walks jobs in id order and stops at the page's
// end, never sorting what it found: one pull request or project is looked
// up first and walked in its index (jobs_pull, jobs_project), a user or
// state in theirs (jobs_user, jobs_state; 0008_log_search.sql), and the
// rest (a whole repository, kind, dates) are tested on the way down the
// primary key.
func (db *DB) jobFilterSQL(ctx context.Context, f atoll.JobFilter) (string, []any, error) {
	where := []string{"1=1"}
	var args []any
	if f.Before != 0 && f.After != 0 {
		return "", nil, atoll.Errorf(atoll.EINVALID, "Page either before or after a job, not both.")
	}
	var repos []int64 // of f.Repo
	if f.Repo != "" || f.Pull != 0 {
		q, qargs := `SELECT p.id, p.repo_id FROM pulls p JOIN repos r ON r.id = p.repo_id WHERE 1=1`, []any{}
		if f.Repo != "" {
			owner, name, ok := splitFullName(f.Repo)
			if !ok {
				return "", nil, atoll.Errorf(atoll.EINVALID, "Repository must be owner/name.")
			}
			q += ` AND r.owner = ? COLLATE NOCASE AND r.name = ? COLLATE NOCASE`
			qargs = append(qargs, owner, name)
		}
		if f.Pull != 0 {
			q += ` AND p.number = ?`
			qargs = append(qargs, f.Pull)
		}
		if f.Pull == 0 {
			// Every pull request of the repository: test its id.
			q = `SELECT 0, id FROM repos r WHERE r.owner = ? COLLATE NOCASE AND r.name = ? COLLATE NOCASE`
		}
		pulls, inRepos, err := idPairs(ctx, db.reader(), q, qargs...)
		if err != nil {
			return "", nil, fmt.Errorf("store job filter: %w", err)
		}
		if f.Repo != "" {
			repos = inRepos
		}
		switch {
		case len(inRepos) == 0:
			where = append(where, `0=1`)
		case f.Pull == 0:
			where = append(where, `+p.repo_id `+inList(len(inRepos))) // "+": not through jobs_pull, which would sort
			args = append(args, anys(inRepos)...)
		default:
			where = append(where, `j.pull_id `+inList(len(pulls)))
			args = append(args, anys(pulls)...)
		}
	}
	if f.Project != "" {
		q, qargs := `SELECT id, 0 FROM projects WHERE (name = ? OR dir = ?)`, []any{f.Project, f.Project}
		if len(repos) > 0 {
			q += ` AND repo_id ` + inList(len(repos))
			qargs = append(qargs, anys(repos)...)
		}
		projects, _, err := idPairs(ctx, db.reader(), q, qargs...)
		if err != nil {
			return "", nil, fmt.Errorf("store job filter: %w", err)
		}
		if len(projects) == 0 {
			where = append(where, `0=1`)
		} else {
			where = append(where, `j.project_id `+inList(len(projects)))
			args = append(args, anys(projects)...)
		}
	}
	if f.User != "" {
		where = append(where, `j.user = ?`)
		args = append(args, f.User)
	}
	if f.State != "" {
		where = append(where, `j.state = ?`)
		args = append(args, f.State)
	}
	if f.Kind != "" {
		where = append(where, `j.kind = ?`)
		args = append(args, f.Kind)
	}
	// A date range becomes an id range (ids grow with creation time): the
	// first job created at or after each bound is found through
	// jobs_created, and the walk stays in the primary key. The created_at
	// tests stay too ("+": not through the index, which would sort), so
	// nothing outside the range is ever shown; only a job created while the
	// clock had stepped back across a bound could be missed.
	const firstAt = `COALESCE((SELECT id FROM jobs WHERE created_at >= ? ORDER BY created_at LIMIT 1), 9223372036854775807)`
	if !f.From.IsZero() {
		where = append(where, `j.id >= `+firstAt, `+j.created_at >= ?`)
		args = append(args, ts(f.From), ts(f.From))
	}
	if !f.To.IsZero() {
		where = append(where, `j.id < `+firstAt, `+j.created_at < ?`)
		args = append(args, ts(f.To), ts(f.To))
	}
	if f.Before != 0 {
		where = append(where, `j.id < ?`)
		args = append(args, f.Before)
	}
	if f.After != 0 {
		where = append(where, `j.id > ?`)
		args = append(args, f.After)
	}
	return strings.Join(where, " AND "), args, nil
}

// ExplainJobHistory returns SQLite's query plan for the first page of f,
// one step a line (for tests and docs/performance.md).
func (db *DB) ExplainJobHistory(ctx context.Context, f atoll.JobFilter) (string, error) {
	where, args, err := db.jobFilterSQL(ctx, f)
	if err != nil {
		return "", err
	}
	return db.explain(ctx, `SELECT `+jobColumns+jobFrom+`WHERE `+where+` ORDER BY j.id DESC LIMIT 51`, args...)
}

func (db *DB) explain(ctx context.Context, query string, args ...any) (string, error) {
	rows, err := db.reader().QueryContext(ctx, `EXPLAIN QUERY PLAN `+query, args...)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			return "", err
		}
		b.WriteString(detail + "\n")
	}
	return b.String(), rows.Err()
}

// inList is "= ?" for one value (an index walk in id order) or "IN (?, ...)"
// for several (SQLite merges their ranges with a sort).
func inList(n int) string {
	if n == 1 {
		return `= ?`
	}
	return `IN (?` + strings.Repeat(`, ?`, n-1) + `)`
}

// idPairs reads a query of two integer columns, distinct values of each.
func idPairs(ctx context.Context, q querier, query string, args ...any) (a, b []int64, err error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var x, y int64
		if err := rows.Scan(&x, &y); err != nil {
			return nil, nil, err
		}
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
		if !slices.Contains(b, y) {
			b = append(b, y)
		}
	}
	return a, b, rows.Err()
}
