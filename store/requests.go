package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
)

// RecordWebhook records an accepted webhook delivery. It reports duplicate
// when the VCS already delivered deliveryID, so that redeliveries queue no
// second run.
func (tx *Tx) RecordWebhook(vcs, deliveryID, kind string, repoID int64, pull int, sender string) (duplicate bool, err error) {
	res, err := tx.exec(`INSERT INTO webhooks (vcs, delivery_id, kind, repo_id, pull_number, sender, received_at) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (vcs, delivery_id) WHERE delivery_id <> '' DO NOTHING`,
		vcs, deliveryID, kind, repoID, pull, sender, ts(tx.now))
	if err != nil {
		return false, fmt.Errorf("store webhook %s: %w", deliveryID, err)
	}
	n, err := res.RowsAffected()
	return n == 0, err
}

// InsertRequest queues r and sets its ID, state and creation time.
func (tx *Tx) InsertRequest(r *atoll.Request) error {
	r.State, r.CreatedAt = atoll.RequestQueued, tx.now
	err := tx.queryRow(`
		INSERT INTO requests (pull_id, kind, state, comment, comment_id, user, head_sha, created_at, source)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`,
		r.PullID, r.Kind, r.State, r.Comment, r.CommentID, r.User, r.HeadSHA, ts(tx.now), r.Source).Scan(&r.ID)
	if err != nil {
		return fmt.Errorf("store insert request: %w", err)
	}
	tx.notifyPull(atoll.TopicJob, r.PullID, 0)
	return nil
}

const requestColumns = `q.id, q.kind, q.state, q.pull_id, r.owner || '/' || r.name, p.number, q.comment, q.comment_id,
	q.user, q.head_sha, q.error, q.created_at, q.started_at, q.finished_at, q.source`

const requestFrom = ` FROM requests q JOIN pulls p ON p.id = q.pull_id JOIN repos r ON r.id = p.repo_id `

func scanRequest(s scanner) (*atoll.Request, error) {
	var q atoll.Request
	var created int64
	var started, finished sql.NullInt64
	err := s.Scan(&q.ID, &q.Kind, &q.State, &q.PullID, &q.Repo, &q.Pull, &q.Comment, &q.CommentID,
		&q.User, &q.HeadSHA, &q.Error, &created, &started, &finished, &q.Source)
	if err != nil {
		return nil, err
	}
	q.CreatedAt, q.StartedAt, q.FinishedAt = fromTS(created), fromNullTS(started), fromNullTS(finished)
	return &q, nil
}

// ClaimRequest marks the oldest runnable request as running by node and
// returns it, or nil when there is none; it never returns a request with an
// error. Requests of one pull request run one at a time, in order, because
// they share its work directory.
func (db *DB) ClaimRequest(ctx context.Context, node string) (*atoll.Request, error) {
	var out *atoll.Request
	err := db.Update(ctx, func(tx *Tx) error {
		out = nil // fn may run again
		// Pull requests' work first; drift checks after it, and only while
		// fewer than DriftSlots run.
		q, err := scanRequest(tx.queryRow(`SELECT `+requestColumns+requestFrom+`
			WHERE q.state = 'queued' AND NOT EXISTS (
				SELECT 1 FROM requests o WHERE o.pull_id = q.pull_id AND (o.state = 'running' OR (o.state = 'queued' AND o.id < q.id)))
			AND (q.kind <> ? OR (SELECT COUNT(*) FROM requests d WHERE d.kind = ? AND d.state = 'running') < ?)
			ORDER BY q.kind = ?, q.id LIMIT 1`, atoll.RequestDrift, atoll.RequestDrift, db.driftSlots(), atoll.RequestDrift))
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		} else if err != nil {
			return fmt.Errorf("store claim request: %w", err)
		}
		if _, err := tx.exec(`UPDATE requests SET state = 'running', claimed_by = ?, started_at = ? WHERE id = ?`, node, ts(tx.now), q.ID); err != nil {
			return fmt.Errorf("store claim request %d: %w", q.ID, err)
		}
		q.State, q.StartedAt = atoll.RequestRunning, &tx.now
		tx.notifyPull(atoll.TopicJob, q.PullID, 0)
		out = q
		return nil
	})
	if err != nil {
		// The claim is not committed: a request returned now could run twice.
		return nil, err
	}
	return out, nil
}

// FinishRequest records a request's final state; RequestQueued puts it back
// in the queue instead.
func (tx *Tx) FinishRequest(id int64, state, msg string) error {
	finished := any(ts(tx.now))
	if state == atoll.RequestQueued {
		finished = nil
	}
	if _, err := tx.exec(`UPDATE requests SET state = ?, error = ?, finished_at = ?, claimed_by = CASE WHEN ? = 'queued' THEN '' ELSE claimed_by END WHERE id = ?`,
		state, msg, finished, state, id); err != nil {
		return fmt.Errorf("store finish request %d: %w", id, err)
	}
	var pullID int64
	if err := tx.queryRow(`SELECT pull_id FROM requests WHERE id = ?`, id).Scan(&pullID); err == nil {
		tx.notifyPull(atoll.TopicJob, pullID, 0)
	}
	return nil
}

// RequeueRunning puts requests left running by a stopped process (a crash,
// or the active node of an earlier epoch) back in the queue and marks their
// running jobs interrupted; an interrupted plan gets a new queued job in its
// request, an apply never. It returns the interrupted jobs so the caller can
// tell their pull requests. Queued jobs stay queued and run when their
// request is claimed again.
func (tx *Tx) RequeueRunning() ([]*atoll.Job, error) {
	// A job a worker of a pool holds, or may still claim, keeps running:
	// its worker reports to whichever node is active, and the resumed
	// request waits for that report (docs/workers.md). Its claim is live
	// while its lease runs, by this transaction's clock.
	jobs, err := jobsWhere(tx.ctx, tx.tx, `j.state = 'running' AND NOT EXISTS (SELECT 1 FROM dispatches d WHERE d.job_id = j.id
		AND (d.state IN ('queued', 'done') OR (d.state = 'claimed' AND d.lease_expires_at > ?)))`, ts(tx.now))
	if err != nil {
		return nil, err
	}
	for _, j := range jobs {
		msg := "Atoll stopped while this job was running; it was not retried."
		if j.Kind == atoll.JobPlan && j.RequestID != 0 {
			// A plan changes nothing but its own lock and plan file: it is
			// planned again, as a new job of the same request. An apply
			// never is.
			msg = "Atoll stopped while this plan was running; it is planned again."
			again := &atoll.Job{Kind: j.Kind, RequestID: j.RequestID, PullID: j.PullID, ProjectID: j.ProjectID,
				HeadSHA: j.HeadSHA, User: j.User, Spec: j.Spec}
			if err := tx.InsertJob(again); err != nil {
				return nil, err
			}
		}
		if err := tx.FinishJob(j.ID, atoll.JobInterrupted, msg, nil); err != nil {
			return nil, err
		}
		j.State, j.Error = atoll.JobInterrupted, msg
	}
	res, err := tx.exec(`UPDATE requests SET state = 'queued', claimed_by = '' WHERE state = 'running'`)
	if err != nil {
		return nil, fmt.Errorf("store requeue requests: %w", err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		tx.Notify(atoll.Change{Topic: atoll.TopicJob})
	}
	return jobs, nil
}

// RequeueOrphans puts node's running requests other than live back in the
// queue (see DB.RequeueOrphans). Their jobs are left as they are: a request
// no worker holds has no job running in this process.
func (tx *Tx) RequeueOrphans(node string, live []int64) (int, error) {
	q := `UPDATE requests SET state = 'queued', claimed_by = '' WHERE state = 'running' AND claimed_by = ?`
	args := []any{node}
	if len(live) > 0 {
		q += ` AND id NOT IN (` + strings.Repeat("?, ", len(live)-1) + `?)`
		for _, id := range live {
			args = append(args, id)
		}
	}
	res, err := tx.exec(q, args...)
	if err != nil {
		return 0, fmt.Errorf("store requeue orphaned requests of %s: %w", node, err)
	}
	n, err := res.RowsAffected()
	if n > 0 {
		tx.Notify(atoll.Change{Topic: atoll.TopicJob})
	}
	return int(n), err
}

// Request returns one request.
func (db *DB) Request(ctx context.Context, id int64) (*atoll.Request, error) {
	q, err := scanRequest(db.reader().QueryRowContext(ctx, `SELECT `+requestColumns+requestFrom+`WHERE q.id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Request not found.")
	} else if err != nil {
		return nil, fmt.Errorf("store request %d: %w", id, err)
	}
	return q, nil
}

// CountRequests counts requests in a state (metrics, tests).
func (db *DB) CountRequests(ctx context.Context, state string) (int, error) {
	var n int
	if err := db.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM requests WHERE state = ?`, state).Scan(&n); err != nil {
		return 0, fmt.Errorf("store count requests: %w", err)
	}
	return n, nil
}

// PullBusy reports whether a pull request has a request queued or running.
func (db *DB) PullBusy(ctx context.Context, pullID int64) (bool, error) {
	var n int
	err := db.reader().QueryRowContext(ctx, `SELECT COUNT(*) FROM requests WHERE pull_id = ? AND state IN ('queued', 'running')`, pullID).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store pull %d busy: %w", pullID, err)
	}
	return n > 0, nil
}

// driftSlots is DriftSlots, at least 1.
func (db *DB) driftSlots() int { return max(db.DriftSlots, 1) }
