package atoll

import "time"

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
