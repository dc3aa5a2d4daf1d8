package azuredevops

import "encoding/json"

// The service hook payloads, reduced to the fields Atoll reads. They are
// declared here rather than taken from the SDK because the SDK has no type
// for the envelope, and its comment type has no resource version 1.0 shape.

// hookEnvelope is what every service hook delivery carries.
type hookEnvelope struct {
	ID                 string          `json:"id"`
	EventType          string          `json:"eventType"`
	ResourceVersion    string          `json:"resourceVersion"`
	Message            hookMessage     `json:"message"`
	Resource           json.RawMessage `json:"resource"`
	ResourceContainers struct {
		Collection struct {
			BaseURL string `json:"baseUrl"`
		} `json:"collection"`
	} `json:"resourceContainers"`
}

// hookMessage is the event's one-line summary, in three markups. It is
// written in the organization's language.
type hookMessage struct {
	Text     string `json:"text"`
	HTML     string `json:"html"`
	Markdown string `json:"markdown"`
}

type hookIdentity struct {
	DisplayName string `json:"displayName"`
	UniqueName  string `json:"uniqueName"`
}

type hookCommit struct {
	CommitID string `json:"commitId"`
}

type hookProject struct {
	Name string `json:"name"`
}

type hookRepository struct {
	ID        string      `json:"id"`
	Name      string      `json:"name"`
	URL       string      `json:"url"`
	RemoteURL string      `json:"remoteUrl"`
	WebURL    string      `json:"webUrl"`
	Project   hookProject `json:"project"`
}

// hookPull is a GitPullRequest as service hooks send it.
type hookPull struct {
	Repository            *hookRepository `json:"repository"`
	PullRequestID         int             `json:"pullRequestId"`
	Status                string          `json:"status"` // active, abandoned, completed
	CreatedBy             hookIdentity    `json:"createdBy"`
	Title                 string          `json:"title"`
	SourceRefName         string          `json:"sourceRefName"`
	TargetRefName         string          `json:"targetRefName"`
	IsDraft               bool            `json:"isDraft"`
	LastMergeSourceCommit *hookCommit     `json:"lastMergeSourceCommit"`
	LastMergeTargetCommit *hookCommit     `json:"lastMergeTargetCommit"`
}

type hookLink struct {
	Href string `json:"href"`
}

// hookComment is a pull request thread's comment.
type hookComment struct {
	ID                     int          `json:"id"`
	Author                 hookIdentity `json:"author"`
	Content                string       `json:"content"`
	PublishedDate          string       `json:"publishedDate"`
	LastContentUpdatedDate string       `json:"lastContentUpdatedDate"`
	CommentType            string       `json:"commentType"` // text, codeChange, system
	IsDeleted              bool         `json:"isDeleted"`
	Links                  struct {
		Self hookLink `json:"self"`
	} `json:"_links"`
}

// hookCommentV2 is the comment event's resource in version 2.0.
type hookCommentV2 struct {
	Comment     *hookComment `json:"comment"`
	PullRequest *hookPull    `json:"pullRequest"`
}
