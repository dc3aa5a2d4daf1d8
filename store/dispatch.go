package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// Worker pools: tokens and dispatches (atoll.DispatchService). A dispatch
// is one row per job; every worker call is checked here, in the same
// transaction as what it changes, against the claim's job token hash, its
// state, its lease (by this transaction's clock) and its worker token, so a
// late report from a worker whose lease ran out is refused even before a
// node noticed.

// CreateWorkerToken stores a new worker token (see atoll.DispatchService).
func (db *DB) CreateWorkerToken(ctx context.Context, name, pool string, hash []byte, actor, source string) (*atoll.WorkerToken, error) {
	name = strings.TrimSpace(name)
	if err := atoll.CheckWorkerToken(name, pool); err != nil {
		return nil, err
	}
	var t *atoll.WorkerToken
	err := db.Update(ctx, func(tx *Tx) error {
		res, err := tx.exec(`INSERT INTO worker_tokens (name, pool, hash, created_by, created_at) VALUES (?, ?, ?, ?, ?)`, name, pool, hash, actor, ts(tx.now))
		if err != nil {
			return fmt.Errorf("store create worker token: %w", err)
		}
		id, err := res.LastInsertId()
		if err != nil {
			return err
		}
		t = &atoll.WorkerToken{ID: id, Name: name, Pool: pool, CreatedBy: actor, CreatedAt: tx.now}
		return tx.AddEvent(atoll.Event{Actor: actor, Action: "worker_token.create", Source: source, Detail: fmt.Sprintf("%s (pool %s, token %d)", name, pool, id)})
	})
	return t, err
}

// RevokeWorkerToken revokes token id with its audit event.
func (db *DB) RevokeWorkerToken(ctx context.Context, id int64, actor, source string) (*atoll.WorkerToken, error) {
	var t *atoll.WorkerToken
	err := db.Update(ctx, func(tx *Tx) (err error) {
		if t, err = scanWorkerToken(tx.queryRow(`SELECT `+workerTokenColumns+` FROM worker_tokens WHERE id = ?`, id)); errors.Is(err, sql.ErrNoRows) {
			return atoll.Errorf(atoll.ENOTFOUND, "No such worker token.")
		} else if err != nil {
			return fmt.Errorf("store revoke worker token %d: %w", id, err)
		}
		if t.Revoked() {
			return nil
		}
		if _, err := tx.exec(`UPDATE worker_tokens SET revoked_at = ?, revoked_by = ? WHERE id = ?`, ts(tx.now), actor, id); err != nil {
			return fmt.Errorf("store revoke worker token %d: %w", id, err)
		}
		t.RevokedAt, t.RevokedBy = &tx.now, actor
		tx.Notify(atoll.Change{Topic: atoll.TopicJob})
		return tx.AddEvent(atoll.Event{Actor: actor, Action: "worker_token.revoke", Source: source, Detail: fmt.Sprintf("%s (pool %s, token %d)", t.Name, t.Pool, id)})
	})
	return t, err
}

const workerTokenColumns = `id, name, pool, created_by, created_at, revoked_by, revoked_at, seen_at, worker, version`

func scanWorkerToken(s scanner) (*atoll.WorkerToken, error) {
	var t atoll.WorkerToken
	var created int64
	var revoked, seen sql.NullInt64
	if err := s.Scan(&t.ID, &t.Name, &t.Pool, &t.CreatedBy, &created, &t.RevokedBy, &revoked, &seen, &t.Worker, &t.Version); err != nil {
		return nil, err
	}
	t.CreatedAt, t.RevokedAt, t.SeenAt = fromTS(created), fromNullTS(revoked), fromNullTS(seen)
	return &t, nil
}

// WorkerTokens lists every worker token, newest first.
func (db *DB) WorkerTokens(ctx context.Context) ([]*atoll.WorkerToken, error) {
	rows, err := db.reader().QueryContext(ctx, `SELECT `+workerTokenColumns+` FROM worker_tokens ORDER BY id DESC`)
	return collect(rows, err, "worker tokens", scanWorkerToken)
}

// WorkerTokenByHash is the unrevoked token whose secret hashes to hash.
func (db *DB) WorkerTokenByHash(ctx context.Context, hash []byte) (*atoll.WorkerToken, error) {
	t, err := scanWorkerToken(db.reader().QueryRowContext(ctx, `SELECT `+workerTokenColumns+` FROM worker_tokens WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) || (err == nil && t.Revoked()) {
		return nil, atoll.Errorf(atoll.EUNAUTHORIZED, "Unknown or revoked worker token.")
	} else if err != nil {
		return nil, fmt.Errorf("store worker token: %w", err)
	}
	return t, nil
}

// SeeWorker records the last claim made with token id, at most once a
// minute for the same worker and version.
func (db *DB) SeeWorker(ctx context.Context, id int64, worker, version string) error {
	return db.Update(ctx, func(tx *Tx) error {
		_, err := tx.exec(`UPDATE worker_tokens SET seen_at = ?, worker = ?, version = ?
			WHERE id = ? AND (seen_at IS NULL OR seen_at < ? OR worker != ? OR version != ?)`,
			ts(tx.now), worker, version, id, ts(tx.now.Add(-touchEvery)), worker, version)
		return err
	})
}

const dispatchColumns = `job_id, pool, attempt, state, COALESCE(token_id, 0), worker, job_token_hash, lease_expires_at, log_acked, applying, spec, plan_sha256, claim_hash, result, created_at, claimed_at, finished_at`

func scanDispatch(s scanner) (*atoll.Dispatch, error) {
	var d atoll.Dispatch
	var lease, claimed, finished sql.NullInt64
	var result sql.NullString
	var spec string
	var created int64
	if err := s.Scan(&d.JobID, &d.Pool, &d.Attempt, &d.State, &d.TokenID, &d.Worker, &d.JobTokenHash, &lease, &d.LogAcked, &d.Applying,
		&spec, &d.PlanSHA256, &d.ClaimHash, &result, &created, &claimed, &finished); err != nil {
		return nil, err
	}
	d.Spec = json.RawMessage(spec)
	if result.Valid {
		d.Result = json.RawMessage(result.String)
	}
	d.LeaseExpiresAt, d.CreatedAt, d.ClaimedAt, d.FinishedAt = fromNullTS(lease), fromTS(created), fromNullTS(claimed), fromNullTS(finished)
	return &d, nil
}

func (tx *Tx) dispatch(jobID int64) (*atoll.Dispatch, error) {
	d, err := scanDispatch(tx.queryRow(`SELECT `+dispatchColumns+` FROM dispatches WHERE job_id = ?`, jobID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Job %d was not dispatched to a worker pool.", jobID)
	} else if err != nil {
		return nil, fmt.Errorf("store dispatch of job %d: %w", jobID, err)
	}
	return d, nil
}

// QueueDispatch queues d unless its job has a dispatch already.
func (db *DB) QueueDispatch(ctx context.Context, d *atoll.Dispatch) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) (err error) {
		if out, err = tx.dispatch(d.JobID); atoll.ErrorCode(err) != atoll.ENOTFOUND {
			return err
		}
		if _, err := tx.exec(`INSERT INTO dispatches (job_id, pool, attempt, state, spec, plan_sha256, claim_hash, created_at) VALUES (?, ?, 1, ?, ?, ?, ?, ?)`,
			d.JobID, d.Pool, atoll.DispatchQueued, string(d.Spec), d.PlanSHA256, nullBytes(d.ClaimHash), ts(tx.now)); err != nil {
			return fmt.Errorf("store queue dispatch of job %d: %w", d.JobID, err)
		}
		tx.notifyJob(d.JobID)
		out, err = tx.dispatch(d.JobID)
		return err
	})
	return out, err
}

// Dispatch returns job id's dispatch.
func (db *DB) Dispatch(ctx context.Context, jobID int64) (*atoll.Dispatch, error) {
	d, err := scanDispatch(db.reader().QueryRowContext(ctx, `SELECT `+dispatchColumns+` FROM dispatches WHERE job_id = ?`, jobID))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Job %d was not dispatched to a worker pool.", jobID)
	} else if err != nil {
		return nil, fmt.Errorf("store dispatch of job %d: %w", jobID, err)
	}
	return d, nil
}

// ClaimDispatch gives the oldest queued dispatch of pool to a worker.
func (db *DB) ClaimDispatch(ctx context.Context, pool string, tokenID int64, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) error {
		out = nil // fn may run again
		var revoked sql.NullInt64
		if err := tx.queryRow(`SELECT revoked_at FROM worker_tokens WHERE id = ?`, tokenID).Scan(&revoked); err != nil || revoked.Valid {
			return atoll.Errorf(atoll.EUNAUTHORIZED, "Unknown or revoked worker token.")
		}
		var jobID int64
		err := tx.queryRow(`SELECT job_id FROM dispatches WHERE pool = ? AND state = ? AND claim_hash IS NULL ORDER BY created_at, job_id LIMIT 1`, pool, atoll.DispatchQueued).Scan(&jobID)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("store claim dispatch of pool %s: %w", pool, err)
		}
		out, err = tx.claim(jobID, any(tokenID), worker, jobTokenHash, lease)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ClaimPinnedDispatch gives the dispatch pinned to claimHash to a worker.
func (db *DB) ClaimPinnedDispatch(ctx context.Context, claimHash []byte, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) error {
		var jobID int64
		err := tx.queryRow(`SELECT job_id FROM dispatches WHERE claim_hash = ? AND state = ?`, claimHash, atoll.DispatchQueued).Scan(&jobID)
		if errors.Is(err, sql.ErrNoRows) {
			return atoll.Errorf(atoll.EUNAUTHORIZED, "Unknown or spent claim secret.")
		} else if err != nil {
			return fmt.Errorf("store claim pinned dispatch: %w", err)
		}
		out, err = tx.claim(jobID, nil, worker, jobTokenHash, lease)
		return err
	})
	return out, err
}

// claim gives job id's queued dispatch to worker (of worker token tokenID,
// nil for a pinned claimant) under a lease; a pinning secret is spent.
func (tx *Tx) claim(jobID int64, tokenID any, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	if _, err := tx.exec(`UPDATE dispatches SET state = ?, token_id = ?, worker = ?, job_token_hash = ?, lease_expires_at = ?, claimed_at = ?, claim_hash = NULL WHERE job_id = ?`,
		atoll.DispatchClaimed, tokenID, worker, jobTokenHash, ts(tx.now.Add(lease)), ts(tx.now), jobID); err != nil {
		return nil, fmt.Errorf("store claim dispatch of job %d: %w", jobID, err)
	}
	tx.notifyJob(jobID)
	return tx.dispatch(jobID)
}

// nullBytes stores an empty slice as NULL.
func nullBytes(b []byte) any {
	if len(b) == 0 {
		return nil
	}
	return b
}

// held returns job id's dispatch if it is claimed under jobTokenHash, its
// lease runs at tx's time and its worker token is not revoked; else a
// coded error saying which.
func (tx *Tx) held(jobID int64, jobTokenHash []byte) (*atoll.Dispatch, error) {
	d, err := tx.dispatch(jobID)
	if atoll.ErrorCode(err) == atoll.ENOTFOUND {
		return nil, notHeld(jobID)
	} else if err != nil {
		return nil, err
	}
	if len(d.JobTokenHash) == 0 || string(d.JobTokenHash) != string(jobTokenHash) {
		// A hash compare: the secret itself is never compared or kept.
		// An earlier attempt's token, or none: not this worker's job.
		return nil, notHeld(jobID)
	}
	switch {
	case d.State == atoll.DispatchCanceled:
		return nil, atoll.Errorf(atoll.ECONFLICT, "Job %d was canceled: stop it.", jobID)
	case d.State != atoll.DispatchClaimed:
		return nil, atoll.Errorf(atoll.ECONFLICT, "This worker no longer holds job %d (it is %s).", jobID, d.State)
	case d.LeaseExpiresAt == nil || !tx.now.Before(*d.LeaseExpiresAt):
		return nil, atoll.Errorf(atoll.ECONFLICT, "This worker's lease on job %d ran out: its report is refused.", jobID)
	}
	if d.TokenID == 0 {
		return d, nil // a pinned claimant: its secret was for this job alone
	}
	var revoked sql.NullInt64
	if err := tx.queryRow(`SELECT revoked_at FROM worker_tokens WHERE id = ?`, d.TokenID).Scan(&revoked); err != nil || revoked.Valid {
		return nil, atoll.Errorf(atoll.ECONFLICT, "The worker token of job %d's worker was revoked.", jobID)
	}
	return d, nil
}

// notHeld refuses a job call whose job token does not hold the job.
func notHeld(jobID int64) error {
	return atoll.Errorf(atoll.ECONFLICT, "This job token does not hold job %d.", jobID)
}

// RenewDispatch extends the lease of a held claim.
func (db *DB) RenewDispatch(ctx context.Context, jobID int64, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) (err error) {
		if out, err = tx.held(jobID, jobTokenHash); err != nil {
			return err
		}
		until := tx.now.Add(lease)
		if _, err := tx.exec(`UPDATE dispatches SET lease_expires_at = ? WHERE job_id = ?`, ts(until), jobID); err != nil {
			return fmt.Errorf("store renew dispatch of job %d: %w", jobID, err)
		}
		out.LeaseExpiresAt = &until
		return nil
	})
	return out, err
}

// MarkDispatchApplying records that the apply of a held claim started.
func (db *DB) MarkDispatchApplying(ctx context.Context, jobID int64, jobTokenHash []byte) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.held(jobID, jobTokenHash); err != nil {
			return err
		}
		_, err := tx.exec(`UPDATE dispatches SET applying = 1 WHERE job_id = ?`, jobID)
		return err
	})
}

// AckDispatchLogs records the worker's stored lines up to seq and
// extends the lease.
func (db *DB) AckDispatchLogs(ctx context.Context, jobID int64, jobTokenHash []byte, seq int64, lease time.Duration) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.held(jobID, jobTokenHash); err != nil {
			return err
		}
		_, err := tx.exec(`UPDATE dispatches SET log_acked = MAX(log_acked, ?), lease_expires_at = ? WHERE job_id = ?`, seq, ts(tx.now.Add(lease)), jobID)
		return err
	})
}

// FinishDispatch stores a held claim's result and ends it.
func (db *DB) FinishDispatch(ctx context.Context, jobID int64, jobTokenHash []byte, result json.RawMessage) error {
	return db.Update(ctx, func(tx *Tx) error {
		if _, err := tx.held(jobID, jobTokenHash); err != nil {
			return err
		}
		if _, err := tx.exec(`UPDATE dispatches SET state = ?, result = ?, finished_at = ? WHERE job_id = ?`, atoll.DispatchDone, string(result), ts(tx.now), jobID); err != nil {
			return fmt.Errorf("store finish dispatch of job %d: %w", jobID, err)
		}
		tx.notifyJob(jobID)
		return nil
	})
}

// ExpireDispatch ends a claim whose lease ran out, and queues it again
// with requeue (pinned to claimHash when given).
func (db *DB) ExpireDispatch(ctx context.Context, jobID int64, requeue bool, claimHash []byte) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) (err error) {
		d, err := tx.dispatch(jobID)
		if err != nil {
			return err
		}
		if d.State != atoll.DispatchClaimed || (d.LeaseExpiresAt != nil && tx.now.Before(*d.LeaseExpiresAt)) {
			return atoll.Errorf(atoll.ECONFLICT, "Job %d's claim is %s and its lease has not run out.", jobID, d.State)
		}
		out, err = tx.endDispatch(jobID, requeue, claimHash)
		return err
	})
	return out, err
}

// EndDispatch ends attempt's dispatch, queued or claimed, whose claimant
// is known to be gone, and queues it again with requeue.
func (db *DB) EndDispatch(ctx context.Context, jobID int64, attempt int, requeue bool, claimHash []byte) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) (err error) {
		d, err := tx.dispatch(jobID)
		if err != nil {
			return err
		}
		if d.Attempt != attempt || (d.State != atoll.DispatchClaimed && d.State != atoll.DispatchQueued) {
			return atoll.Errorf(atoll.ECONFLICT, "Job %d's dispatch is attempt %d, %s: attempt %d cannot be ended.", jobID, d.Attempt, d.State, attempt)
		}
		out, err = tx.endDispatch(jobID, requeue, claimHash)
		return err
	})
	return out, err
}

// endDispatch ends job id's current attempt as lost, or queues its next
// attempt (pinned to claimHash when given).
func (tx *Tx) endDispatch(jobID int64, requeue bool, claimHash []byte) (*atoll.Dispatch, error) {
	var err error
	if requeue {
		_, err = tx.exec(`UPDATE dispatches SET state = ?, attempt = attempt + 1, token_id = NULL, worker = '', job_token_hash = NULL,
			lease_expires_at = NULL, claimed_at = NULL, applying = 0, log_acked = 0, claim_hash = ?, created_at = ? WHERE job_id = ?`,
			atoll.DispatchQueued, nullBytes(claimHash), ts(tx.now), jobID)
	} else {
		_, err = tx.exec(`UPDATE dispatches SET state = ?, claim_hash = NULL, finished_at = ? WHERE job_id = ?`, atoll.DispatchLost, ts(tx.now), jobID)
	}
	if err != nil {
		return nil, fmt.Errorf("store end dispatch of job %d: %w", jobID, err)
	}
	tx.notifyJob(jobID)
	return tx.dispatch(jobID)
}

// PinDispatch pins job id's queued attempt to claimHash.
func (db *DB) PinDispatch(ctx context.Context, jobID int64, attempt int, claimHash []byte) (*atoll.Dispatch, error) {
	var out *atoll.Dispatch
	err := db.Update(ctx, func(tx *Tx) (err error) {
		d, err := tx.dispatch(jobID)
		if err != nil {
			return err
		}
		if d.Attempt != attempt || d.State != atoll.DispatchQueued {
			return atoll.Errorf(atoll.ECONFLICT, "Job %d's dispatch is attempt %d, %s: attempt %d cannot be pinned.", jobID, d.Attempt, d.State, attempt)
		}
		if _, err := tx.exec(`UPDATE dispatches SET claim_hash = ? WHERE job_id = ?`, claimHash, jobID); err != nil {
			return fmt.Errorf("store pin dispatch of job %d: %w", jobID, err)
		}
		out, err = tx.dispatch(jobID)
		return err
	})
	return out, err
}

// CancelDispatch ends a queued or claimed dispatch as canceled.
func (db *DB) CancelDispatch(ctx context.Context, jobID int64) error {
	return db.Update(ctx, func(tx *Tx) error {
		res, err := tx.exec(`UPDATE dispatches SET state = ?, finished_at = ? WHERE job_id = ? AND state IN (?, ?)`,
			atoll.DispatchCanceled, ts(tx.now), jobID, atoll.DispatchQueued, atoll.DispatchClaimed)
		if err != nil {
			return fmt.Errorf("store cancel dispatch of job %d: %w", jobID, err)
		}
		if n, _ := res.RowsAffected(); n > 0 {
			tx.notifyJob(jobID)
		}
		return nil
	})
}

// Dispatches lists the dispatches in states (all when none), oldest first.
func (db *DB) Dispatches(ctx context.Context, states ...string) ([]*atoll.Dispatch, error) {
	q := `SELECT ` + dispatchColumns + ` FROM dispatches`
	var args []any
	if len(states) > 0 {
		q += ` WHERE state IN (?` + strings.Repeat(", ?", len(states)-1) + `)`
		for _, s := range states {
			args = append(args, s)
		}
	}
	rows, err := db.reader().QueryContext(ctx, q+` ORDER BY created_at, job_id`, args...)
	return collect(rows, err, "dispatches", scanDispatch)
}

// PoolQueues counts each pool's queued jobs (a job's pool is in its spec;
// none is the local pool) and queued dispatches; the local pool and those
// of unrevoked worker tokens are listed at zero when idle.
func (db *DB) PoolQueues(ctx context.Context) ([]atoll.PoolQueue, error) {
	rows, err := db.reader().QueryContext(ctx, `
		SELECT pool, SUM(jobs), SUM(dispatches) FROM (
			SELECT ? AS pool, 0 AS jobs, 0 AS dispatches
			UNION ALL SELECT pool, 0, 0 FROM worker_tokens WHERE revoked_at IS NULL
			UNION ALL SELECT COALESCE(NULLIF(json_extract(spec, '$.pool'), ''), ?), 1, 0 FROM jobs WHERE state = ?
			UNION ALL SELECT pool, 0, 1 FROM dispatches WHERE state = ?
		) GROUP BY pool ORDER BY pool`, atoll.PoolLocal, atoll.PoolLocal, atoll.JobQueued, atoll.DispatchQueued)
	return collect(rows, err, "pool queues", func(sc scanner) (atoll.PoolQueue, error) {
		var q atoll.PoolQueue
		err := sc.Scan(&q.Pool, &q.Jobs, &q.Dispatches)
		return q, err
	})
}

// PruneDispatchResults drops the stored results (plan files, show JSON)
// of dispatches whose jobs ended: the runner stored what it needed.
func (db *DB) PruneDispatchResults(ctx context.Context) error {
	return db.Update(ctx, func(tx *Tx) error {
		_, err := tx.exec(`UPDATE dispatches SET result = NULL WHERE result IS NOT NULL AND job_id IN (SELECT id FROM jobs WHERE state NOT IN (?, ?))`,
			atoll.JobQueued, atoll.JobRunning)
		return err
	})
}
