package github

import (
	"context"
	"slices"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/google/go-github/v88/github"
)

// Marker is the hidden HTML comment Atoll embeds in a comment it posts for
// command ("plan", "apply", ...), so that HideComments can find it later.
// It is vcs.Marker, so every host agrees on the format.
func Marker(command string) string { return vcs.Marker(command) }

// CreateComment posts body on the pull request's conversation and returns
// the new comment's id.
func (p *Provider) CreateComment(ctx context.Context, repo atoll.Repo, number int, body string) (string, error) {
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return "", err
	}
	c, _, err := gh.Issues.CreateComment(ctx, repo.Owner, repo.Name, number, &github.IssueComment{Body: github.Ptr(fitComment(body))})
	if err != nil {
		return "", apiError(err, "create comment on %s#%d", repo.FullName(), number)
	}
	return strconv.FormatInt(c.GetID(), 10), nil
}

// UpdateComment replaces the body of comment id. GitHub addresses issue
// comments by repository alone, so number only serves error messages.
func (p *Provider) UpdateComment(ctx context.Context, repo atoll.Repo, number int, id, body string) error {
	cid, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return atoll.Errorf(atoll.EINVALID, "invalid GitHub comment id %q", id)
	}
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return err
	}
	if _, _, err := gh.Issues.EditComment(ctx, repo.Owner, repo.Name, cid, &github.IssueComment{Body: github.Ptr(fitComment(body))}); err != nil {
		return apiError(err, "update comment %d on %s#%d", cid, repo.FullName(), number)
	}
	return nil
}

// HideComments minimizes, as outdated, the bot's earlier comments carrying
// Marker(command). Other users' comments are never touched, even if they
// quote the marker.
func (p *Provider) HideComments(ctx context.Context, repo atoll.Repo, number int, command string, keep ...string) error {
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return err
	}
	bot, err := p.botLogin(ctx)
	if err != nil {
		return err
	} else if bot == "" {
		return nil // cannot tell our comments apart: hide nothing
	}
	marker := Marker(command)
	var nodeIDs []string
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: perPage}}
	for {
		comments, resp, err := gh.Issues.ListComments(ctx, repo.Owner, repo.Name, number, opts)
		if err != nil {
			return apiError(err, "list comments on %s#%d", repo.FullName(), number)
		}
		for _, c := range comments {
			if strings.EqualFold(c.GetUser().GetLogin(), bot) && strings.Contains(c.GetBody(), marker) && c.GetNodeID() != "" &&
				!slices.Contains(keep, strconv.FormatInt(c.GetID(), 10)) {
				nodeIDs = append(nodeIDs, c.GetNodeID())
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	for _, id := range nodeIDs {
		err := p.minimizeComment(ctx, gh, id)
		if atoll.ErrorCode(err) == atoll.ENOTFOUND {
			continue // deleted since it was listed: nothing left to hide
		} else if err != nil {
			return apiError(err, "hide comment %s on %s#%d", id, repo.FullName(), number)
		}
	}
	return nil
}

// maxCommentChars is GitHub's limit on a comment body; longer ones are
// rejected with 422, which would lose the whole plan output.
const maxCommentChars = 65536

// MaxCommentChars is GitHub's limit on a comment (vcs.CommentLimiter).
func (p *Provider) MaxCommentChars() int { return maxCommentChars }

var _ vcs.CommentLimiter = (*Provider)(nil)

// fitComment truncates body to the host's limit (see vcs.FitComment).
func fitComment(body string) string { return vcs.FitComment(body, maxCommentChars, "GitHub's") }
