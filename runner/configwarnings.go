package runner

import (
	"context"
	"strings"

	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
)

// configWarningsCommand is the marker of the comment that lists the
// atlantis.yaml keys Atoll accepts but does not act on.
const configWarningsCommand = "config-warnings"

// warnConfig posts cfg's warnings in one comment, so that a key Atoll does
// not act on is never dropped silently, and hides the previous such comment:
// only the newest plan's list stays in view. A failure to post is logged;
// the plan goes on.
func (rp reporter) warnConfig(ctx context.Context, w *work, cfg *repocfg.Config) {
	if cfg == nil || len(cfg.Warnings) == 0 {
		return
	}
	ctx, cancel := reportContext(ctx)
	defer cancel()
	var b strings.Builder
	b.WriteString("**Warning:** this pull request's atlantis.yaml sets keys Atoll accepts but does not act on yet:\n\n")
	for _, warn := range cfg.Warnings {
		b.WriteString("- " + warn + "\n")
	}
	b.WriteString("\nThe plan runs without them. See docs/migrating-from-atlantis.md.\n")
	id, err := w.comment(ctx, b.String()+vcs.Marker(configWarningsCommand))
	if err != nil {
		w.log.Warn("comment config warnings", "err", err)
		return
	}
	if err := w.vcs.HideComments(ctx, *w.repo, w.pull.Number, configWarningsCommand, id); err != nil {
		w.log.Warn("hide earlier config warnings", "err", err)
	}
}
