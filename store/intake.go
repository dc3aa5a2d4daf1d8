package store

import (
	"context"

	"github.com/atollhq/atoll"
)

// Intake records a webhook and queues its request in one transaction: a
// redelivered webhook (the same delivery id) queues nothing. It reports
// whether the request was queued.
func (db *DB) Intake(ctx context.Context, in atoll.Intake) (bool, error) {
	queued := false
	req := in.Request
	err := db.Update(ctx, func(tx *Tx) error {
		queued = false // fn may run again
		repoID, err := tx.UpsertRepo(in.Repo)
		if err != nil {
			return err
		}
		dup, err := tx.RecordWebhook(in.Repo.VCS, in.DeliveryID, in.Kind, repoID, in.Pull.Number, in.Sender)
		if err != nil || dup {
			return err
		}
		if req.PullID, err = tx.UpsertPull(repoID, in.Pull); err != nil {
			return err
		}
		if in.DiscardPlans {
			if err := tx.DiscardPlans(req.PullID); err != nil {
				return err
			}
		}
		if req.Kind == atoll.RequestClose {
			if _, err := tx.ReleaseLocks(atoll.LockSelector{PullID: req.PullID}, in.Sender, req.Source, "locks.release", "pull request "+in.Pull.State); err != nil {
				return err
			}
		}
		// The webhooks row is the audit record of the intake itself.
		if err := tx.InsertRequest(req); err != nil {
			return err
		}
		if in.CancelMark != nil {
			if _, err := tx.CancelQueued(req.PullID, req.ID, in.CancelMark(req.ID)); err != nil {
				return err
			}
		}
		queued = true
		return nil
	})
	return queued, err
}
