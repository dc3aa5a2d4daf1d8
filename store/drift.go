package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// QueueDrift queues a drift check on the branch's drift target, made on
// first use, with its audit event.
func (db *DB) QueueDrift(ctx context.Context, c atoll.DriftCheck) (*atoll.Request, error) {
	if c.Branch == "" {
		return nil, atoll.Errorf(atoll.EINVALID, "A drift check needs a branch.")
	}
	if c.Apply && len(c.Projects) == 0 && len(c.Paths) == 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "A reconcile's apply names its projects.")
	}
	sel, err := json.Marshal(atoll.DriftSelection{Projects: c.Projects, Paths: c.Paths, PlanOnly: c.PlanOnly, Reconcile: c.Reconcile, Apply: c.Apply})
	if err != nil {
		return nil, fmt.Errorf("store queue drift: %w", err)
	}
	var req *atoll.Request
	err = db.Update(ctx, func(tx *Tx) error {
		repoID, err := tx.UpsertRepo(c.Repo)
		if err != nil {
			return err
		}
		pullID, err := tx.driftTarget(repoID, c.Branch)
		if err != nil {
			return err
		}
		req = &atoll.Request{PullID: pullID, Kind: atoll.RequestDrift, Comment: string(sel), User: c.User, Source: c.Source}
		if err := tx.InsertRequest(req); err != nil {
			return err
		}
		detail := "branch " + c.Branch
		if len(c.Projects) > 0 {
			detail += ", projects " + strings.Join(c.Projects, ", ")
		}
		for _, p := range c.Paths {
			detail += ", dir " + p.Dir
			if p.Workspace != "" {
				detail += " workspace " + p.Workspace
			}
		}
		if c.PlanOnly {
			detail += ", plan only"
		}
		action := "drift.check"
		switch {
		case c.Apply:
			action = "drift.apply"
		case c.Reconcile:
			action = "drift.reconcile"
		}
		return tx.AddEvent(atoll.Event{Actor: c.User, Action: action, Repo: c.Repo.FullName(), Detail: detail, Source: c.Source})
	})
	if err != nil {
		return nil, err
	}
	req.Repo = c.Repo.FullName()
	return req, nil
}

// driftTarget is the id of the repository's drift target for branch: a
// pulls row of state drift and the next free negative number.
func (tx *Tx) driftTarget(repoID int64, branch string) (int64, error) {
	var id int64
	err := tx.queryRow(`SELECT id FROM pulls WHERE repo_id = ? AND state = ? AND head_ref = ?`, repoID, atoll.PullDrift, branch).Scan(&id)
	if err == nil {
		return id, nil
	} else if !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("store drift target: %w", err)
	}
	var number int
	if err := tx.queryRow(`SELECT MIN(COALESCE(MIN(number), 0), 0) - 1 FROM pulls WHERE repo_id = ?`, repoID).Scan(&number); err != nil {
		return 0, fmt.Errorf("store drift target: %w", err)
	}
	return tx.UpsertPull(repoID, atoll.Pull{Number: number, Title: "Drift of " + branch, HeadRef: branch, BaseRef: branch, State: atoll.PullDrift})
}

// RecordDrift records a drift request's results.
func (db *DB) RecordDrift(ctx context.Context, requestID int64, results []atoll.DriftResult, notes []atoll.Notification) error {
	return db.Update(ctx, func(tx *Tx) error {
		var recorded bool
		if err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM drift_projects d JOIN jobs j ON j.id = d.job_id WHERE j.request_id = ?)`, requestID).Scan(&recorded); err != nil {
			return fmt.Errorf("store record drift: %w", err)
		}
		var branch, headSHA string
		err := tx.queryRow(`SELECT p.head_ref, p.head_sha FROM requests q JOIN pulls p ON p.id = q.pull_id WHERE q.id = ? AND q.kind = ?`,
			requestID, atoll.RequestDrift).Scan(&branch, &headSHA)
		if errors.Is(err, sql.ErrNoRows) {
			return atoll.Errorf(atoll.ENOTFOUND, "Drift request %d not found.", requestID)
		} else if err != nil {
			return fmt.Errorf("store record drift: %w", err)
		}
		for _, r := range results {
			// since stays while the state does; a result already recorded
			// (the same job) changes nothing.
			_, err := tx.exec(`INSERT INTO drift_projects (project_id, branch, state, since, checked_at, job_id, head_sha,
					to_add, to_change, to_destroy, to_import, to_forget, changed_outside, error)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
				ON CONFLICT (project_id, branch) DO UPDATE SET
					since = CASE WHEN drift_projects.state = excluded.state THEN drift_projects.since ELSE excluded.since END,
					state = excluded.state, checked_at = excluded.checked_at, job_id = excluded.job_id, head_sha = excluded.head_sha,
					to_add = excluded.to_add, to_change = excluded.to_change, to_destroy = excluded.to_destroy,
					to_import = excluded.to_import, to_forget = excluded.to_forget,
					changed_outside = excluded.changed_outside, error = excluded.error
				WHERE drift_projects.job_id <> excluded.job_id`,
				r.ProjectID, branch, r.State, ts(tx.now), ts(tx.now), r.JobID, headSHA,
				r.Add, r.Change, r.Destroy, r.Import, r.Forget, r.ChangedOutside, r.Error)
			if err != nil {
				return fmt.Errorf("store record drift of project %d: %w", r.ProjectID, err)
			}
			if _, err := tx.exec(`INSERT INTO drift_checks (project_id, branch, job_id, state, head_sha, to_add, to_change, to_destroy, changed_outside, error, checked_at)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING`,
				r.ProjectID, branch, r.JobID, r.State, headSHA, r.Add, r.Change, r.Destroy, r.ChangedOutside, r.Error, ts(tx.now)); err != nil {
				return fmt.Errorf("store record drift check of project %d: %w", r.ProjectID, err)
			}
		}
		if len(results) > 0 {
			repo, _ := tx.pullRefOfRequest(requestID)
			tx.Notify(atoll.Change{Topic: atoll.TopicDrift, Repo: repo})
		}
		if recorded {
			return nil // told already (a resumed request)
		}
		return tx.insertNotifications(notes)
	})
}

// DriftProjects lists the projects' drift states, each with the newest
// pending plan of its project on the branch's drift target (a reconcile
// waits for its approval and apply).
func (db *DB) DriftProjects(ctx context.Context, f atoll.DriftFilter) ([]*atoll.DriftProject, error) {
	q := `SELECT d.project_id, r.owner || '/' || r.name, pr.name, pr.dir, pr.workspace, d.branch, d.state, d.since, d.checked_at,
			d.job_id, COALESCE(j.request_id, 0), d.head_sha, d.to_add, d.to_change, d.to_destroy, d.to_import, d.to_forget, d.changed_outside, d.error,
			COALESCE(pl.id, 0), COALESCE(pl.sha256, '')
		FROM drift_projects d JOIN projects pr ON pr.id = d.project_id JOIN repos r ON r.id = pr.repo_id
		JOIN jobs j ON j.id = d.job_id
		LEFT JOIN pulls t ON t.repo_id = pr.repo_id AND t.state = '` + atoll.PullDrift + `' AND t.head_ref = d.branch
		LEFT JOIN plans pl ON pl.id = (SELECT MAX(id) FROM plans WHERE pull_id = t.id AND project_id = d.project_id
			AND applied_at IS NULL AND discarded_at IS NULL)
		WHERE 1 = 1`
	var args []any
	if f.Repo != "" {
		q, args = q+` AND r.owner || '/' || r.name = ?`, append(args, f.Repo)
	}
	if f.State != "" {
		q, args = q+` AND d.state = ?`, append(args, f.State)
	}
	if f.Branch != "" {
		q, args = q+` AND d.branch = ?`, append(args, f.Branch)
	}
	rows, err := db.reader().QueryContext(ctx, q+` ORDER BY r.owner, r.name, d.branch, pr.dir, pr.workspace, pr.name`, args...)
	return collect(rows, err, "drift projects", func(s scanner) (*atoll.DriftProject, error) {
		var d atoll.DriftProject
		var since, checked int64
		if err := s.Scan(&d.ProjectID, &d.Repo, &d.Project, &d.Dir, &d.Workspace, &d.Branch, &d.State, &since, &checked,
			&d.JobID, &d.RequestID, &d.HeadSHA, &d.Add, &d.Change, &d.Destroy, &d.Import, &d.Forget, &d.ChangedOutside, &d.Error,
			&d.PendingPlanID, &d.PendingPlanSHA256); err != nil {
			return nil, err
		}
		d.Since, d.CheckedAt = fromTS(since), fromTS(checked)
		return &d, nil
	})
}

// pullRefOfRequest is the repository and number of request id's pull.
func (tx *Tx) pullRefOfRequest(id int64) (string, int) {
	var pullID int64
	if err := tx.queryRow(`SELECT pull_id FROM requests WHERE id = ?`, id).Scan(&pullID); err != nil {
		return "", 0
	}
	return tx.pullRef(pullID)
}

// SyncDriftSchedules makes the stored schedules those given.
func (db *DB) SyncDriftSchedules(ctx context.Context, want []atoll.DriftSchedule, next atoll.NextFunc) error {
	return db.Update(ctx, func(tx *Tx) error {
		have, err := tx.driftSchedules()
		if err != nil {
			return err
		}
		type key struct {
			repo   int64
			branch string
		}
		old := map[key]*atoll.DriftSchedule{}
		for _, s := range have {
			old[key{s.RepoID, s.Branch}] = s
		}
		for _, s := range want {
			projects, err := json.Marshal(s.Projects)
			if err != nil {
				return fmt.Errorf("store drift schedule: %w", err)
			}
			k := key{s.RepoID, s.Branch}
			prev := old[k]
			delete(old, k)
			due := time.Time{}
			if prev != nil && prev.Schedule == s.Schedule {
				due = prev.NextDueAt
			} else if due, err = next(s.Schedule, tx.now); err != nil {
				return atoll.Errorf(atoll.EINVALID, "Drift schedule %q: %v", s.Schedule, err)
			}
			if prev != nil && prev.Schedule == s.Schedule && slices.Equal(prev.Projects, s.Projects) {
				continue // unchanged: nothing written (the active node syncs every tick)
			}
			if _, err := tx.exec(`INSERT INTO drift_schedules (repo_id, branch, schedule, projects, next_due_at) VALUES (?, ?, ?, ?, ?)
				ON CONFLICT (repo_id, branch) DO UPDATE SET schedule = excluded.schedule, projects = excluded.projects, next_due_at = excluded.next_due_at`,
				s.RepoID, s.Branch, s.Schedule, string(projects), ts(due)); err != nil {
				return fmt.Errorf("store drift schedule: %w", err)
			}
		}
		for k := range old {
			if _, err := tx.exec(`DELETE FROM drift_schedules WHERE repo_id = ? AND branch = ?`, k.repo, k.branch); err != nil {
				return fmt.Errorf("store drift schedule: %w", err)
			}
		}
		return nil
	})
}

// QueueDueDrift queues the checks due now and moves their schedules on.
func (db *DB) QueueDueDrift(ctx context.Context, next atoll.NextFunc) ([]*atoll.Request, error) {
	// Read first: most ticks find nothing due, and need no write.
	var due bool
	if err := db.reader().QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM drift_schedules WHERE next_due_at <= ?)`, ts(db.Clock())).Scan(&due); err != nil {
		return nil, fmt.Errorf("store due drift schedules: %w", err)
	} else if !due {
		return nil, nil
	}
	var out []*atoll.Request
	err := db.Update(ctx, func(tx *Tx) error {
		out = nil // fn may run again
		all, err := tx.driftSchedules()
		if err != nil {
			return err
		}
		for _, s := range all {
			if s.NextDueAt.After(tx.now) {
				continue
			}
			due, err := next(s.Schedule, tx.now)
			if err != nil {
				return atoll.Errorf(atoll.EINVALID, "Drift schedule %q: %v", s.Schedule, err)
			}
			if _, err := tx.exec(`UPDATE drift_schedules SET next_due_at = ? WHERE repo_id = ? AND branch = ?`, ts(due), s.RepoID, s.Branch); err != nil {
				return fmt.Errorf("store drift schedule: %w", err)
			}
			pullID, err := tx.driftTarget(s.RepoID, s.Branch)
			if err != nil {
				return err
			}
			var busy bool
			if err := tx.queryRow(`SELECT EXISTS (SELECT 1 FROM requests WHERE pull_id = ? AND kind = ? AND state IN ('queued', 'running'))`,
				pullID, atoll.RequestDrift).Scan(&busy); err != nil {
				return fmt.Errorf("store drift schedule: %w", err)
			}
			if busy {
				continue // the check still to run covers this slot
			}
			sel, err := json.Marshal(atoll.DriftSelection{Globs: s.Projects})
			if err != nil {
				return fmt.Errorf("store drift schedule: %w", err)
			}
			req := &atoll.Request{PullID: pullID, Kind: atoll.RequestDrift, Comment: string(sel), User: "atoll", Source: atoll.SourceAtoll}
			if err := tx.InsertRequest(req); err != nil {
				return err
			}
			repo, _ := tx.pullRef(pullID)
			req.Repo = repo
			if err := tx.AddEvent(atoll.Event{Actor: "atoll", Action: "drift.check", Repo: repo, Detail: "branch " + s.Branch + ", scheduled " + s.Schedule, Source: atoll.SourceAtoll}); err != nil {
				return err
			}
			out = append(out, req)
		}
		return nil
	})
	return out, err
}

// DriftSchedules lists the stored schedules.
func (db *DB) DriftSchedules(ctx context.Context) ([]*atoll.DriftSchedule, error) {
	rows, err := db.reader().QueryContext(ctx, driftSchedulesQuery)
	return collect(rows, err, "drift schedules", scanDriftSchedule)
}

const driftSchedulesQuery = `SELECT repo_id, branch, schedule, projects, next_due_at FROM drift_schedules ORDER BY repo_id, branch`

func scanDriftSchedule(s scanner) (*atoll.DriftSchedule, error) {
	var d atoll.DriftSchedule
	var projects string
	var due int64
	if err := s.Scan(&d.RepoID, &d.Branch, &d.Schedule, &projects, &due); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(projects), &d.Projects); err != nil {
		return nil, err
	}
	d.NextDueAt = fromTS(due)
	return &d, nil
}

func (tx *Tx) driftSchedules() ([]*atoll.DriftSchedule, error) {
	rows, err := tx.query(driftSchedulesQuery)
	return collect(rows, err, "drift schedules", scanDriftSchedule)
}

func (tx *Tx) insertNotifications(notes []atoll.Notification) error {
	for _, n := range notes {
		if _, err := tx.InsertNotification(n); err != nil {
			return err
		}
	}
	return nil
}

// AddDriftRemediation stores a remediation run.
func (db *DB) AddDriftRemediation(ctx context.Context, r atoll.DriftRemediation) error {
	if r.ID == "" || r.Repo == "" {
		return atoll.Errorf(atoll.EINVALID, "A drift remediation needs an id and a repository.")
	}
	var completed int64
	if !r.CompletedAt.IsZero() {
		completed = ts(r.CompletedAt)
	}
	return db.Update(ctx, func(tx *Tx) error {
		_, err := tx.exec(`INSERT INTO drift_remediations (id, repo, ref, action, status, started_at, completed_at, result)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, r.Repo, r.Ref, r.Action, r.Status, ts(r.StartedAt), completed, string(r.Result))
		if err != nil {
			return fmt.Errorf("store add drift remediation: %w", err)
		}
		return nil
	})
}

const remediationColumns = `id, repo, ref, action, status, started_at, completed_at, result`

func scanRemediation(s scanner) (*atoll.DriftRemediation, error) {
	var r atoll.DriftRemediation
	var started, completed int64
	var result string
	if err := s.Scan(&r.ID, &r.Repo, &r.Ref, &r.Action, &r.Status, &started, &completed, &result); err != nil {
		return nil, err
	}
	r.StartedAt, r.Result = fromTS(started), []byte(result)
	if completed != 0 {
		r.CompletedAt = fromTS(completed)
	}
	return &r, nil
}

// DriftRemediation returns remediation run id.
func (db *DB) DriftRemediation(ctx context.Context, id string) (*atoll.DriftRemediation, error) {
	r, err := scanRemediation(db.reader().QueryRowContext(ctx, `SELECT `+remediationColumns+` FROM drift_remediations WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Remediation %s not found.", id)
	} else if err != nil {
		return nil, fmt.Errorf("store drift remediation %s: %w", id, err)
	}
	return r, nil
}

// DriftRemediations lists repo's remediation runs, newest first.
func (db *DB) DriftRemediations(ctx context.Context, repo string, limit int) ([]*atoll.DriftRemediation, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+remediationColumns+` FROM drift_remediations WHERE repo = ?
		ORDER BY started_at DESC, rowid DESC LIMIT ?`, repo, limit)
	return collect(rows, err, "drift remediations", scanRemediation)
}

// DriftHistory lists a project's checks at branch, newest first.
func (db *DB) DriftHistory(ctx context.Context, projectID int64, branch string, limit int) ([]*atoll.DriftCheckRecord, error) {
	if limit <= 0 || limit > 1000 {
		limit = 50
	}
	rows, err := db.reader().QueryContext(ctx, `SELECT id, project_id, branch, job_id, state, head_sha, to_add, to_change, to_destroy, changed_outside, error, checked_at
		FROM drift_checks WHERE project_id = ? AND branch = ? ORDER BY id DESC LIMIT ?`, projectID, branch, limit)
	return collect(rows, err, "drift history", func(s scanner) (*atoll.DriftCheckRecord, error) {
		var c atoll.DriftCheckRecord
		var checked int64
		if err := s.Scan(&c.ID, &c.ProjectID, &c.Branch, &c.JobID, &c.State, &c.HeadSHA, &c.Add, &c.Change, &c.Destroy, &c.ChangedOutside, &c.Error, &checked); err != nil {
			return nil, err
		}
		c.CheckedAt = fromTS(checked)
		return &c, nil
	})
}
