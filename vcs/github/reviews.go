package github

import (
	"context"

	"github.com/google/go-github/v88/github"

	"github.com/atollhq/atoll"
)

// dismissalMessage is what GitHub shows on a review Atoll dismissed.
const dismissalMessage = "Dismissed by Atoll: a new plan was run (--discard-approval-on-plan)."

// DismissApprovals dismisses every standing approval of pull request
// number, as Atlantis's --discard-approval-on-plan does: a reviewer must
// approve what the new plan says. Only a reviewer's latest review counts;
// an approval that a later review replaced is not dismissed again.
func (p *Provider) DismissApprovals(ctx context.Context, repo atoll.Repo, number int) (int, error) {
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return 0, err
	}
	latest := map[string]*github.PullRequestReview{}
	var order []string
	opts := &github.ListOptions{PerPage: perPage}
	for {
		reviews, resp, err := gh.PullRequests.ListReviews(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return 0, apiError(err, "list reviews of %s#%d", repo.FullName(), number)
		}
		for _, r := range reviews {
			switch r.GetState() {
			case "APPROVED", "CHANGES_REQUESTED", "DISMISSED":
				login := r.GetUser().GetLogin()
				if _, seen := latest[login]; !seen {
					order = append(order, login)
				}
				latest[login] = r
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	dismissed := 0
	for _, login := range order {
		r := latest[login]
		if r.GetState() != "APPROVED" {
			continue
		}
		req := &github.PullRequestReviewDismissalRequest{Message: github.Ptr(dismissalMessage)}
		if _, _, err := gh.PullRequests.DismissReview(ctx, repo.Owner, repo.Name, number, r.GetID(), req); err != nil {
			return dismissed, apiError(err, "dismiss review %d of %s#%d", r.GetID(), repo.FullName(), number)
		}
		dismissed++
	}
	return dismissed, nil
}
