package atoll

import (
	"context"
	"time"
)

// VCS kinds a repository can live on.
const (
	VCSGitHub      = "github"
	VCSAzureDevOps = "azuredevops"
	VCSLocal       = "local"
)

// Repo is a repository Atoll has seen a webhook or comment for.
type Repo struct {
	ID        int64     `json:"id"`
	VCS       string    `json:"vcs"`
	Host      string    `json:"host"`  // e.g. github.com
	Owner     string    `json:"owner"` // e.g. runatlantis
	Name      string    `json:"name"`  // e.g. atlantis-tests
	CloneURL  string    `json:"clone_url"`
	HTMLURL   string    `json:"html_url"`
	CreatedAt time.Time `json:"created_at"`
}

// FullName is owner/name, the form used in comments and the API.
func (r Repo) FullName() string { return r.Owner + "/" + r.Name }

// RepoService reads repositories.
type RepoService interface {
	Repo(ctx context.Context, id int64) (*Repo, error)
	// RepoByName returns repository owner/name (of any VCS; the first
	// one), matched case-insensitively (ENOTFOUND: none).
	RepoByName(ctx context.Context, fullName string) (*Repo, error)
}
