package store

import (
	"context"

	"github.com/atollhq/atoll"
)

// ProjectOutcome is where one project of a pull request stands at a commit:
// the kind and final state of its latest finished plan or apply job there.
// It is what Atlantis keeps as a pull request's per-project status.
type ProjectOutcome struct {
	ProjectID int64
	Kind      string // atoll.JobPlan or atoll.JobApply
	State     string // a final job state
	Changes   bool   // for a succeeded plan: the plan changes something
}

// Applied reports whether the project needs no more apply: its latest job
// is a succeeded apply, or a succeeded plan without changes.
func (o ProjectOutcome) Applied() bool {
	if o.State != atoll.JobSucceeded {
		return false
	}
	return o.Kind == atoll.JobApply || !o.Changes
}

// PullOutcomes returns the outcome of every project a pull request has
// finished jobs for at headSHA, ordered by project id. Jobs of other
// commits do not count: their plans can no longer be applied.
func (db *DB) PullOutcomes(ctx context.Context, pullID int64, headSHA string) ([]ProjectOutcome, error) {
	rows, err := db.reader().QueryContext(ctx, `
		SELECT j.project_id, j.kind, j.state,
			COALESCE(pl.add_count + pl.change_count + pl.destroy_count + pl.import_count, 0) > 0
		FROM jobs j LEFT JOIN plans pl ON pl.job_id = j.id
		WHERE j.id IN (
			SELECT MAX(id) FROM jobs
			WHERE pull_id = ? AND head_sha = ? AND state NOT IN (?, ?) AND kind IN (?, ?)
			GROUP BY project_id)
		ORDER BY j.project_id`, pullID, headSHA, atoll.JobQueued, atoll.JobRunning, atoll.JobPlan, atoll.JobApply)
	return collect(rows, err, "pull outcomes", func(s scanner) (ProjectOutcome, error) {
		var o ProjectOutcome
		err := s.Scan(&o.ProjectID, &o.Kind, &o.State, &o.Changes)
		return o, err
	})
}
