package github

import (
	"encoding/json"
	"time"
)

// Webhook payloads are decoded into these slim types rather than go-github's
// full event structs: Atoll reads a dozen fields of a 25 KB payload, and the
// slim decode costs a fraction of the time and allocations, which is what a
// burst of webhooks waits on.

type hookUser struct {
	Login string `json:"login"`
}

type hookRepo struct {
	Name     string   `json:"name"`
	Owner    hookUser `json:"owner"`
	CloneURL string   `json:"clone_url"`
	HTMLURL  string   `json:"html_url"`
}

type hookRef struct {
	SHA string `json:"sha"`
	Ref string `json:"ref"`
}

type hookPull struct {
	Number    int       `json:"number"`
	Title     string    `json:"title"`
	State     string    `json:"state"`
	Merged    bool      `json:"merged"`
	Draft     bool      `json:"draft"`
	HTMLURL   string    `json:"html_url"`
	User      hookUser  `json:"user"`
	Head      hookRef   `json:"head"`
	Base      hookRef   `json:"base"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type hookInstallation struct {
	ID int64 `json:"id"`
}

type pullRequestHook struct {
	Action       string            `json:"action"`
	PullRequest  *hookPull         `json:"pull_request"`
	Repository   *hookRepo         `json:"repository"`
	Sender       hookUser          `json:"sender"`
	Installation *hookInstallation `json:"installation"`
}

type issueCommentHook struct {
	Action string `json:"action"`
	Issue  struct {
		Number      int      `json:"number"`
		Title       string   `json:"title"`
		User        hookUser `json:"user"`
		PullRequest *struct {
			HTMLURL string `json:"html_url"`
		} `json:"pull_request"`
	} `json:"issue"`
	Comment *struct {
		ID   int64    `json:"id"`
		Body string   `json:"body"`
		User hookUser `json:"user"`
	} `json:"comment"`
	Repository   *hookRepo         `json:"repository"`
	Installation *hookInstallation `json:"installation"`
}

func decodeHook(payload []byte, v any) error { return json.Unmarshal(payload, v) }
