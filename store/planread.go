package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/atollhq/atoll"
)

// planStateColumns extends planColumns with what the pages say about a plan
// beyond its summary: whether it was discarded or pruned.
const planStateColumns = planColumns + `, discarded_at, pruned_at`

func scanPlanState(s scanner, extra ...any) (*atoll.Plan, error) {
	var discarded, pruned sql.NullInt64
	p, err := scanPlan(scanExtra{s, append([]any{&discarded, &pruned}, extra...)})
	if err != nil {
		return nil, err
	}
	p.DiscardedAt, p.PrunedAt = fromNullTS(discarded), fromNullTS(pruned)
	return p, nil
}

// Plan returns plan id with its `show -json` output (empty once pruned:
// PrunedAt says so) but not its file, for reading.
func (db *DB) Plan(ctx context.Context, id int64) (*atoll.Plan, error) {
	var show []byte
	row := db.reader().QueryRowContext(ctx, `SELECT `+planStateColumns+`, show_json FROM plans WHERE id = ?`, id)
	p, err := scanPlanState(row, &show)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Plan %d not found.", id)
	} else if err != nil {
		return nil, fmt.Errorf("store plan %d: %w", id, err)
	}
	p.ShowJSON = show
	return p, nil
}

// LatestPlans returns the newest plan of each project of a pull request,
// applied, discarded or pending, without file or JSON, ordered by project.
func (db *DB) LatestPlans(ctx context.Context, pullID int64) ([]*atoll.Plan, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+planStateColumns+` FROM plans
		WHERE id IN (SELECT MAX(id) FROM plans WHERE pull_id = ? GROUP BY project_id) ORDER BY project_id`, pullID)
	return collect(rows, err, "latest plans", func(s scanner) (*atoll.Plan, error) { return scanPlanState(s) })
}
