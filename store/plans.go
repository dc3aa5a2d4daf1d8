package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
)

// InsertPlan stores a plan file with its summary; it sets ID, SHA256 and
// CreatedAt. Older unapplied plans of the same project and pull request are
// discarded: only the newest plan can be applied. A plan is stored only while
// its pull request holds the project's lock (ECONFLICT otherwise, and nothing
// is written): a lock released during the plan leaves no pending plan that
// could be applied beside the next holder's.
func (tx *Tx) InsertPlan(p *atoll.Plan) error {
	if held, err := tx.holdsLock(p.PullID, p.ProjectID); err != nil {
		return err
	} else if !held {
		return atoll.Errorf(atoll.ECONFLICT, "The plan was not kept: the lock was released while planning; plan again.")
	}
	return tx.insertPlan(p)
}

// InsertUnlockedPlan stores a plan made without the project's lock, as
// repo_locks modes on_apply and disabled plan: otherwise as InsertPlan.
func (tx *Tx) InsertUnlockedPlan(p *atoll.Plan) error { return tx.insertPlan(p) }

func (tx *Tx) insertPlan(p *atoll.Plan) error {
	p.SHA256, p.CreatedAt = atoll.PlanSHA256(p.File), tx.now
	if _, err := tx.exec(`UPDATE plans SET discarded_at = ? WHERE pull_id = ? AND project_id = ? AND applied_at IS NULL AND discarded_at IS NULL`,
		ts(tx.now), p.PullID, p.ProjectID); err != nil {
		return fmt.Errorf("store discard old plans: %w", err)
	}
	err := tx.queryRow(`
		INSERT INTO plans (job_id, pull_id, project_id, head_sha, file, sha256, show_json, add_count, change_count, destroy_count, import_count, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		p.JobID, p.PullID, p.ProjectID, p.HeadSHA, notNull(p.File), p.SHA256, notNull(p.ShowJSON),
		p.Summary.Add, p.Summary.Change, p.Summary.Destroy, p.Summary.Import, ts(tx.now)).Scan(&p.ID)
	if err != nil {
		return fmt.Errorf("store insert plan for job %d: %w", p.JobID, err)
	}
	tx.notifyPull(atoll.TopicPlan, p.PullID, p.JobID)
	return nil
}

// notNull is b, or empty for nil: a plan whose workflow wrote no plan
// file is stored with an empty one (a worker's result carries none at
// all), and a plan told before its JSON is made with an empty JSON
// (StorePlanJSON fills it).
func notNull(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// StorePlanJSON adds the JSON of a plan stored without it: it is made
// after the plan is told, while the plan's checkout is still held. Only an
// empty, unpruned show_json is filled, so a retention pass that ran in
// between is not undone.
func (db *DB) StorePlanJSON(ctx context.Context, id int64, show []byte) error {
	if len(show) == 0 {
		return atoll.Errorf(atoll.EINVALID, "A plan's JSON cannot be empty.")
	}
	return db.Update(ctx, func(tx *Tx) error {
		var pullID, jobID int64
		err := tx.queryRow(`SELECT pull_id, job_id FROM plans WHERE id = ?`, id).Scan(&pullID, &jobID)
		if errors.Is(err, sql.ErrNoRows) {
			return atoll.Errorf(atoll.ENOTFOUND, "Plan %d not found.", id)
		} else if err != nil {
			return fmt.Errorf("store plan json: %w", err)
		}
		res, err := tx.exec(`UPDATE plans SET show_json = ? WHERE id = ? AND length(show_json) = 0 AND pruned_at IS NULL`, show, id)
		if err != nil {
			return fmt.Errorf("store plan json: %w", err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			tx.notifyPull(atoll.TopicPlan, pullID, jobID)
		}
		return nil
	})
}

// MarkPlanApplied records that plan id was applied; it fails with ECONFLICT
// if the plan was applied or discarded meanwhile, so a plan applies once, and
// if its pull request no longer holds the project's lock, so that two pull
// requests never apply to one project.
func (tx *Tx) MarkPlanApplied(id int64) error { return tx.markPlanApplied(id, true) }

// MarkUnlockedPlanApplied is MarkPlanApplied without the lock check, for
// repo_locks mode disabled: the plan still applies at most once.
func (tx *Tx) MarkUnlockedPlanApplied(id int64) error { return tx.markPlanApplied(id, false) }

func (tx *Tx) markPlanApplied(id int64, needLock bool) error {
	res, err := tx.exec(`UPDATE plans SET applied_at = ? WHERE id = ? AND applied_at IS NULL AND discarded_at IS NULL
		AND (? = 0 OR EXISTS (SELECT 1 FROM locks l WHERE l.project_id = plans.project_id AND l.pull_id = plans.pull_id))`, ts(tx.now), id, needLock)
	if err != nil {
		return fmt.Errorf("store mark plan %d applied: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store mark plan %d applied: %w", id, err)
	} else if n == 1 {
		var pullID int64
		if err := tx.queryRow(`SELECT pull_id FROM plans WHERE id = ?`, id).Scan(&pullID); err == nil {
			tx.notifyPull(atoll.TopicPlan, pullID, 0)
		}
		return nil
	}
	var applied, discarded sql.NullInt64
	err = tx.queryRow(`SELECT applied_at, discarded_at FROM plans WHERE id = ?`, id).Scan(&applied, &discarded)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return atoll.Errorf(atoll.ENOTFOUND, "Plan %d not found.", id)
	case err != nil:
		return fmt.Errorf("store plan %d: %w", id, err)
	case applied.Valid || discarded.Valid:
		return atoll.Errorf(atoll.ECONFLICT, "The plan was already applied or discarded.")
	}
	return atoll.Errorf(atoll.ECONFLICT, "The plan cannot be applied: this pull request no longer holds the project's lock (it was unlocked, or another pull request took it). Plan again.")
}

// holdsLock reports whether pull holds project's lock.
func (tx *Tx) holdsLock(pullID, projectID int64) (bool, error) {
	var n int
	if err := tx.queryRow(`SELECT COUNT(*) FROM locks WHERE project_id = ? AND pull_id = ?`, projectID, pullID).Scan(&n); err != nil {
		return false, fmt.Errorf("store lock of project %d: %w", projectID, err)
	}
	return n > 0, nil
}

// DiscardPlans discards every unapplied plan of a pull request.
func (tx *Tx) DiscardPlans(pullID int64) error {
	if _, err := tx.exec(`UPDATE plans SET discarded_at = ? WHERE pull_id = ? AND applied_at IS NULL AND discarded_at IS NULL`, ts(tx.now), pullID); err != nil {
		return fmt.Errorf("store discard plans of pull %d: %w", pullID, err)
	}
	tx.notifyPull(atoll.TopicPlan, pullID, 0)
	return nil
}

const planColumns = `id, job_id, pull_id, project_id, head_sha, sha256, add_count, change_count, destroy_count, import_count, created_at, applied_at`

func scanPlan(s scanner) (*atoll.Plan, error) {
	var p atoll.Plan
	var created int64
	var applied sql.NullInt64
	err := s.Scan(&p.ID, &p.JobID, &p.PullID, &p.ProjectID, &p.HeadSHA, &p.SHA256,
		&p.Summary.Add, &p.Summary.Change, &p.Summary.Destroy, &p.Summary.Import, &created, &applied)
	if err != nil {
		return nil, err
	}
	p.CreatedAt, p.AppliedAt = fromTS(created), fromNullTS(applied)
	return &p, nil
}

// PendingPlans returns the unapplied, undiscarded plans of a pull request
// (one per project at most), without file bytes.
func (db *DB) PendingPlans(ctx context.Context, pullID int64) ([]*atoll.Plan, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+planColumns+` FROM plans
		WHERE pull_id = ? AND applied_at IS NULL AND discarded_at IS NULL ORDER BY id`, pullID)
	return collect(rows, err, "pending plans", scanPlan)
}

// PlanByJob returns the plan a plan job produced, with file bytes.
func (db *DB) PlanByJob(ctx context.Context, jobID int64) (*atoll.Plan, error) {
	var p *atoll.Plan
	row := db.reader().QueryRowContext(ctx, `SELECT `+planColumns+`, file, show_json, pruned_at FROM plans WHERE job_id = ?`, jobID)
	var file, show []byte
	var pruned sql.NullInt64
	p, err := scanPlan(scanExtra{row, []any{&file, &show, &pruned}})
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "No plan for job %d.", jobID)
	} else if err != nil {
		return nil, fmt.Errorf("store plan of job %d: %w", jobID, err)
	} else if pruned.Valid {
		return nil, errPlanPruned(p.ID, pruned.Int64)
	}
	p.File, p.ShowJSON = file, show
	return p, nil
}

// PlanFile returns the bytes of plan id and checks them against the stored
// hash, so a corrupted plan is never applied.
func (db *DB) PlanFile(ctx context.Context, id int64) ([]byte, error) {
	var file []byte
	var want string
	var pruned sql.NullInt64
	err := db.reader().QueryRowContext(ctx, `SELECT file, sha256, pruned_at FROM plans WHERE id = ?`, id).Scan(&file, &want, &pruned)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Plan %d not found.", id)
	} else if err != nil {
		return nil, fmt.Errorf("store plan file %d: %w", id, err)
	} else if pruned.Valid {
		return nil, errPlanPruned(id, pruned.Int64)
	}
	if atoll.PlanSHA256(file) != want {
		return nil, atoll.Errorf(atoll.EINTERNAL, "Stored plan %d does not match its hash.", id)
	}
	return file, nil
}

// errPlanPruned says that retention dropped a plan's bytes (only ever of an
// applied or discarded plan), rather than letting the empty file fail its
// hash check.
func errPlanPruned(id, at int64) error {
	return atoll.Errorf(atoll.ENOTFOUND, "The plan file was pruned by retention (--retain-plan-files): plan %d was applied or discarded, and its file removed on %s. Plan again.",
		id, fromTS(at).Format(time.DateOnly))
}

// scanExtra appends destinations to a scan so that shared column lists can
// be extended.
type scanExtra struct {
	s     scanner
	extra []any
}

func (e scanExtra) Scan(dest ...any) error { return e.s.Scan(append(dest, e.extra...)...) }
