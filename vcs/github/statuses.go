package github

import (
	"context"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
	"github.com/google/go-github/v88/github"
)

// maxDescription is GitHub's limit on a status description; longer ones
// are rejected with 422.
const maxDescription = 140

// SetStatus creates a commit status on sha, or with Config.Checks creates
// or updates the check run named st.Context (see checks.go).
func (p *Provider) SetStatus(ctx context.Context, repo atoll.Repo, sha string, st vcs.Status) error {
	switch st.State {
	case vcs.StatusPending, vcs.StatusSuccess, vcs.StatusFailure, vcs.StatusError:
	default:
		return atoll.Errorf(atoll.EINVALID, "unknown commit status state %q", st.State)
	}
	if p.cfg.Checks {
		return p.setCheckRun(ctx, repo, sha, st)
	}
	gh, err := p.client(ctx, repo.Owner, repo.Name)
	if err != nil {
		return err
	}
	status := github.RepoStatus{
		State:       github.Ptr(st.State),
		Context:     github.Ptr(st.Context),
		Description: github.Ptr(truncate(st.Description, maxDescription)),
	}
	if st.TargetURL != "" {
		status.TargetURL = github.Ptr(st.TargetURL)
	}
	if _, _, err := gh.Repositories.CreateStatus(ctx, repo.Owner, repo.Name, sha, status); err != nil {
		return apiError(err, "set status %q on %s@%s", st.Context, repo.FullName(), sha)
	}
	return nil
}

// truncate shortens s to at most n characters, ending in "..." when cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-3]) + "..."
}
