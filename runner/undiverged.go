package runner

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
)

// divergedFiles returns the files that commits on the base branch, which
// the job's plan does not include, change in the job's project: what the
// undiverged requirement refuses. As in Atlantis, it only applies with the
// merge checkout strategy (a branch checkout plans the head as is, so
// nothing on the base can be lost by applying it), and only files the
// project's when_modified patterns match count, so that a monorepo's other
// projects moving on the base do not block this one.
//
// For an apply, the commits are those on the base now and neither in the
// head nor in the base the plan was merged onto; for a plan, those not in
// the head.
func (r *Runner) divergedFiles(ctx context.Context, w *work, j *atoll.Job, command string) ([]string, error) {
	if r.Workdirs.Strategy != git.StrategyMerge {
		return nil, nil
	}
	if w.pull.BaseRef == "" {
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "the pull request's base branch is not known yet")
	}
	// A merge-strategy checkout fetches the base branch's tip.
	root, err := r.checkout(ctx, w, atoll.DefaultWorkspace, j.HeadSHA)
	if err != nil {
		return nil, err
	}
	tip, err := originTip(ctx, root, w.pull.BaseRef)
	if err != nil {
		return nil, err
	}
	args := []string{"log", "--name-only", "--format=", tip, "^" + j.HeadSHA}
	if command == "apply" && j.Spec.BaseSHA != "" {
		args = append(args, "^"+j.Spec.BaseSHA)
	}
	out, err := git.Run(ctx, root, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("undiverged: files changed on %s: %w", w.pull.BaseRef, err)
	}
	var files []string
	for _, f := range strings.Split(out, "\n") {
		if f = strings.TrimSpace(f); f != "" && !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		return nil, nil
	}
	cfg, err := r.loadConfig(w, root)
	if err != nil {
		return nil, err
	}
	var hits []string
	for _, f := range files {
		ok, err := repocfg.Affected(cfg, root, j.Project, j.Dir, j.Workspace, []string{f})
		if err != nil {
			return nil, err
		}
		if ok {
			hits = append(hits, f)
		}
	}
	slices.Sort(hits)
	return hits, nil
}

// originTip is the commit of the base branch as a merge-strategy checkout
// last fetched it.
func originTip(ctx context.Context, root, baseRef string) (string, error) {
	sha, err := git.Run(ctx, root, nil, "rev-parse", "--verify", "--quiet", "refs/remotes/origin/"+baseRef+"^{commit}")
	if err != nil {
		return "", fmt.Errorf("base branch %s in checkout: %w", baseRef, err)
	}
	return sha, nil
}

// divergedText lists up to five files for a message.
func divergedText(files []string) string {
	quoted := make([]string, 0, 5)
	for i, f := range files {
		if i == 5 {
			quoted = append(quoted, fmt.Sprintf("and %d more", len(files)-5))
			break
		}
		quoted = append(quoted, "`"+f+"`")
	}
	return strings.Join(quoted, ", ")
}

// checkStale refuses, with the merge checkout strategy, to apply a plan
// whose base branch moved since the plan in files of its project: the
// apply would leave out what the base now has there. Atlantis applies such
// a plan (it only warns on plan); Atoll is stricter. The undiverged
// requirement, when set, has already said the same.
func (r *Runner) checkStale(ctx context.Context, w *work, d *vcs.PullDetails, j *atoll.Job) error {
	if j.Spec.BaseSHA == "" || slices.Contains(j.Spec.ApplyRequirements, "undiverged") {
		return nil // planned before the base was recorded, or checked already
	}
	files, err := r.divergedFiles(ctx, w, j, "apply")
	if err != nil {
		return fmt.Errorf("stale plan check: %w", err)
	}
	if len(files) == 0 {
		return nil
	}
	return atoll.Errorf(atoll.ECONFLICT, "%s the base branch %s moved since this project was planned on %s, changing files of this project (%s): run `%s plan` again to plan on top of it.",
		atoll.StalePlanPrefix, d.BaseRef, short(j.Spec.BaseSHA), divergedText(files), r.Parser.ExecutableName)
}

// mergedAgain reports whether a plan's merge checkout is on a newer base
// than the project's previous plan on this pull request, which the plan
// comment mentions as Atlantis does.
func (r *Runner) mergedAgain(ctx context.Context, j *atoll.Job) (bool, error) {
	if j.Spec.BaseSHA == "" {
		return false, nil
	}
	plans, err := r.DB.LatestPlans(ctx, j.PullID)
	if err != nil {
		return false, fmt.Errorf("previous plans: %w", err)
	}
	for _, p := range plans {
		if p.ProjectID != j.ProjectID {
			continue
		}
		prev, err := r.DB.Job(ctx, p.JobID)
		if err != nil {
			return false, fmt.Errorf("previous plan job %d: %w", p.JobID, err)
		}
		return prev.Spec.BaseSHA != "" && prev.Spec.BaseSHA != j.Spec.BaseSHA, nil
	}
	return false, nil
}
