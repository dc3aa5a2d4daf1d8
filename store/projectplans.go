package store

import (
	"fmt"

	"github.com/atollhq/atoll"
)

// DiscardProjectPlans discards the unapplied plans of one project of a pull
// request (an import or state rm changed the state they were made
// against) and returns how many it discarded.
func (tx *Tx) DiscardProjectPlans(pullID, projectID int64) (int, error) {
	res, err := tx.exec(`UPDATE plans SET discarded_at = ? WHERE pull_id = ? AND project_id = ? AND applied_at IS NULL AND discarded_at IS NULL`,
		ts(tx.now), pullID, projectID)
	if err != nil {
		return 0, fmt.Errorf("store discard plans of pull %d project %d: %w", pullID, projectID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("store discard plans of pull %d project %d: %w", pullID, projectID, err)
	}
	if n > 0 {
		tx.notifyPull(atoll.TopicPlan, pullID, 0)
	}
	return int(n), nil
}
