package store

import (
	"context"

	"github.com/atollhq/atoll"
)

// The runner's job bookkeeping: each rule that spans writes is one method
// here, one transaction, so the runner composes none.

// StartJob marks job id running (ECONFLICT unless it was queued).
func (db *DB) StartJob(ctx context.Context, id int64) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.StartJob(id) })
}

// FinishJob records job id's final state with the notifications its end
// sends (an apply's), so both are committed or neither is.
func (db *DB) FinishJob(ctx context.Context, id int64, state, msg string, summary *atoll.Summary, notes []atoll.Notification) error {
	return db.Update(ctx, func(tx *Tx) error {
		if err := tx.FinishJob(id, state, msg, summary); err != nil {
			return err
		}
		for _, n := range notes {
			if _, err := tx.InsertNotification(n); err != nil {
				return err
			}
		}
		return nil
	})
}

// SkipJob records queued job j as not run, for reason. A plan, import or
// state rm that never ran gives back the lock its request took for it, in
// the same transaction; an apply keeps it: releasing would discard the plan
// it was to apply.
func (db *DB) SkipJob(ctx context.Context, j *atoll.Job, reason, source, releaseReason string) error {
	return db.Update(ctx, func(tx *Tx) error {
		if err := tx.FinishJob(j.ID, atoll.JobCanceled, reason, nil); err != nil {
			return err
		}
		if j.Kind == atoll.JobApply || !j.Spec.LockTaken {
			return nil
		}
		_, err := tx.ReleaseLocks(atoll.LockSelector{PullID: j.PullID, ProjectID: j.ProjectID}, j.User, source, "lock.release", releaseReason)
		return err
	})
}

// InsertJobs queues jobs (their IDs are set), all or none.
func (db *DB) InsertJobs(ctx context.Context, jobs []*atoll.Job) error {
	return db.Update(ctx, func(tx *Tx) error {
		for _, j := range jobs {
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	})
}

// QueueProjectJobs records each job's project (by name, dir and workspace)
// in repository repoID, sets the job's ProjectID and queues it: projects
// and jobs all or none.
func (db *DB) QueueProjectJobs(ctx context.Context, repoID int64, jobs []*atoll.Job) error {
	return db.Update(ctx, func(tx *Tx) error {
		for _, j := range jobs {
			id, err := tx.UpsertProject(repoID, atoll.Project{Name: j.Project, Dir: j.Dir, Workspace: j.Workspace})
			if err != nil {
				return err
			}
			j.ProjectID = id
			if err := tx.InsertJob(j); err != nil {
				return err
			}
		}
		return nil
	})
}

// MarkJobsReported records that the jobs' results were told.
func (db *DB) MarkJobsReported(ctx context.Context, ids []int64) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.MarkJobsReported(ids) })
}

// RequeueRunning puts the requests a stopped process left running back in
// the queue and marks their running jobs interrupted (tx.RequeueRunning),
// returning those jobs.
func (db *DB) RequeueRunning(ctx context.Context) ([]*atoll.Job, error) {
	var jobs []*atoll.Job
	err := db.Update(ctx, func(tx *Tx) (err error) {
		jobs, err = tx.RequeueRunning()
		return err
	})
	return jobs, err
}

// RequeueOrphans puts back in the queue the requests left running under
// node that none of its workers holds (live are those its workers hold),
// and returns how many. Such a request comes from a write whose outcome the
// runner could not know: a claim told "not replicated" is committed on this
// disk and reaches the replica with the next sync, yet no worker runs it.
// Nothing else requeues it while this node stays active (RequeueRunning
// runs at start), and every later request of its pull request waits
// behind it.
func (db *DB) RequeueOrphans(ctx context.Context, node string, live []int64) (int, error) {
	var n int
	err := db.Update(ctx, func(tx *Tx) (err error) {
		n, err = tx.RequeueOrphans(node, live)
		return err
	})
	return n, err
}

// CancelRequestJobs cancels the queued jobs of a request, with msg as their
// error.
func (db *DB) CancelRequestJobs(ctx context.Context, requestID int64, msg string) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.CancelRequestJobs(requestID, msg) })
}

// FinishRequest records request id's final state.
func (db *DB) FinishRequest(ctx context.Context, id int64, state, msg string) error {
	return db.Update(ctx, func(tx *Tx) error { return tx.FinishRequest(id, state, msg) })
}

// UpdatePull records the pull request's refreshed fields.
func (db *DB) UpdatePull(ctx context.Context, repoID int64, p atoll.Pull) error {
	return db.Update(ctx, func(tx *Tx) error {
		_, err := tx.UpsertPull(repoID, p)
		return err
	})
}

// ReleaseLocksWhere releases the locks sel selects (discarding their
// plans), each with its audit event (action, reason).
func (db *DB) ReleaseLocksWhere(ctx context.Context, sel atoll.LockSelector, actor, source, action, reason string) ([]*atoll.Lock, error) {
	var locks []*atoll.Lock
	err := db.Update(ctx, func(tx *Tx) (err error) {
		locks, err = tx.ReleaseLocks(sel, actor, source, action, reason)
		return err
	})
	return locks, err
}
