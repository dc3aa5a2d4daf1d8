package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/vcs"
)

// reporter tells a pull request what Atoll did: the comments, commit
// statuses and reactions posted to the request's host (through its work's
// provider), and the Markdown and links to Atoll's pages they carry. It
// holds the renderer and the settings that shape what is posted; it reads
// no store, runs nothing and decides nothing: the runner says what to tell.
type reporter struct {
	md         markdown.Renderer
	publicURL  string // base of links to Atoll's pages; "" links nothing
	statusName string // prefix of status contexts; "" is DefaultStatusName
	emoji      string // reaction to command comments; "" reacts not
	logger     *slog.Logger
}

// reporter is the runner's reporter, from its settings.
func (r *Runner) reporter() reporter {
	return reporter{md: r.Markdown, publicURL: r.PublicURL, statusName: r.StatusName, emoji: r.EmojiReaction, logger: r.Logger}
}

// interrupted comments on pull request number of repo (on host p) that job
// j stopped with the process that ran it.
func (rp reporter) interrupted(ctx context.Context, p vcs.Provider, repo *atoll.Repo, number int, j *atoll.Job) error {
	body := fmt.Sprintf("**%s interrupted** for dir: `%s` workspace: `%s`: %s", title(j.Kind), j.Dir, j.Workspace, j.Error)
	if j.Kind != atoll.JobPlan {
		body += "\n\nThe " + commandText(j.Kind) + " may have been partly done. Check the state, then run plan again."
	}
	_, err := p.CreateComment(ctx, *repo, number, body+"\n"+vcs.Marker("interrupted"))
	return err
}

// failure comments a request-level failure of command (bad config, a
// failed checkout) and sets the command's aggregate status failed.
func (rp reporter) failure(ctx context.Context, w *work, command string, err error) error {
	rp.status(ctx, w, w.pull.HeadSHA, command, "", vcs.StatusFailure, "Failed: see the pull request comment.", rp.pullURL(w))
	_, cerr := w.comment(ctx, rp.md.Error(command, atoll.ErrorMessage(err), vcs.Marker(command)))
	return cerr
}

// merge merges the pull request (automerge) and says how it went.
func (rp reporter) merge(ctx context.Context, w *work, opts vcs.MergeOptions) error {
	if err := w.vcs.Merge(ctx, *w.repo, w.pull.Number, opts); errors.Is(err, vcs.ErrMergeQueued) {
		w.log.Warn("automerge queued", "err", err)
		return rp.reply(ctx, w, "automerge", "Automerge queued, not merged yet: all plans were successfully applied and the merge was requested, but "+atoll.ErrorMessage(err))
	} else if errors.Is(err, vcs.ErrSourceBranchKept) {
		w.log.Warn("automerge kept the source branch", "branch", w.pull.HeadRef, "err", err)
		return rp.reply(ctx, w, "automerge", fmt.Sprintf("Automatically merged because all plans were successfully applied, but the source branch `%s` could not be deleted: %s", w.pull.HeadRef, atoll.ErrorMessage(err)))
	} else if err != nil {
		return rp.reply(ctx, w, "automerge", "Automerge failed: "+atoll.ErrorMessage(err))
	}
	return rp.reply(ctx, w, "automerge", "Automatically merged because all plans were successfully applied.")
}

// hidePrevious hides the pull request's earlier comments of command, all
// but those just posted (--hide-prev-plan-comments).
func (rp reporter) hidePrevious(ctx context.Context, w *work, command string, posted []string) {
	if err := w.vcs.HideComments(ctx, *w.repo, w.pull.Number, command, posted...); err != nil {
		w.log.Warn("hide earlier comments", "err", err)
	}
}

// dismissApprovals dismisses the pull request's approvals where the host
// can (--discard-approval-on-plan); a failure is logged.
func (rp reporter) dismissApprovals(ctx context.Context, w *work) {
	d, ok := vcs.As[vcs.ApprovalDismisser](w.vcs)
	if !ok {
		return
	}
	n, err := d.DismissApprovals(ctx, *w.repo, w.pull.Number)
	if err != nil {
		w.log.Error("discard approvals on plan", "err", err, "dismissed", n)
		return
	}
	w.log.Info("approvals discarded on plan", "dismissed", n)
}
