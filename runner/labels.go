package runner

import (
	"context"
	"fmt"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// PullLabels are Atlantis's pull request label flags and the commit status
// silencing that goes with them.
type PullLabels struct {
	// DisableAutoplanLabel, DisableUnlockLabel and DisableAutomergeLabel
	// name labels that stop autoplan, the unlock comment and automerge on
	// the pull requests that carry them (--disable-autoplan-label, ...);
	// "" stops nothing.
	DisableAutoplanLabel, DisableUnlockLabel, DisableAutomergeLabel string
	// SilenceVCSStatusNoPlans: autoplan that finds no projects sets no
	// commit status (Atlantis sets 0/0 successes).
	SilenceVCSStatusNoPlans bool
	// SilenceVCSStatusNoProjects: the same for autoplan, and for a plan
	// comment that finds no projects when SilenceNoProjects keeps it from
	// being answered, as in Atlantis.
	SilenceVCSStatusNoProjects bool
}

// silenceNoProjectStatus reports whether a plan that found no projects
// leaves the commit statuses alone.
func (r *Runner) silenceNoProjectStatus(autoplan bool) bool {
	if autoplan {
		return r.SilenceVCSStatusNoPlans || r.SilenceVCSStatusNoProjects
	}
	return r.SilenceVCSStatusNoProjects && r.SilenceNoProjects
}

// autoplanLabeled reports whether autoplan stops for the pull request's
// --disable-autoplan-label. The pull request fetched here is the one the
// plan then uses: no call more. When it cannot be fetched autoplan goes on,
// as in Atlantis, and meets the error where it fetches it again.
func (r *Runner) autoplanLabeled(ctx context.Context, w *work) bool {
	if r.DisableAutoplanLabel == "" {
		return false
	}
	d, err := r.refresh(ctx, w)
	if err != nil {
		w.log.Warn("autoplan: labels unknown, planning", "err", err)
		return false
	}
	w.fetched = d
	if d.HasLabel(r.DisableAutoplanLabel) {
		w.log.Info("not autoplanning: the pull request has the --disable-autoplan-label label", "label", r.DisableAutoplanLabel)
		return true
	}
	return false
}

// refreshOnce is refresh, unless this request fetched the pull request
// already (autoplanLabeled): the second fetch would come a moment later.
func (r *Runner) refreshOnce(ctx context.Context, w *work) (*vcs.PullDetails, error) {
	if d := w.fetched; d != nil {
		w.fetched = nil
		return d, nil
	}
	return r.refresh(ctx, w)
}

// unlockRefused is the answer to an unlock comment on a pull request that
// carries --disable-unlock-label, "" when it may unlock. The labels are
// fetched now: unlock refreshes nothing else.
func (r *Runner) unlockRefused(ctx context.Context, w *work) string {
	if r.DisableUnlockLabel == "" {
		return ""
	}
	d, err := w.vcs.GetPull(ctx, *w.repo, w.pull.Number)
	if err != nil {
		w.log.Error("unlock: read the pull request's labels", "err", err)
		return "**Unlock refused**: the pull request's labels could not be read, so its locks were kept: " + atoll.ErrorMessage(err)
	}
	if d.HasLabel(r.DisableUnlockLabel) {
		w.log.Info("unlock refused: the pull request has the --disable-unlock-label label", "label", r.DisableUnlockLabel)
		return fmt.Sprintf("**Unlock refused**: this pull request has the label `%s`, which keeps its locks. Remove the label to unlock.", r.DisableUnlockLabel)
	}
	return ""
}

// automergeLabeled reports whether the pull request carries
// --disable-automerge-label. The apply jobs fetched the pull request just
// before; its labels from then are used.
func (r *Runner) automergeLabeled(ctx context.Context, w *work) (bool, error) {
	if r.DisableAutomergeLabel == "" {
		return false, nil
	}
	w.mu.Lock()
	d := w.last
	w.mu.Unlock()
	if d == nil {
		var err error
		if d, err = r.refresh(ctx, w); err != nil {
			return false, fmt.Errorf("automerge: read the pull request's labels: %w", err)
		}
	}
	if d.HasLabel(r.DisableAutomergeLabel) {
		w.log.Info("not automerging: the pull request has the --disable-automerge-label label", "label", r.DisableAutomergeLabel)
		return true, nil
	}
	return false, nil
}
