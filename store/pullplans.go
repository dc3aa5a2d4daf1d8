package store

import (
	"context"

	"github.com/atollhq/atoll"
)

// PullOutcomes returns the outcome of every project a pull request has
// finished jobs for at headSHA, ordered by project id. Jobs of other
// commits do not count: their plans can no longer be applied.
func (db *DB) PullOutcomes(ctx context.Context, pullID int64, headSHA string) ([]atoll.ProjectOutcome, error) {
	rows, err := db.reader().QueryContext(ctx, `
		SELECT j.project_id, j.kind, j.state,
			COALESCE(pl.add_count + pl.change_count + pl.destroy_count + pl.import_count, 0) > 0
		FROM jobs j LEFT JOIN plans pl ON pl.job_id = j.id
		WHERE j.id IN (
			SELECT MAX(id) FROM jobs
			WHERE pull_id = ? AND head_sha = ? AND state NOT IN (?, ?) AND kind IN (?, ?)
			GROUP BY project_id)
		ORDER BY j.project_id`, pullID, headSHA, atoll.JobQueued, atoll.JobRunning, atoll.JobPlan, atoll.JobApply)
	return collect(rows, err, "pull outcomes", func(s scanner) (atoll.ProjectOutcome, error) {
		var o atoll.ProjectOutcome
		err := s.Scan(&o.ProjectID, &o.Kind, &o.State, &o.Changes)
		return o, err
	})
}
