// Package local is a VCS host without a host: git repositories on disk, with
// pull requests, comments, statuses and approvals kept in Atoll's database.
// The demo and the tests use it; comments arrive through the JSON API.
package local

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
)

// Bot is the author of the comments Atoll posts.
const Bot = "atoll"

// Provider implements vcs.Provider over local repositories.
type Provider struct {
	DB *store.DB
}

var _ vcs.Provider = (*Provider)(nil)

// Kind implements vcs.Provider.
func (p *Provider) Kind() string { return atoll.VCSLocal }

// CheckWebhook implements vcs.Provider: local repositories send no webhooks.
func (p *Provider) CheckWebhook(http.Header) error {
	return atoll.Errorf(atoll.ENOTIMPLEMENTED, "Local repositories do not send webhooks.")
}

// ParseWebhook implements vcs.Provider: local repositories send no webhooks.
func (p *Provider) ParseWebhook(*http.Request, []byte) (*vcs.Event, error) {
	return nil, atoll.Errorf(atoll.ENOTIMPLEMENTED, "Local repositories do not send webhooks.")
}

// repoDir is the repository's path on disk (its clone URL is file://path).
func repoDir(repo atoll.Repo) (string, error) {
	u, err := url.Parse(repo.CloneURL)
	if err != nil || u.Scheme != "file" {
		return "", fmt.Errorf("local repo %s: clone URL is not file://", repo.FullName())
	}
	return u.Path, nil
}

// GetPull implements vcs.Provider. The head and base SHAs are read from the
// repository's branches, so a push to the head branch is seen at once.
func (p *Provider) GetPull(ctx context.Context, repo atoll.Repo, number int) (*vcs.PullDetails, error) {
	pull, err := p.DB.PullByNumber(ctx, repo.FullName(), number)
	if err != nil {
		return nil, err
	}
	dir, err := repoDir(repo)
	if err != nil {
		return nil, err
	}
	if pull.State == atoll.PullOpen {
		if pull.HeadSHA, err = git.Run(ctx, dir, nil, "rev-parse", "refs/heads/"+pull.HeadRef); err != nil {
			return nil, fmt.Errorf("local pull %d head: %w", number, err)
		}
		if pull.BaseSHA, err = git.Run(ctx, dir, nil, "rev-parse", "refs/heads/"+pull.BaseRef); err != nil {
			return nil, fmt.Errorf("local pull %d base: %w", number, err)
		}
	}
	approvers, err := p.DB.Approvers(ctx, pull.ID)
	if err != nil {
		return nil, err
	}
	// A local pull request has no review anywhere else: an approval of one
	// of its pending plans in Atoll (valid, of the plan's current file)
	// counts as an approving review, so apply_requirements [approved]
	// can be met from the dashboard.
	planApprovers, err := p.DB.PlanApprovers(ctx, pull.ID)
	if err != nil {
		return nil, err
	}
	approvers = append(approvers, planApprovers...)
	approved := false
	for _, a := range approvers {
		approved = approved || a != pull.Author
	}
	mergeable := false
	if pull.State == atoll.PullOpen {
		_, err := git.Run(ctx, dir, nil, "merge-tree", "--write-tree", pull.BaseSHA, pull.HeadSHA)
		mergeable = err == nil
	}
	// A local pull request has no labels: --disable-*-label never matches.
	return &vcs.PullDetails{Pull: *pull, Approved: approved, Mergeable: mergeable}, nil
}

// ChangedFiles implements vcs.Provider: the files changed since the merge base.
func (p *Provider) ChangedFiles(ctx context.Context, repo atoll.Repo, number int) ([]string, error) {
	d, err := p.GetPull(ctx, repo, number)
	if err != nil {
		return nil, err
	}
	dir, err := repoDir(repo)
	if err != nil {
		return nil, err
	}
	out, err := git.Run(ctx, dir, nil, "diff", "--name-only", "--no-renames", d.BaseSHA+"..."+d.HeadSHA)
	if err != nil {
		return nil, fmt.Errorf("local pull %d changed files: %w", number, err)
	}
	if out == "" {
		return nil, nil
	}
	return strings.Split(out, "\n"), nil
}

func (p *Provider) pullID(ctx context.Context, repo atoll.Repo, number int) (int64, error) {
	pull, err := p.DB.PullByNumber(ctx, repo.FullName(), number)
	if err != nil {
		return 0, err
	}
	return pull.ID, nil
}

// CreateComment implements vcs.Provider.
func (p *Provider) CreateComment(ctx context.Context, repo atoll.Repo, number int, body string) (string, error) {
	pullID, err := p.pullID(ctx, repo, number)
	if err != nil {
		return "", err
	}
	id, err := p.DB.AddComment(ctx, pullID, Bot, body)
	return fmt.Sprint(id), err
}

// UpdateComment implements vcs.Provider.
func (p *Provider) UpdateComment(ctx context.Context, repo atoll.Repo, number int, id, body string) error {
	cid, err := atoll.ParseID(id)
	if err != nil {
		return err
	}
	return p.DB.UpdateComment(ctx, cid, body)
}

// HideComments implements vcs.Provider.
func (p *Provider) HideComments(ctx context.Context, repo atoll.Repo, number int, command string, keep ...string) error {
	pullID, err := p.pullID(ctx, repo, number)
	if err != nil {
		return err
	}
	var keepIDs []int64
	for _, k := range keep {
		id, err := atoll.ParseID(k)
		if err != nil {
			return err
		}
		keepIDs = append(keepIDs, id)
	}
	return p.DB.HideComments(ctx, pullID, Bot, vcs.Marker(command), keepIDs...)
}

// SetStatus implements vcs.Provider.
func (p *Provider) SetStatus(ctx context.Context, repo atoll.Repo, sha string, st vcs.Status) error {
	return p.DB.SetStatus(ctx, repo.ID, atoll.CommitStatus{SHA: sha, Context: st.Context, State: st.State, Description: st.Description, TargetURL: st.TargetURL})
}

// CloneURL implements vcs.Provider.
func (p *Provider) CloneURL(ctx context.Context, repo atoll.Repo) (string, error) {
	if _, err := repoDir(repo); err != nil {
		return "", err
	}
	return repo.CloneURL, nil
}

// Merge implements vcs.Provider with a real merge commit on the base branch,
// made without a work tree (git merge-tree), then marks the pull merged
// and, with opts.DeleteSourceBranch, deletes its head branch.
func (p *Provider) Merge(ctx context.Context, repo atoll.Repo, number int, opts vcs.MergeOptions) error {
	d, err := p.GetPull(ctx, repo, number)
	if err != nil {
		return err
	}
	dir, err := repoDir(repo)
	if err != nil {
		return err
	}
	tree, err := git.Run(ctx, dir, nil, "merge-tree", "--write-tree", d.BaseSHA, d.HeadSHA)
	if err != nil {
		return atoll.Errorf(atoll.ECONFLICT, "Pull request #%d cannot be merged cleanly.", number)
	}
	env := []string{"GIT_AUTHOR_NAME=Atoll", "GIT_AUTHOR_EMAIL=atoll@localhost", "GIT_COMMITTER_NAME=Atoll", "GIT_COMMITTER_EMAIL=atoll@localhost"}
	commit, err := git.Run(ctx, dir, env, "commit-tree", strings.Fields(tree)[0], "-p", d.BaseSHA, "-p", d.HeadSHA, "-m", fmt.Sprintf("Merge pull request #%d", number))
	if err != nil {
		return fmt.Errorf("local merge #%d: %w", number, err)
	}
	if _, err := git.Run(ctx, dir, nil, "update-ref", "refs/heads/"+d.BaseRef, commit, d.BaseSHA); err != nil {
		return fmt.Errorf("local merge #%d: %w", number, err)
	}
	if err := p.DB.MarkPullMerged(ctx, d.ID); err != nil {
		return err
	}
	if opts.DeleteSourceBranch && d.HeadRef != "" && d.HeadRef != d.BaseRef {
		// Only if it still points at the merged commit.
		if _, err := git.Run(ctx, dir, nil, "update-ref", "-d", "refs/heads/"+d.HeadRef, d.HeadSHA); err != nil {
			return fmt.Errorf("%w: local branch %s: %w", vcs.ErrSourceBranchKept, d.HeadRef, err)
		}
	}
	return nil
}

// Recognizes implements vcs.Recognizer: local repositories send no webhooks.
func (p *Provider) Recognizes(http.Header) bool { return false }

// WebhookHint implements vcs.Recognizer.
func (p *Provider) WebhookHint() string { return "" }

// PullRefs implements vcs.Provider: a local pull request's head is a branch
// of the repository itself, fetched with the other branches.
func (p *Provider) PullRefs(int) []string { return nil }

// GitCredentials implements vcs.Provider: local repositories need none.
func (p *Provider) GitCredentials(ctx context.Context, repo atoll.Repo) (vcs.GitCredential, error) {
	return vcs.GitCredential{}, nil
}
