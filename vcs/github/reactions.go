package github

import (
	"context"
	"strconv"

	"github.com/atollhq/atoll"
)

// Reactions are the reaction contents GitHub accepts; anything else is
// answered 422.
var Reactions = []string{"+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes"}

// React adds reaction to the issue comment commentID (a pull request's
// conversation comment). GitHub answers 200 rather than 201 when the bot
// already reacted so: reacting twice is harmless.
func (p *Provider) React(ctx context.Context, repo atoll.Repo, number int, commentID, reaction string) error {
	id, err := strconv.ParseInt(commentID, 10, 64)
	if err != nil {
		return atoll.Errorf(atoll.EINVALID, "invalid GitHub comment id %q", commentID)
	}
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return err
	}
	if _, _, err := gh.Reactions.CreateIssueCommentReaction(ctx, repo.Owner, repo.Name, id, reaction); err != nil {
		return apiError(err, "react %s to comment %d on %s#%d", reaction, id, repo.FullName(), number)
	}
	return nil
}
