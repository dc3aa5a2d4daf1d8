package azuredevops

import (
	"context"

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

// Merge completes the pull request with method merge (the default),
// squash, rebase or rebase-merge. Completing names the source commit
// Atoll saw, so Azure refuses (409) if someone pushed meanwhile. Azure
// deletes the source branch itself when opts.DeleteSourceBranch sets the
// completion option deleteSourceBranch.
func (p *Provider) Merge(ctx context.Context, repo atoll.Repo, number int, opts vcs.MergeOptions) error {
	strategy, ok := mergeStrategies[opts.Method]
	if !ok {
		return atoll.Errorf(atoll.EINVALID, "unknown merge method %q (want merge, squash, rebase or rebase-merge)", opts.Method)
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
	if pr.LastMergeSourceCommit == nil || deref(pr.LastMergeSourceCommit.CommitId) == "" {
		return atoll.Errorf(atoll.ECONFLICT, "Azure DevOps has not computed the merge of %s#%d yet; try again.", repo.FullName(), number)
	}
	update := &git.GitPullRequest{
		Status:                &git.PullRequestStatusValues.Completed,
		LastMergeSourceCommit: &git.GitCommitRef{CommitId: pr.LastMergeSourceCommit.CommitId},
		CompletionOptions: &git.GitPullRequestCompletionOptions{
			MergeStrategy:      &strategy,
			DeleteSourceBranch: ptr(opts.DeleteSourceBranch),
		},
	}
	res, err := gc.UpdatePullRequest(ctx, git.UpdatePullRequestArgs{Project: &project, RepositoryId: &name, PullRequestId: &number, GitPullRequestToUpdate: update})
	if err != nil {
		return apiError(err, "merge %s#%d", repo.FullName(), number)
	}
	// Completion is asynchronous: a failure shows on the answer, success
	// may still be on its way.
	if msg := deref(res.MergeFailureMessage); msg != "" {
		return atoll.Errorf(atoll.ECONFLICT, "Azure DevOps did not merge %s#%d: %s", repo.FullName(), number, msg)
	}
	return nil
}
