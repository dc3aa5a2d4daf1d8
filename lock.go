package atoll

import "time"

// Lock is held by a pull request on a project (repo + dir + workspace + name)
// from its first plan until it is merged, closed or unlocked.
type Lock struct {
	ID        int64     `json:"id"`
	Repo      string    `json:"repo"`
	Pull      int       `json:"pull"`
	PullURL   string    `json:"pull_url"`
	Project   string    `json:"project"`
	Dir       string    `json:"dir"`
	Workspace string    `json:"workspace"`
	User      string    `json:"user"`
	CreatedAt time.Time `json:"created_at"`
	PullID    int64     `json:"-"`
}
