package atoll

import (
	"context"
	"time"
)

// Pull request states.
const (
	PullOpen   = "open"
	PullClosed = "closed"
	PullMerged = "merged"
)

// Pull is a pull request as last reported by its VCS.
type Pull struct {
	ID        int64     `json:"id"`
	RepoID    int64     `json:"-"`
	Repo      string    `json:"repo"` // owner/name
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	Author    string    `json:"author"`
	HeadSHA   string    `json:"head_sha"`
	HeadRef   string    `json:"head_ref"`
	BaseSHA   string    `json:"base_sha"`
	BaseRef   string    `json:"base_ref"`
	State     string    `json:"state"`
	URL       string    `json:"url"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PullFilter selects pull requests; zero fields match anything.
type PullFilter struct {
	Repo  string // owner/name
	State string
}

// PullComment is a pull request comment kept by the local provider
// (vcs/local), which has no remote host to keep it.
type PullComment struct {
	ID        int64     `json:"id"`
	Author    string    `json:"author"`
	Body      string    `json:"body"`
	Hidden    bool      `json:"hidden"`
	CreatedAt time.Time `json:"created_at"`
}

// CommitStatus is a commit status kept by the local provider.
type CommitStatus struct {
	SHA         string `json:"sha"`
	Context     string `json:"context"`
	State       string `json:"state"`
	Description string `json:"description"`
	TargetURL   string `json:"target_url"`
}

// PullService reads pull requests, their projects and, on a local
// repository, their conversation, approvals and commit statuses.
type PullService interface {
	Pull(ctx context.Context, id int64) (*Pull, error)
	PullByNumber(ctx context.Context, fullName string, number int) (*Pull, error)
	Pulls(ctx context.Context, f PullFilter) ([]*Pull, error)
	// NewestPulls returns up to limit pull requests in state, newest
	// first, and how many there are in all.
	NewestPulls(ctx context.Context, state string, limit int) ([]*Pull, int, error)
	PullProjects(ctx context.Context, pullID int64) ([]Project, error)
	Comments(ctx context.Context, pullID int64) ([]PullComment, error)
	// AddComment adds a comment to a local repository's pull request.
	AddComment(ctx context.Context, pullID int64, author, body string) (int64, error)
	Approvers(ctx context.Context, pullID int64) ([]string, error)
	Statuses(ctx context.Context, repoID int64, sha string) ([]CommitStatus, error)
	// PullOutcomes returns where each project of the pull request stands
	// at headSHA.
	PullOutcomes(ctx context.Context, pullID int64, headSHA string) ([]ProjectOutcome, error)
	// UpdatePull records a pull request's refreshed fields.
	UpdatePull(ctx context.Context, repoID int64, p Pull) error
}

// ProjectOutcome is where one project of a pull request stands at a commit:
// the kind and final state of its latest finished plan or apply job there.
// It is what Atlantis keeps as a pull request's per-project status.
type ProjectOutcome struct {
	ProjectID int64
	Kind      string // JobPlan or JobApply
	State     string // a final job state
	Changes   bool   // for a succeeded plan: the plan changes something
}

// Applied reports whether the project needs no more apply: its latest job
// is a succeeded apply, or a succeeded plan without changes.
func (o ProjectOutcome) Applied() bool {
	if o.State != JobSucceeded {
		return false
	}
	return o.Kind == JobApply || !o.Changes
}
