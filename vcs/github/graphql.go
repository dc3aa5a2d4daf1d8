package github

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// graphql posts one mutation through gh, so it carries the same auth,
// user agent and rate-limit handling as REST calls. GitHub answers GraphQL
// errors with 200 and an "errors" list, which is turned into an error here.
func (p *Provider) graphql(ctx context.Context, gh *github.Client, query string, vars map[string]any) error {
	gqlErrs, err := p.graphqlQuery(ctx, gh, query, vars, nil)
	if err != nil || len(gqlErrs) == 0 {
		return err
	}
	err = graphqlErrors(gqlErrs)
	if gqlErrs[0].Type == "NOT_FOUND" {
		return errors.Join(atoll.Errorf(atoll.ENOTFOUND, "GitHub: comment not found"), err)
	}
	return err
}

// graphqlQuery posts query and decodes its "data" into data (when not
// nil). It returns the "errors" GitHub answered with for the caller to
// judge, and an error only when the request itself failed.
func (p *Provider) graphqlQuery(ctx context.Context, gh *github.Client, query string, vars map[string]any, data any) ([]graphqlError, error) {
	req, err := gh.NewRequest(ctx, http.MethodPost, p.graphqlURL, map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, err
	}
	var out struct {
		Data   json.RawMessage `json:"data"`
		Errors []graphqlError  `json:"errors"`
	}
	if _, err := gh.Do(req, &out); err != nil {
		return nil, err
	}
	if data != nil && len(out.Data) > 0 && string(out.Data) != "null" {
		if err := json.Unmarshal(out.Data, data); err != nil {
			return nil, fmt.Errorf("graphql: decode data: %w", err)
		}
	}
	return out.Errors, nil
}

// graphqlErrors joins GitHub's GraphQL error messages into one error.
func graphqlErrors(gqlErrs []graphqlError) error {
	msgs := make([]string, len(gqlErrs))
	for i, e := range gqlErrs {
		msgs[i] = e.Message
	}
	return errors.New("graphql: " + strings.Join(msgs, "; "))
}
