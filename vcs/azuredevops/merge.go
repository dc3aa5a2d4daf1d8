package azuredevops

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

// mergeStrategies maps Atoll's merge methods to Azure's completion
// strategies.
var mergeStrategies = map[string]git.GitPullRequestMergeStrategy{
	"":             git.GitPullRequestMergeStrategyValues.NoFastForward,
	"merge":        git.GitPullRequestMergeStrategyValues.NoFastForward,
	"squash":       git.GitPullRequestMergeStrategyValues.Squash,
	"rebase":       git.GitPullRequestMergeStrategyValues.Rebase,
	"rebase-merge": git.GitPullRequestMergeStrategyValues.RebaseMerge,
}

// mergeWait bounds how long Merge waits for a queued completion to end;
// the first look is after mergePoll, then each wait doubles.
const (
	mergeWait = 30 * time.Second
	mergePoll = time.Second
)

// sleep waits d or until ctx ends.
func (p *Provider) sleep(ctx context.Context, d time.Duration) error {
	if p.sleeper != nil {
		return p.sleeper(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Merge completes the pull request with method merge (the default),
// squash, rebase or rebase-merge. The completion names opts.HeadSHA, the
// commit that was applied, as the source commit, so Azure refuses (409)
// if someone pushed since. Azure deletes the source branch itself when
// opts.DeleteSourceBranch sets the completion option deleteSourceBranch.
//
// Completing is asynchronous on Azure DevOps: the answer may be the pull
// request still active with its merge queued. Merge then looks again, for
// up to mergeWait, and returns an error wrapping vcs.ErrMergeQueued if
// the completion has not ended by then.
func (p *Provider) Merge(ctx context.Context, repo atoll.Repo, number int, opts vcs.MergeOptions) error {
	strategy, ok := mergeStrategies[opts.Method]
	if !ok {
		return atoll.Errorf(atoll.EINVALID, "unknown merge method %q (want merge, squash, rebase or rebase-merge)", opts.Method)
	}
	if opts.HeadSHA == "" {
		return atoll.Errorf(atoll.EINVALID, "Merging %s#%d on Azure DevOps needs the commit that was applied.", repo.FullName(), number)
	}
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return err
	}
	pr, err := gc.GetPullRequest(ctx, git.GetPullRequestArgs{Project: &project, RepositoryId: &name, PullRequestId: &number})
	if err != nil {
		return apiError(err, "get pull %s#%d", repo.FullName(), number)
	}
	if st := deref(pr.Status); st != git.PullRequestStatusValues.Active {
		return atoll.Errorf(atoll.ECONFLICT, "Azure DevOps pull request %s#%d is %s, not active: nothing to merge.", repo.FullName(), number, st)
	}
	if head := sourceCommit(pr); head != "" && !strings.EqualFold(head, opts.HeadSHA) {
		return atoll.Errorf(atoll.ECONFLICT, "The head of %s#%d moved to %s after %s was applied: not merged. Plan and apply the new commit.",
			repo.FullName(), number, short(head), short(opts.HeadSHA))
	}
	update := &git.GitPullRequest{
		Status:                &git.PullRequestStatusValues.Completed,
		LastMergeSourceCommit: &git.GitCommitRef{CommitId: ptr(opts.HeadSHA)},
		CompletionOptions: &git.GitPullRequestCompletionOptions{
			MergeStrategy:      &strategy,
			DeleteSourceBranch: ptr(opts.DeleteSourceBranch),
		},
	}
	res, err := gc.UpdatePullRequest(ctx, git.UpdatePullRequestArgs{Project: &project, RepositoryId: &name, PullRequestId: &number, GitPullRequestToUpdate: update})
	if err != nil {
		return apiError(err, "merge %s#%d", repo.FullName(), number)
	}
	done, err := completionEnded(res, repo, number)
	for wait, waited := mergePoll, time.Duration(0); !done && err == nil; wait *= 2 {
		if waited >= mergeWait {
			return fmt.Errorf("%w: %w", vcs.ErrMergeQueued, atoll.Errorf(atoll.EUNAVAILABLE,
				"Azure DevOps queued the completion of %s#%d but had not completed it after %s; it may still complete (or fail) on its own.",
				repo.FullName(), number, mergeWait))
		}
		wait = min(wait, mergeWait-waited)
		if err := p.sleep(ctx, wait); err != nil {
			return err
		}
		waited += wait
		// A fresh client: the token may have been renewed meanwhile.
		if gc, _, _, err = p.repoClient(ctx, repo); err != nil {
			return err
		}
		if res, err = gc.GetPullRequest(ctx, git.GetPullRequestArgs{Project: &project, RepositoryId: &name, PullRequestId: &number}); err != nil {
			return apiError(err, "get pull %s#%d", repo.FullName(), number)
		}
		done, err = completionEnded(res, repo, number)
	}
	return err
}

// completionEnded tells from pr whether its completion ended: true and nil
// once completed, an error once it failed, false while it is queued.
func completionEnded(pr *git.GitPullRequest, repo atoll.Repo, number int) (bool, error) {
	if msg := deref(pr.MergeFailureMessage); msg != "" {
		return true, atoll.Errorf(atoll.ECONFLICT, "Azure DevOps did not merge %s#%d: %s", repo.FullName(), number, msg)
	}
	switch st := deref(pr.Status); st {
	case git.PullRequestStatusValues.Completed:
		return true, nil
	case git.PullRequestStatusValues.Active:
	default:
		return true, atoll.Errorf(atoll.ECONFLICT, "Azure DevOps pull request %s#%d is %s, not merged.", repo.FullName(), number, st)
	}
	switch ms := deref(pr.MergeStatus); ms {
	case git.PullRequestAsyncStatusValues.Conflicts, git.PullRequestAsyncStatusValues.Failure, git.PullRequestAsyncStatusValues.RejectedByPolicy:
		if pr.CompletionQueueTime == nil {
			return true, atoll.Errorf(atoll.ECONFLICT, "Azure DevOps did not merge %s#%d: its merge status is %s.", repo.FullName(), number, ms)
		}
	}
	return false, nil
}

// sourceCommit is the pull request's source commit as Azure last merged
// it, "" when not computed yet.
func sourceCommit(pr *git.GitPullRequest) string {
	if pr.LastMergeSourceCommit == nil {
		return ""
	}
	return deref(pr.LastMergeSourceCommit.CommitId)
}

// short abbreviates a commit id for messages.
func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
