package github

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/google/go-github/v88/github"
)

// perPage is GitHub's maximum page size; fewer pages, fewer rate-limit hits.
const perPage = 100

// GetPull fetches the pull request and its reviews.
func (p *Provider) GetPull(ctx context.Context, repo atoll.Repo, number int) (*vcs.PullDetails, error) {
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return nil, err
	}
	pr, _, err := gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
	if err != nil {
		return nil, apiError(err, "get pull %s#%d", repo.FullName(), number)
	}
	if pr == nil {
		// A 200 with a JSON null: never github.com, but a proxy in between
		// can. Reading pr's fields would panic and end the process.
		return nil, fmt.Errorf("github: get pull %s#%d: %w", repo.FullName(), number,
			atoll.Errorf(atoll.EUNAVAILABLE, "GitHub answered without the pull request."))
	}
	approved, err := p.approved(ctx, gh, repo, number, pr.GetUser().GetLogin())
	if err != nil {
		return nil, err
	}
	// A deleted fork leaves no head repository: still a fork.
	head := pr.GetHead().GetRepo().GetFullName()
	return &vcs.PullDetails{
		Pull:      pullFromAPI(repo, pr),
		Approved:  approved,
		Mergeable: p.mergeableOrBypass(ctx, gh, repo, pr),
		Fork:      !strings.EqualFold(head, pr.GetBase().GetRepo().GetFullName()),
		Labels:    labelNames(pr.Labels),
	}, nil
}

// approved reports whether someone other than the author has an approval
// standing. A reviewer's latest APPROVED, CHANGES_REQUESTED or DISMISSED
// review is their verdict; COMMENTED and PENDING reviews do not change it,
// as on GitHub itself.
func (p *Provider) approved(ctx context.Context, gh *github.Client, repo atoll.Repo, number int, author string) (bool, error) {
	verdict := map[string]string{}
	opts := &github.ListOptions{PerPage: perPage}
	for {
		reviews, resp, err := gh.PullRequests.ListReviews(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return false, apiError(err, "list reviews of %s#%d", repo.FullName(), number)
		}
		// GitHub lists reviews oldest first, so later ones overwrite.
		for _, r := range reviews {
			switch state := r.GetState(); state {
			case "APPROVED", "CHANGES_REQUESTED", "DISMISSED":
				verdict[strings.ToLower(r.GetUser().GetLogin())] = state
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	delete(verdict, strings.ToLower(author))
	for _, state := range verdict {
		if state == "APPROVED" {
			return true, nil
		}
	}
	return false, nil
}

// mergeable follows Atlantis loosely: GitHub must say mergeable, and the
// state must not be one that blocks the merge button. mergeable is null
// while GitHub is still computing it, which counts as not mergeable.
func mergeable(pr *github.PullRequest) bool {
	if !pr.GetMergeable() {
		return false
	}
	switch pr.GetMergeableState() {
	case "blocked", "dirty", "draft":
		return false
	}
	return true
}

// ChangedFiles lists the paths the pull request touches. A rename yields
// both the old and the new path, since a project can be affected by a file
// moving out of it.
func (p *Provider) ChangedFiles(ctx context.Context, repo atoll.Repo, number int) ([]string, error) {
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return nil, err
	}
	var paths []string
	opts := &github.ListOptions{PerPage: perPage}
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return nil, apiError(err, "list files of %s#%d", repo.FullName(), number)
		}
		for _, f := range files {
			paths = append(paths, f.GetFilename())
			if prev := f.GetPreviousFilename(); prev != "" {
				paths = append(paths, prev)
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	return paths, nil
}

// Merge merges the pull request with method merge (default), squash or
// rebase, then, with opts.DeleteSourceBranch, deletes its head branch
// unless that lives in a fork (Atoll has no right to a fork's branches).
func (p *Provider) Merge(ctx context.Context, repo atoll.Repo, number int, opts vcs.MergeOptions) error {
	method := opts.Method
	switch method {
	case "":
		method = "merge"
	case "merge", "squash", "rebase":
	default:
		return atoll.Errorf(atoll.EINVALID, "unknown merge method %q (want merge, squash or rebase)", method)
	}
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return err
	}
	// The head branch is read before merging: a merged pull request still
	// names it, but reading first keeps a failed read from hiding a merge.
	var head string
	if opts.DeleteSourceBranch {
		pr, _, err := gh.PullRequests.Get(ctx, repo.Owner, repo.Name, number)
		if err != nil {
			return apiError(err, "get pull %s#%d", repo.FullName(), number)
		}
		if strings.EqualFold(pr.GetHead().GetRepo().GetFullName(), pr.GetBase().GetRepo().GetFullName()) {
			head = pr.GetHead().GetRef()
		}
	}
	res, _, err := gh.PullRequests.Merge(ctx, repo.Owner, repo.Name, number, "", &github.PullRequestOptions{MergeMethod: method})
	if err != nil {
		return apiError(err, "merge %s#%d", repo.FullName(), number)
	}
	if !res.GetMerged() {
		return atoll.Errorf(atoll.ECONFLICT, "GitHub did not merge %s#%d: %s", repo.FullName(), number, res.GetMessage())
	}
	if head == "" {
		return nil
	}
	return p.deleteBranch(ctx, gh, repo, head)
}

// deleteBranch deletes refs/heads/branch. A branch already gone (the
// repository's "automatically delete head branches" setting got there
// first: 422 "Reference does not exist") is not an error.
func (p *Provider) deleteBranch(ctx context.Context, gh *github.Client, repo atoll.Repo, branch string) error {
	_, err := gh.Git.DeleteRef(ctx, repo.Owner, repo.Name, "heads/"+branch)
	var er *github.ErrorResponse
	if err == nil || (errors.As(err, &er) && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity &&
		strings.Contains(er.Message, "Reference does not exist")) {
		return nil
	}
	if er != nil && er.Response != nil && er.Response.StatusCode == http.StatusUnprocessableEntity {
		// A protected branch, a ruleset: GitHub's reason is for the user.
		coded := atoll.Errorf(atoll.ECONFLICT, "GitHub refused to delete branch %s: %s", branch, er.Message)
		return fmt.Errorf("%w: %w: %w", vcs.ErrSourceBranchKept, coded, err)
	}
	return fmt.Errorf("%w: %w", vcs.ErrSourceBranchKept, apiError(err, "delete branch %s of %s", branch, repo.FullName()))
}

// pullFromAPI converts the pull request object that both the REST API and
// pull_request webhooks carry.
func pullFromAPI(repo atoll.Repo, pr *github.PullRequest) atoll.Pull {
	// Only the merged flag counts: GitHub's own example response has an
	// open PR with merged_at set.
	state := pr.GetState()
	if pr.GetMerged() {
		state = atoll.PullMerged
	}
	return atoll.Pull{
		Repo:      repo.FullName(),
		Number:    pr.GetNumber(),
		Title:     pr.GetTitle(),
		Author:    pr.GetUser().GetLogin(),
		HeadSHA:   pr.GetHead().GetSHA(),
		HeadRef:   pr.GetHead().GetRef(),
		BaseSHA:   pr.GetBase().GetSHA(),
		BaseRef:   pr.GetBase().GetRef(),
		State:     state,
		URL:       pr.GetHTMLURL(),
		CreatedAt: pr.GetCreatedAt().Time,
		UpdatedAt: pr.GetUpdatedAt().Time,
	}
}

// labelNames are the names of a pull request's labels, which GitHub sends
// with the pull request itself: no call more.
func labelNames(labels []*github.Label) []string {
	var names []string
	for _, l := range labels {
		if n := l.GetName(); n != "" {
			names = append(names, n)
		}
	}
	return names
}
