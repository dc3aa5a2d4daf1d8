package runner

import (
	"context"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/vcs"
)

// HandleEvent records a webhook and queues the work it asks for in one
// transaction, and returns once that is committed: the caller may then
// answer the webhook. Nothing slow (git, Terraform, VCS calls) happens here.
// It reports whether a request was queued.
func (r *Runner) HandleEvent(ctx context.Context, ev *vcs.Event) (bool, error) {
	id, err := r.Enqueue(ctx, ev)
	return id != 0, err
}

// Enqueue is HandleEvent returning the queued request's id (0: none).
func (r *Runner) Enqueue(ctx context.Context, ev *vcs.Event) (int64, error) {
	if !r.Allowlist.Allows(ev.Repo.Host, ev.Repo.Owner, ev.Repo.Name) {
		return 0, atoll.Errorf(atoll.EFORBIDDEN, "Repository %s/%s is not in --repo-allowlist.", ev.Repo.Host, ev.Repo.FullName())
	}
	req := &atoll.Request{User: ev.User, HeadSHA: ev.Pull.HeadSHA, CommentID: ev.CommentID, Source: ev.Source}
	cancelQueued := false
	switch ev.Kind {
	case vcs.EventPullOpened, vcs.EventPullReopened, vcs.EventPullSynchronize, vcs.EventPullReady:
		if r.DisableAutoplan {
			return 0, nil
		}
		if ev.Draft && !r.AllowDraftPRs {
			// As in Atlantis: drafts are not autoplanned (a plan comment
			// still plans); ready_for_review autoplans them later.
			return 0, nil
		}
		req.Kind = atoll.RequestAutoplan
	case vcs.EventPullClosed:
		req.Kind = atoll.RequestClose
		ev.Pull.State = atoll.PullClosed
		if ev.Merged {
			ev.Pull.State = atoll.PullMerged
		}
	case vcs.EventComment:
		// Comments that are not addressed to Atoll are ignored silently; bad
		// commands are queued so that the worker can answer with usage.
		cmd, err := r.Parser.Parse(ev.Comment)
		if cmd == nil && err == nil {
			return 0, nil
		}
		// cancel acts at once: queued behind the requests it cancels, it
		// would only run after them.
		cancelQueued = cmd != nil && cmd.Name == command.Cancel && r.intakeTeamAllows(ctx, ev, command.Cancel)
		req.Kind, req.Comment = atoll.RequestComment, ev.Comment
		if req.Source == "" {
			req.Source = atoll.SourcePRComment
		}
	default:
		return 0, nil
	}
	if req.Source == "" {
		req.Source = atoll.SourceWebhook
	}
	in := atoll.Intake{Repo: ev.Repo, DeliveryID: ev.DeliveryID, Kind: ev.Kind, Pull: ev.Pull, Sender: ev.User, Request: req,
		// Plans of the old head can never be applied; say so by
		// discarding them rather than leaving them pending.
		DiscardPlans: ev.Kind == vcs.EventPullSynchronize}
	if cancelQueued {
		in.CancelMark = cancelMark
	}
	queued, err := r.DB.Intake(ctx, in)
	if err != nil {
		return 0, err
	}
	if !queued {
		return 0, nil
	}
	if cancelQueued {
		r.sched.running.cancelPlan(req.PullID, req.ID)
	}
	r.Wake()
	return req.ID, nil
}

func itoa[T ~int | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }
