package runner

import (
	"context"
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/vcs"
)

// Enqueue records a webhook and queues the work it asks for in one
// transaction, and returns once that is committed: the caller may then
// answer the webhook. Nothing slow (git, Terraform, VCS calls) happens here.
// It returns the queued request's id, 0 when the event asks for no work.
func (r *Runner) Enqueue(ctx context.Context, ev *vcs.Event) (int64, error) {
	it := intake{cfg: &r.Config, parser: &r.Parser, db: r.DB, authz: r, sched: &r.sched}
	return it.enqueue(ctx, ev)
}

// intake turns a webhook (a pull request event or a comment) into a
// durable request: the repository allowlist, whether the event asks for
// work at all (autoplan settings, comments addressed to Atoll), and, for a
// cancel, whether its user may; then one store transaction, after which
// the scheduler is woken (and a cancel interrupts the plans it cancels at
// once). It runs while the webhook's sender waits: nothing slow. The
// comment is parsed again, and authorised for everything else, when the
// request runs.
type intake struct {
	cfg    *Config // Allowlist, DisableAutoplan, AllowDraftPRs
	parser *command.Parser
	db     intakeStore
	authz  intakeAuthorizer
	sched  *scheduler
}

// intakeStore is what intake asks of the store: one transaction recording
// the event and queuing its request.
type intakeStore interface {
	Intake(ctx context.Context, in atoll.Intake) (queued bool, err error)
}

// intakeAuthorizer says whether ev's user may run cmd (--gh-team-allowlist,
// team_authz), bounded to what a webhook's sender can wait for.
type intakeAuthorizer interface {
	intakeTeamAllows(ctx context.Context, ev *vcs.Event, cmd string) bool
}

func (it *intake) enqueue(ctx context.Context, ev *vcs.Event) (int64, error) {
	if !it.cfg.Allowlist.Allows(ev.Repo.Host, ev.Repo.Owner, ev.Repo.Name) {
		return 0, atoll.Errorf(atoll.EFORBIDDEN, "Repository %s/%s is not in --repo-allowlist.", ev.Repo.Host, ev.Repo.FullName())
	}
	req := &atoll.Request{User: ev.User, HeadSHA: ev.Pull.HeadSHA, CommentID: ev.CommentID, Source: ev.Source}
	cancelQueued := false
	switch ev.Kind {
	case vcs.EventPullOpened, vcs.EventPullReopened, vcs.EventPullSynchronize, vcs.EventPullReady:
		if it.cfg.DisableAutoplan {
			return 0, nil
		}
		if ev.Draft && !it.cfg.AllowDraftPRs {
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
		cmd, err := it.parser.Parse(ev.Comment)
		if cmd == nil && err == nil {
			return 0, nil
		}
		// cancel acts at once: queued behind the requests it cancels, it
		// would only run after them.
		cancelQueued = cmd != nil && cmd.Name == command.Cancel && it.authz.intakeTeamAllows(ctx, ev, command.Cancel)
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
	queued, err := it.db.Intake(ctx, in)
	if err != nil {
		return 0, err
	}
	if !queued {
		return 0, nil
	}
	if cancelQueued {
		it.sched.running.cancelPlan(req.PullID, req.ID)
	}
	it.sched.Wake()
	return req.ID, nil
}

func itoa[T ~int | ~int64](n T) string { return strconv.FormatInt(int64(n), 10) }
