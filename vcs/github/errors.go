package github

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/atollhq/atoll"
	"github.com/google/go-github/v88/github"
)

// apiError wraps an API error with what was being done and, where the
// status means something to a user, an *atoll.Error code ahead of the
// original error so that atoll.ErrorCode finds it.
func apiError(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if code := errorCode(err); code != "" {
		coded := atoll.Errorf(code, "GitHub: %s: %s", what, codeText[code])
		return fmt.Errorf("github: %s: %w: %w", what, coded, err)
	}
	return fmt.Errorf("github: %s: %w", what, err)
}

var codeText = map[string]string{
	atoll.ENOTFOUND:    "not found",
	atoll.ECONFLICT:    "conflict",
	atoll.EUNAVAILABLE: "rate limited, try again later",
}

func errorCode(err error) string {
	var rl *github.RateLimitError
	var abuse *github.AbuseRateLimitError
	var er *github.ErrorResponse
	switch {
	case errors.As(err, &rl), errors.As(err, &abuse):
		return atoll.EUNAVAILABLE
	case errors.As(err, &er) && er.Response != nil:
		switch er.Response.StatusCode {
		case http.StatusNotFound:
			return atoll.ENOTFOUND
		// Merge answers 405 when the PR is not mergeable and 409 when the
		// head moved; both are conflicts the user can act on.
		case http.StatusMethodNotAllowed, http.StatusConflict:
			return atoll.ECONFLICT
		}
	}
	return ""
}
