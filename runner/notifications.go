package runner

import (
	"encoding/json"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/notify"
)

// Apply notifications (--webhooks-config): an apply that ran tells the
// destinations whose workspace and base branch regexps match, as Atlantis
// does once the apply's steps ran, whether they succeeded or not. The
// notifications are queued in the transaction that records the apply's
// final state, and sent by Notifications' loop.

// notifications are those apply job j's end queues, success or not.
func (r *Runner) notifications(w *work, j *atoll.Job, success bool) ([]atoll.Notification, error) {
	if r.Notifications == nil || r.Notifications.Sender == nil {
		return nil, nil
	}
	var notes []atoll.Notification
	var payload []byte
	for i, wh := range r.Notifications.Sender.Webhooks {
		if wh.Event != notify.EventApply || !wh.Matches(j.Workspace, w.pull.BaseRef) {
			continue
		}
		if payload == nil {
			var err error
			a := notify.Apply{Repo: *w.repo, Pull: *w.pull, HeadSHA: j.HeadSHA, User: j.User, Dir: j.Dir, Workspace: j.Workspace,
				Project: j.Project, Success: success, JobURL: r.reporter().jobURL(j.ID)}
			if payload, err = json.Marshal(a.Result()); err != nil {
				return nil, err
			}
		}
		notes = append(notes, atoll.Notification{JobID: j.ID, Dest: i, Kind: wh.Kind, Payload: payload})
	}
	return notes, nil
}

// applyRan records that apply job j started Terraform: from then on its
// end is notified, a failure too.
func (w *work) applyRan(id int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.applied == nil {
		w.applied = map[int64]bool{}
	}
	w.applied[id] = true
}

func (w *work) appliedJob(id int64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.applied[id]
}

// wakeNotifications tells the sender loop that notifications were queued.
func (r *Runner) wakeNotifications() {
	if r.notifyWake == nil {
		return
	}
	select {
	case r.notifyWake <- struct{}{}:
	default:
	}
}

// startNotifications starts the sender loop, stopped with the workers.
func (r *Runner) startNotifications() {
	if r.Notifications == nil {
		return
	}
	if r.Notifications.DB == nil {
		r.Notifications.DB = r.DB
	}
	if r.Notifications.Logger == nil {
		r.Notifications.Logger = r.Logger
	}
	r.notifyWake = make(chan struct{}, 1)
	r.sched.workers.Add(1)
	go func() {
		defer r.sched.workers.Done()
		r.Notifications.Run(r.sched.jobCtx, r.notifyWake, r.sched.stop)
	}()
}
