package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/vcs"
)

// checkRequirements checks apply_requirements/plan_requirements against the
// pull request as the VCS reports it now.
func (r *Runner) checkRequirements(ctx context.Context, w *work, d *vcs.PullDetails, reqs []string, command, sha string) error {
	var unmet []string
	for _, req := range reqs {
		switch req {
		case "approved":
			if !d.Approved {
				unmet = append(unmet, "the pull request must be approved by someone other than its author")
			}
		case "mergeable":
			if !d.Mergeable {
				unmet = append(unmet, "the pull request must be mergeable")
			}
		case "undiverged":
			if !r.undiverged(ctx, w, d, sha) {
				unmet = append(unmet, "the branch must be up to date with "+d.BaseRef+" (merge or rebase it, then plan again)")
			}
		}
	}
	if len(unmet) == 0 {
		return nil
	}
	return atoll.Errorf(atoll.EFORBIDDEN, "Cannot %s: %s.", command, strings.Join(unmet, "; "))
}

// undiverged reports whether the base branch's current tip is contained in
// sha, i.e. nothing landed on the base since the branch was last updated.
func (r *Runner) undiverged(ctx context.Context, w *work, d *vcs.PullDetails, sha string) bool {
	root, err := r.checkout(ctx, w, atoll.DefaultWorkspace, sha)
	if err != nil || d.BaseSHA == "" {
		return false
	}
	if _, err := git.Run(ctx, root, nil, "cat-file", "-e", d.BaseSHA+"^{commit}"); err != nil {
		// The base moved to a commit the mirror has not seen: refetch.
		if _, err := git.Run(ctx, root, nil, "fetch", "--quiet", "origin"); err != nil {
			return false
		}
	}
	_, err = git.Run(ctx, root, nil, "merge-base", "--is-ancestor", d.BaseSHA, sha)
	if err != nil {
		w.log.Info("undiverged check failed", "base", d.BaseSHA, "head", sha, "err", fmt.Sprint(err))
	}
	return err == nil
}
