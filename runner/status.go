package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/vcs"
)

// setStatus sets "atlantis/<command>" (aggregate, label "") or
// "atlantis/<command>: <label>" on sha. A failure to set a status is logged,
// not fatal: the comment still tells the user.
func (r *Runner) setStatus(ctx context.Context, p vcs.Provider, repo *atoll.Repo, sha, command, label, state, desc, url string) {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	if sha == "" {
		return
	}
	name := StatusName + "/" + command
	if label != "" {
		name += ": " + label
	}
	if err := p.SetStatus(ctx, *repo, sha, vcs.Status{State: state, Context: name, Description: desc, TargetURL: url}); err != nil {
		r.Logger.Error("set commit status", "repo", repo.FullName(), "context", name, "err", err)
	}
}

// report posts the results of a plan or apply as one comment (more when it
// is too long), hiding the earlier comments for the same command, and sets
// the aggregate status: for a plan, of this request's projects; for an
// apply, of the whole pull request (see setApplyStatus).
func (r *Runner) report(ctx context.Context, w *work, command, sha string, results []markdown.ProjectResult) error {
	ctx, cancel := reportContext(ctx)
	defer cancel()
	if command == "apply" {
		r.setApplyStatus(ctx, w, sha, true)
	} else {
		ok := 0
		for _, res := range results {
			if res.Error == "" && res.LockedBy == nil {
				ok++
			}
		}
		state := vcs.StatusSuccess
		if ok < len(results) {
			state = vcs.StatusFailure
		}
		r.setStatus(ctx, w.vcs, w.repo, sha, command, "", state, fmt.Sprintf("%d/%d projects planned successfully.", ok, len(results)), r.pullURL(w))
	}
	if err := w.vcs.HideComments(ctx, *w.repo, w.pull.Number, command); err != nil {
		w.log.Warn("hide earlier comments", "err", err)
	}
	for _, body := range r.Markdown.Results(command, results, vcs.Marker(command)) {
		if _, err := w.vcs.CreateComment(ctx, *w.repo, w.pull.Number, body); err != nil {
			return fmt.Errorf("comment %s results: %w", command, err)
		}
	}
	return nil
}

func (r *Runner) pullURL(w *work) string {
	if r.PublicURL == "" {
		return ""
	}
	return fmt.Sprintf("%s/repos/%s/pulls/%d", r.PublicURL, w.repo.FullName(), w.pull.Number)
}

// reportContext outlives a stop: when running jobs are interrupted, telling
// the pull request so is exactly what must still happen.
func reportContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
}
