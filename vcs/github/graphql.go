package github

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/google/go-github/v88/github"
)

// Minimizing a comment exists only in GraphQL. OUTDATED is what GitHub's
// own "Hide > Outdated" menu uses.
const minimizeCommentMutation = `mutation($id: ID!) {
  minimizeComment(input: {subjectId: $id, classifier: OUTDATED}) {
    minimizedComment { isMinimized }
  }
}`

func (p *Provider) minimizeComment(ctx context.Context, gh *github.Client, nodeID string) error {
	return p.graphql(ctx, gh, minimizeCommentMutation, map[string]any{"id": nodeID})
}

type graphqlError struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// graphql posts one query through gh, so it carries the same auth,
// user agent and rate-limit handling as REST calls. GitHub answers GraphQL
// errors with 200 and an "errors" list, which is turned into an error here.
func (p *Provider) graphql(ctx context.Context, gh *github.Client, query string, vars map[string]any) error {
	req, err := gh.NewRequest(ctx, http.MethodPost, p.graphqlURL, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return err
	}
	var out struct {
		Errors []graphqlError `json:"errors"`
	}
	if _, err := gh.Do(req, &out); err != nil {
		return err
	}
	if len(out.Errors) == 0 {
		return nil
	}
	msgs := make([]string, len(out.Errors))
	for i, e := range out.Errors {
		msgs[i] = e.Message
	}
	err = errors.New("graphql: " + strings.Join(msgs, "; "))
	if out.Errors[0].Type == "NOT_FOUND" {
		return errors.Join(atoll.Errorf(atoll.ENOTFOUND, "GitHub: comment not found"), err)
	}
	return err
}
