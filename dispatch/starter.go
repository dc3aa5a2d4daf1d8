package dispatch

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
)

// Starter starts the one claimant of each attempt of a pool's dispatches
// — a Kubernetes Job whose pod runs `atoll worker --once` with the
// attempt's one-time secret — and follows it. A starter's pool is not
// served to pool workers: each attempt is pinned to its claimant.
type Starter interface {
	// Start starts attempt's claimant, handing it secret. A claimant of
	// the same attempt that exists already (started before a restart or a
	// failover) is left as it is: nil.
	Start(ctx context.Context, c Claimant, secret string) error
	// Started reports whether attempt's claimant exists.
	Started(ctx context.Context, jobID int64, attempt int) (bool, error)
	// Follow sends what happens to attempt's claimant until it ends (an
	// event with Ended), then closes the channel; also when ctx ends.
	Follow(ctx context.Context, jobID int64, attempt int) (<-chan ClaimantEvent, error)
	// Stop removes attempt's claimant, killing it (a cancel). One that
	// does not exist is nil.
	Stop(ctx context.Context, jobID int64, attempt int) error
	// Describe names attempt's claimant for the job's log, e.g.
	// "Kubernetes Job atoll-job-7-1 (namespace ci)".
	Describe(jobID int64, attempt int) string
	// Where says where the pool's claimants run, for the workers page
	// ("namespace ci").
	Where() string
	// Sweep removes the running claimants keep says no dispatch waits on
	// (their job was canceled or ended while no node followed them).
	Sweep(ctx context.Context, keep func(jobID int64, attempt int) bool) error
}

// Claimant is one attempt of a job, as its claimant is started for it.
type Claimant struct {
	JobID   int64
	Attempt int
	Pool    string
	Repo    string
	Pull    int
	Project string
}

// ClaimantEvent is a step of a claimant: a note for the job's log (e.g.
// why its pod is pending, in the scheduler's words), or its end.
type ClaimantEvent struct {
	Note string
	// Ended is set once the claimant is gone; Failure then says why, in
	// the user's words ("killed: out of memory, limit 2Gi"), or is empty
	// when it exited normally.
	Ended   bool
	Failure string
}

// follower is the claimant a waiting job follows.
type follower struct {
	st      Starter
	attempt int
	ch      <-chan ClaimantEvent
	cancel  context.CancelFunc
	note    string // the last note written
	ended   bool   // it ended
}

func (f *follower) stop() {
	if f != nil && f.cancel != nil {
		f.cancel()
	}
}

// events is the channel to select on (nil: none).
func (f *follower) events() <-chan ClaimantEvent {
	if f == nil {
		return nil
	}
	return f.ch
}

// claimant starts (or adopts) the claimant of disp's attempt and follows
// it. secret is the attempt's pinning secret when this process made it
// ("" when an earlier node queued the attempt).
func (d *Dispatcher) claimant(ctx context.Context, w *waiter, st Starter, disp *atoll.Dispatch, secret string) (*follower, error) {
	write := context.WithoutCancel(ctx)
	name := st.Describe(w.jobID, disp.Attempt)
	switch disp.State {
	case atoll.DispatchQueued:
		if secret == "" {
			started, err := st.Started(ctx, w.jobID, disp.Attempt)
			if err != nil {
				return nil, d.cannotStart(write, w, disp, err)
			}
			if !started {
				// Queued by a node that stopped before it started the
				// claimant: its secret went with it.
				var hash []byte
				secret, hash = PinnedSecret()
				if _, err := d.Store.PinDispatch(write, w.jobID, disp.Attempt, hash); err != nil {
					return nil, err
				}
			}
		}
		if secret != "" {
			project := w.spec.Job.Project
			if project == "" {
				project = w.spec.Job.Dir // a project without a name is its dir
			}
			c := Claimant{JobID: w.jobID, Attempt: disp.Attempt, Pool: w.pool, Repo: w.spec.Job.Repo, Pull: w.spec.Job.Pull, Project: project}
			if err := st.Start(ctx, c, secret); err != nil {
				return nil, d.cannotStart(write, w, disp, err)
			}
			w.events.Write(atoll.StreamAtoll, "Started "+name+".")
		} else {
			w.events.Write(atoll.StreamAtoll, "Following "+name+", started before.")
		}
		w.events.Waiting(ctx, "Waiting for "+name+".")
		w.waited.Store(true)
	case atoll.DispatchClaimed:
		w.events.Write(atoll.StreamAtoll, "Following "+name+", which runs the job.")
	default:
		return nil, nil
	}
	fctx, cancel := context.WithCancel(ctx)
	ch, err := st.Follow(fctx, w.jobID, disp.Attempt)
	if err != nil {
		cancel()
		// Its lease still decides: the job is not lost for a watch.
		d.logger().Warn("follow claimant", "job", w.jobID, "claimant", name, "err", err)
		return &follower{st: st, attempt: disp.Attempt}, nil
	}
	return &follower{st: st, attempt: disp.Attempt, ch: ch, cancel: cancel}, nil
}

// cannotStart ends a dispatch whose claimant cannot be started.
func (d *Dispatcher) cannotStart(ctx context.Context, w *waiter, disp *atoll.Dispatch, err error) error {
	d.logger().Error("start claimant", "job", w.jobID, "pool", w.pool, "attempt", disp.Attempt, "err", err)
	if _, eerr := d.Store.EndDispatch(ctx, w.jobID, disp.Attempt, false, nil); eerr != nil {
		d.logger().Error("end dispatch", "job", w.jobID, "err", eerr)
	}
	return atoll.Errorf(atoll.EUNAVAILABLE, "Could not start the job's run in pool %s: %v", w.pool, err)
}

// claimantEvent handles a step of the followed claimant: a note is
// written to the job's log; an end without a result ends the attempt
// (gone returns the dispatch to follow next, nil when the job is over
// and err says how).
func (d *Dispatcher) claimantEvent(ctx context.Context, w *waiter, f *follower, ev ClaimantEvent) (next *atoll.Dispatch, err error) {
	if !ev.Ended {
		if ev.Note != "" && ev.Note != f.note {
			f.note = ev.Note
			w.events.Write(atoll.StreamAtoll, ev.Note)
		}
		return nil, nil
	}
	f.ended = true
	write := context.WithoutCancel(ctx)
	disp, err := d.Store.Dispatch(write, w.jobID)
	if err != nil {
		return nil, err
	}
	if disp.Attempt != f.attempt || (disp.State != atoll.DispatchQueued && disp.State != atoll.DispatchClaimed) {
		return disp, nil // it reported, or it was dealt with already
	}
	why := ev.Failure
	if why == "" {
		why = "it exited without reporting"
	}
	who := fmt.Sprintf("%s ended before its worker reported: %s", f.st.Describe(w.jobID, f.attempt), why)
	if disp.State == atoll.DispatchQueued {
		// It never claimed the job: the next attempt would fare the same.
		if _, err := d.Store.EndDispatch(write, w.jobID, disp.Attempt, false, nil); err != nil && atoll.ErrorCode(err) != atoll.ECONFLICT {
			return nil, err
		}
		// A pod no node runs, or whose image cannot be pulled, would
		// wait on: removed.
		if err := f.st.Stop(write, w.jobID, f.attempt); err != nil {
			d.logger().Warn("stop claimant", "job", w.jobID, "attempt", f.attempt, "err", err)
		}
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "Kubernetes could not run this %s: %s", w.spec.Job.Kind, why)
	}
	return d.lostClaim(write, w, disp, who, func(requeue bool, hash []byte) (*atoll.Dispatch, error) {
		return d.Store.EndDispatch(write, w.jobID, disp.Attempt, requeue, hash)
	})
}

// sweep removes, on the active node, the claimants no dispatch waits on.
func (d *Dispatcher) sweep(ctx context.Context) {
	for pool, st := range d.Starters {
		err := st.Sweep(ctx, func(jobID int64, attempt int) bool {
			disp, err := d.Store.Dispatch(ctx, jobID)
			if err != nil {
				return atoll.ErrorCode(err) != atoll.ENOTFOUND // unsure: keep
			}
			return disp.Attempt == attempt && disp.Live(time.Now())
		})
		if err != nil && ctx.Err() == nil {
			d.logger().Warn("sweep claimants", "pool", pool, "err", err)
		}
	}
}

// pinnedTo reports whether disp is pinned to hash (queued by this call).
func pinnedTo(disp *atoll.Dispatch, hash []byte) bool {
	return len(hash) > 0 && bytes.Equal(disp.ClaimHash, hash)
}
