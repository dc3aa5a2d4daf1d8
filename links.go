package atoll

import (
	"net/url"
	"strconv"
	"strings"
)

// Links is the one owner of the addresses of Atoll's pages: pull request
// comments, commit statuses, the pages themselves and the demo's seed data
// all print links made here, so that a route and the links to it cannot
// drift apart (the web package's routes are tested against every method).
//
// Base is the public URL without a trailing slash; the zero value makes
// paths, which is what pages use to link to themselves.
type Links struct {
	Base string
}

// Job is a job's page.
func (l Links) Job(id int64) string { return l.Base + "/jobs/" + strconv.FormatInt(id, 10) }

// JobLog is the download of a job's whole log, as text.
func (l Links) JobLog(id int64) string { return l.Job(id) + "/log.txt" }

// JobLine is one line of a job's log, on the job's page.
func (l Links) JobLine(id, seq int64) string {
	return l.Job(id) + "#L" + strconv.FormatInt(seq, 10)
}

// Pull is the page of pull request number of repo (its full name). The
// owner is everything before the last slash and is escaped as one path
// segment: an Azure DevOps owner is ORG/PROJECT, and the route takes it
// as one. A negative number is a drift target's (atoll.PullDrift), no
// pull request: its page is the repository's on the drift page.
func (l Links) Pull(repo string, number int) string {
	if number < 0 {
		return l.Drift(repo, "")
	}
	owner, name := repo, ""
	if i := strings.LastIndex(repo, "/"); i >= 0 {
		owner, name = repo[:i], repo[i+1:]
	}
	return l.Base + "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(name) + "/pulls/" + strconv.Itoa(number)
}

// Drift is the drift page, of repository repo and in drift state state
// when given.
func (l Links) Drift(repo, state string) string {
	q := url.Values{}
	if repo != "" {
		q.Set("repo", repo)
	}
	if state != "" {
		q.Set("state", state)
	}
	if len(q) == 0 {
		return l.Base + "/drift"
	}
	return l.Base + "/drift?" + q.Encode()
}

// DriftHistory is the drift page of repository repo with the history of
// project projectID's checks at branch.
func (l Links) DriftHistory(repo string, projectID int64, branch string) string {
	return l.Base + "/drift?repo=" + url.QueryEscape(repo) + "&project=" + strconv.FormatInt(projectID, 10) + "&branch=" + url.QueryEscape(branch)
}

// DriftCheck is where the drift page's "Check now" buttons post.
func (l Links) DriftCheck() string { return l.Base + "/drift/check" }

// DriftReconcile is where the drift page's "Reconcile" buttons post (a
// fresh plan to approve, then apply).
func (l Links) DriftReconcile() string { return l.Base + "/drift/reconcile" }

// DriftApply is where the drift page's "Apply" buttons post (an approved
// reconcile plan's apply).
func (l Links) DriftApply() string { return l.Base + "/drift/apply" }

// PullCommands is where the pull request page's Plan and Apply buttons
// post.
func (l Links) PullCommands(repo string, number int) string {
	return l.Pull(repo, number) + "/commands"
}

// PullComment is where the pull request page's comment box posts.
func (l Links) PullComment(repo string, number int) string {
	return l.Pull(repo, number) + "/comment"
}

// ProjectAnchor is the id of a project's row on its pull request's page.
func (Links) ProjectAnchor(projectID int64) string {
	return "project-" + strconv.FormatInt(projectID, 10)
}

// Project is a project's row on its pull request's page.
func (l Links) Project(repo string, number int, projectID int64) string {
	return l.Pull(repo, number) + "#" + l.ProjectAnchor(projectID)
}

// Plan is a plan's page, where it is approved or rejected.
func (l Links) Plan(id int64) string { return l.Base + "/plans/" + strconv.FormatInt(id, 10) }

// PlanDecision is where a plan's approve or reject button posts
// (decision: DecisionApprove or DecisionReject).
func (l Links) PlanDecision(id int64, decision string) string {
	return l.Plan(id) + "/" + decision
}
