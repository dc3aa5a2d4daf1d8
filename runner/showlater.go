package runner

import (
	"context"
	"time"
)

// laterShow is a stored plan whose `show -json` is still to be made: the
// comment went out on plan's own summary, and the plan page's resource
// view follows (executor.Result.ShowLater).
type laterShow struct {
	planID, jobID int64
	show          func(context.Context) ([]byte, error)
}

// showLater queues plan planID's JSON for after the request's comments.
func (w *work) showLater(planID, jobID int64, show func(context.Context) ([]byte, error)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.later = append(w.later, laterShow{planID: planID, jobID: jobID, show: show})
}

// storeLaterShows makes and stores the JSON of the request's plans that
// were told without it, one after another, before the request gives its
// checkouts back (the plan files are in them). A canceled or stopping
// request leaves them without: the plan page then says so, and the plan
// still applies.
func (r *Runner) storeLaterShows(ctx context.Context, w *work) {
	w.mu.Lock()
	later := w.later
	w.later = nil
	w.mu.Unlock()
	if len(later) > 0 {
		r.sched.running.planDone(w.pull.ID, w.req.ID)
	}
	for _, l := range later {
		if ctx.Err() != nil {
			return
		}
		start := time.Now()
		show, err := l.show(ctx)
		if err != nil {
			w.log.Error("plan JSON", "job", l.jobID, "plan", l.planID, "err", err)
		}
		if len(show) == 0 {
			continue
		}
		if err := r.commit("store plan JSON", func(ctx context.Context) error { return r.DB.StorePlanJSON(ctx, l.planID, show) }); err != nil {
			w.log.Error("store plan JSON", "job", l.jobID, "plan", l.planID, "err", err)
			continue
		}
		w.log.Debug("terraform show", "job", l.jobID, "plan", l.planID, "ms", time.Since(start).Milliseconds())
	}
}
