package runner

import (
	"context"

	"github.com/atollhq/atoll/vcs"
)

// react marks the command comment of the request with --emoji-reaction,
// as Atlantis does once it accepts a comment. Hosts without reactions
// (Azure DevOps) are skipped; a failure is logged and changes nothing.
func (rp reporter) react(ctx context.Context, w *work) {
	id := w.replyTo() // the host's id of the comment, for comments from webhooks only
	if rp.emoji == "" || id == "" {
		return
	}
	rc, ok := vcs.As[vcs.Reactor](w.vcs)
	if !ok {
		return
	}
	ctx, cancel := reportContext(ctx)
	defer cancel()
	if err := rc.React(ctx, *w.repo, w.pull.Number, id, rp.emoji); err != nil {
		w.log.Warn("react to the command comment", "reaction", rp.emoji, "comment", id, "err", err)
	}
}
