package notify

import (
	"errors"
	"net/url"

	"github.com/atollhq/atoll"
)

// ApplyResult is what an http webhook receives, under the field names of
// Atlantis's webhooks.ApplyResult, so that receivers written for Atlantis
// read it unchanged. JobURL, Atoll's job page, is an addition.
type ApplyResult struct {
	Workspace   string
	Repo        Repo
	Pull        PullRequest
	User        User
	Success     bool
	Directory   string
	ProjectName string
	JobURL      string `json:",omitempty"`
}

// Repo is Atlantis's models.Repo. CloneURL never holds credentials.
type Repo struct {
	FullName          string
	Owner             string
	Name              string
	CloneURL          string
	SanitizedCloneURL string
	VCSHost           VCSHost
}

// VCSHost is Atlantis's models.VCSHost: Type is its number (0 GitHub, 4
// Azure DevOps); Atoll's local repositories are -1.
type VCSHost struct {
	Hostname string
	Type     int
}

// PullRequest is Atlantis's models.PullRequest. State is 0 open, 1 closed.
type PullRequest struct {
	Num        int
	HeadCommit string
	URL        string
	HeadBranch string
	BaseBranch string
	Author     string
	Body       string
	State      int
	BaseRepo   Repo
}

// User is Atlantis's models.User.
type User struct {
	Username string
	Teams    []string
}

// Apply is one finished apply, as the runner knows it.
type Apply struct {
	Repo      atoll.Repo
	Pull      atoll.Pull
	HeadSHA   string // the commit applied
	User      string
	Dir       string
	Workspace string
	Project   string
	Success   bool
	JobURL    string
}

// Result is a's ApplyResult.
func (a Apply) Result() ApplyResult {
	repo := Repo{FullName: a.Repo.FullName(), Owner: a.Repo.Owner, Name: a.Repo.Name,
		CloneURL: sanitizeURL(a.Repo.CloneURL), VCSHost: VCSHost{Hostname: a.Repo.Host, Type: hostType(a.Repo.VCS)}}
	repo.SanitizedCloneURL = repo.CloneURL
	state := 0
	if a.Pull.State != "" && a.Pull.State != atoll.PullOpen {
		state = 1
	}
	head := a.HeadSHA
	if head == "" {
		head = a.Pull.HeadSHA
	}
	return ApplyResult{
		Workspace: a.Workspace, Repo: repo, User: User{Username: a.User}, Success: a.Success, Directory: a.Dir, ProjectName: a.Project, JobURL: a.JobURL,
		Pull: PullRequest{Num: a.Pull.Number, HeadCommit: head, URL: a.Pull.URL, HeadBranch: a.Pull.HeadRef, BaseBranch: a.Pull.BaseRef,
			Author: a.Pull.Author, State: state, BaseRepo: repo},
	}
}

func hostType(vcs string) int {
	switch vcs {
	case atoll.VCSGitHub:
		return 0
	case atoll.VCSAzureDevOps:
		return 4
	}
	return -1
}

// sanitizeURL drops the user info of a clone URL (a token, or Azure
// DevOps's organization name), and gives "" for what is not a URL.
func sanitizeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	u.User = nil
	return u.String()
}

func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("not an http or https URL")
	}
	return nil
}
