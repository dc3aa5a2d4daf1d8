package azuredevops

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/core"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

// Reviewer votes, as Azure DevOps reports them.
const (
	voteApproved               = 10
	voteApprovedWithSuggestion = 5
	voteWaitingForAuthor       = -5
	voteRejected               = -10
)

// GetPull fetches the pull request; its reviewers and their votes come
// with it. Mergeable also reads the pull request's branch policy
// evaluations (see blockingPolicy).
func (p *Provider) GetPull(ctx context.Context, repo atoll.Repo, number int) (*vcs.PullDetails, error) {
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return nil, err
	}
	pr, err := gc.GetPullRequest(ctx, git.GetPullRequestArgs{Project: &project, RepositoryId: &name, PullRequestId: &number})
	if err != nil {
		return nil, apiError(err, "get pull %s#%d", repo.FullName(), number)
	}
	author := ""
	if pr.CreatedBy != nil {
		author = deref(pr.CreatedBy.UniqueName)
	}
	approved, blocked := votes(pr.Reviewers, author)
	// Azure computes the merge asynchronously: only a finished, clean one
	// counts, and a draft or a standing rejection blocks completion.
	mergeable := pr.MergeStatus != nil && *pr.MergeStatus == git.PullRequestAsyncStatusValues.Succeeded &&
		!deref(pr.IsDraft) && !blocked
	if mergeable {
		why, err := p.blockingPolicy(ctx, gc, project, pr)
		switch {
		case err != nil:
			// Not knowing what the policies say must not let an apply
			// through that Azure DevOps would block.
			p.log.Error("azuredevops: reading branch policy evaluations failed; the pull request counts as not mergeable",
				"repo", repo.FullName(), "pull", number, "err", apiError(err, "list policy evaluations of %s#%d", repo.FullName(), number))
			mergeable = false
		case why != "":
			p.log.Info("azuredevops: a branch policy blocks the pull request", "repo", repo.FullName(), "pull", number, "policy", why)
			mergeable = false
		}
	}
	return &vcs.PullDetails{
		Pull:      p.pullFromAPI(repo, number, pr),
		Approved:  approved && !blocked,
		Mergeable: mergeable,
		Fork:      pr.ForkSource != nil,
		Labels:    tagNames(pr.Labels),
	}, nil
}

// votes reports whether a reviewer other than the author approved and
// whether any reviewer blocks. Approved (10) and approved with
// suggestions (5) approve, as in Atlantis and in Azure DevOps's
// minimum-reviewers policy; waiting for the author (-5) and rejected (-10)
// block, from anyone, whatever the other votes. Group votes roll up from
// their members, so only individual reviewers are counted.
func votes(reviewers *[]git.IdentityRefWithVote, author string) (approved, blocked bool) {
	if reviewers == nil {
		return false, false
	}
	for _, r := range *reviewers {
		if deref(r.IsContainer) {
			continue
		}
		v := deref(r.Vote)
		switch {
		case v <= voteWaitingForAuthor:
			blocked = true
		case v >= voteApprovedWithSuggestion && !strings.EqualFold(deref(r.UniqueName), author):
			approved = true
		}
	}
	return approved, blocked
}

// pullFromAPI converts the pull request object the REST API and service
// hooks carry. Its URL is the web page, built from the configured host:
// the API's own url field is the REST resource.
func (p *Provider) pullFromAPI(repo atoll.Repo, number int, pr *git.GitPullRequest) atoll.Pull {
	pull := atoll.Pull{
		Repo:    repo.FullName(),
		Number:  number,
		Title:   deref(pr.Title),
		HeadRef: strings.TrimPrefix(deref(pr.SourceRefName), "refs/heads/"),
		BaseRef: strings.TrimPrefix(deref(pr.TargetRefName), "refs/heads/"),
		State:   atoll.PullOpen,
	}
	if pr.PullRequestId != nil {
		pull.Number = *pr.PullRequestId
	}
	if pr.CreatedBy != nil {
		pull.Author = deref(pr.CreatedBy.UniqueName)
	}
	if pr.LastMergeSourceCommit != nil {
		pull.HeadSHA = deref(pr.LastMergeSourceCommit.CommitId)
	}
	if pr.LastMergeTargetCommit != nil {
		pull.BaseSHA = deref(pr.LastMergeTargetCommit.CommitId)
	}
	if pr.Status != nil {
		switch *pr.Status {
		case git.PullRequestStatusValues.Completed:
			pull.State = atoll.PullMerged
		case git.PullRequestStatusValues.Abandoned:
			pull.State = atoll.PullClosed
		}
	}
	if pr.CreationDate != nil {
		pull.CreatedAt = pr.CreationDate.Time
		pull.UpdatedAt = pr.CreationDate.Time
	}
	if pr.ClosedDate != nil && !pr.ClosedDate.Time.IsZero() {
		pull.UpdatedAt = pr.ClosedDate.Time
	}
	if org, project, name, err := repoPath(repo); err == nil {
		pull.URL = p.webURL(org, project, name) + "/pullrequest/" + strconv.Itoa(pull.Number)
	}
	return pull
}

// webURL is a repository's page (and git URL): ORGURL/PROJECT/_git/REPO.
func (p *Provider) webURL(org, project, name string) string {
	return p.orgURL(org) + "/" + url.PathEscape(project) + "/_git/" + url.PathEscape(name)
}

func deref[T any](v *T) T {
	var zero T
	if v == nil {
		return zero
	}
	return *v
}

// tagNames are the names of a pull request's tags (Azure DevOps calls a
// pull request's labels tags), which come with the pull request. A tag
// marked inactive is no longer on it.
func tagNames(tags *[]core.WebApiTagDefinition) []string {
	if tags == nil {
		return nil
	}
	var names []string
	for _, t := range *tags {
		if n := deref(t.Name); n != "" && (t.Active == nil || *t.Active) {
			names = append(names, n)
		}
	}
	return names
}
