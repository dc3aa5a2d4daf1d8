// Package templates holds Atoll's HTML pages, written with templ
// (github.com/a-h/templ). Edit the .templ files and regenerate the
// *_templ.go files with `make generate` (`go tool templ generate` at the
// repository root).
//
// Every dynamic value goes through templ, which escapes text and sanitizes
// URLs; nothing here writes raw HTML.
package templates

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/atollhq/atoll"
)

// Meta is what every page's header needs.
type Meta struct {
	Version      string
	Node         string
	Demo         bool
	Now          time.Time
	AssetVersion string // cache-busting suffix for /assets/ URLs
	// Standby, when set, says that the page comes from a standby's copy of
	// the database and how far behind it is.
	Standby string
	// User is the signed-in user (nil on the login page).
	User *atoll.User
	// Freeze is the global apply freeze, shown on every page while on.
	Freeze atoll.Freeze
	// Flash is the outcome of the action that led here, shown once; FlashOK
	// tells success from failure.
	Flash   string
	FlashOK bool
	// WorkerPools is set when the server has worker pools: the header
	// links the workers page.
	WorkerPools bool
	// Drift is set when the server runs drift checks: the header links the
	// drift page.
	Drift bool
}

// PullPage shows one pull request.
type PullPage struct {
	Meta     Meta
	Repo     *atoll.Repo
	Pull     *atoll.Pull
	Statuses []atoll.CommitStatus
	// Rows are the pull request's projects, each with its latest plan.
	Rows []ProjectRow
	// AllNotice follows a command sent for every project (?for=all).
	AllNotice *RequestNotice
	Jobs      []*atoll.Job
	Locks     []*atoll.Lock
	Comments  []atoll.PullComment
	Approvers []string
}

// ErrorPage explains why a page cannot be shown.
type ErrorPage struct {
	Meta    Meta
	Status  int
	Message string
}

// paths are the addresses pages link to, as paths: atoll.Links owns them.
var paths atoll.Links

// PullPath is the page of pull request number of repo (owner/name).
func PullPath(repo string, number int) string { return paths.Pull(repo, number) }

// JobPath is the page of a job.
func JobPath(id int64) string { return paths.Job(id) }

func assetPath(m Meta, name string) string {
	p := "/assets/" + name
	if m.AssetVersion != "" {
		p += "?v=" + url.QueryEscape(m.AssetVersion)
	}
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }

func id(n int64) string { return strconv.FormatInt(n, 10) }

// short abbreviates a commit SHA.
func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// rfc3339 formats t in UTC.
func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// ago says how long before now t was, coarsely.
func ago(now, t time.Time) string {
	if now.IsZero() {
		now = time.Now()
	}
	d := now.Sub(t)
	switch {
	case d < -time.Minute:
		return "in " + coarse(-d)
	case d < 5*time.Second:
		return "just now"
	default:
		return coarse(d) + " ago"
	}
}

func coarse(d time.Duration) string {
	switch {
	case d < time.Minute:
		return strconv.Itoa(int(d/time.Second)) + " s"
	case d < time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		return strconv.Itoa(int(d/time.Hour)) + " h"
	default:
		return strconv.Itoa(int(d/(24*time.Hour))) + " days"
	}
}

// duration formats how long a job ran (or has been running).
func duration(now time.Time, j *atoll.Job) string { return span(now, j.StartedAt, j.FinishedAt) }

func lockProject(l *atoll.Lock) string {
	return atoll.Project{Name: l.Project, Dir: l.Dir, Workspace: l.Workspace}.Label()
}

func lockLabel(l *atoll.Lock) string {
	return l.Repo + " " + lockProject(l) + " (#" + strconv.Itoa(l.Pull) + ")"
}

// live reports whether a job can still change.
func live(j *atoll.Job) bool { return !j.Final() }

// commitStatusClass maps a commit status state to a badge class.
func commitStatusClass(state string) string {
	switch state {
	case "success", "failure", "error", "pending":
		return "badge-" + state
	}
	return "badge-pending"
}

func statusTitle(status int) string {
	switch status {
	case 400:
		return "Bad request"
	case 401:
		return "Unauthorized"
	case 403:
		return "Forbidden"
	case 404:
		return "Not found"
	case 409:
		return "Conflict"
	case 503:
		return "Unavailable"
	}
	if status >= 500 {
		return "Server error"
	}
	return "Error"
}

func summaryTitle(s *atoll.Summary) string {
	t := fmt.Sprintf("%d to add, %d to change, %d to destroy", s.Add, s.Change, s.Destroy)
	if s.Import > 0 {
		t += fmt.Sprintf(", %d to import", s.Import)
	}
	return t
}

func flashRole(ok bool) string {
	if ok {
		return "status"
	}
	return "alert"
}

// LoginPage is the sign-in form.
type LoginPage struct {
	Meta  Meta
	Next  string // local path to go back to after signing in
	Name  string // typed before a failed attempt
	Error string
	OIDC  bool // show the identity provider's button
}

// AdminPage manages users, API tokens and worker tokens. NewToken is a
// token just created, shown once; so is NewWorkerToken.
type AdminPage struct {
	Meta                                 Meta
	Users                                []*atoll.Account
	Tokens                               []*atoll.APIToken
	NewToken, NewTokenName, NewTokenUser string
	// WorkerPools is set when the server has worker pools: the page then
	// lists WorkerTokens and makes new ones.
	WorkerPools                                       bool
	WorkerTokens                                      []*atoll.WorkerToken
	NewWorkerToken, NewWorkerTokenName, NewWorkerPool string
	// WorkerTokensError says why the worker tokens cannot be listed.
	WorkerTokensError string
}

func queryEscape(s string) string { return url.QueryEscape(s) }

// freezeText is the freeze banner's sentence.
func freezeText(f atoll.Freeze) string {
	s := "Applies are frozen"
	if f.By != "" {
		s += " by " + f.By
	}
	if f.Reason != "" {
		s += ": " + f.Reason
	}
	return s + "."
}

// PullLabel names pull request number of repo as "owner/name#N"; a drift
// target (a negative number) is no pull request: "owner/name drift".
func PullLabel(repo string, number int) string {
	if number < 0 {
		return repo + " drift"
	}
	return repo + pullRef(number)
}

// pullRef is "#N", or "drift" for a drift target.
func pullRef(number int) string {
	if number < 0 {
		return "drift"
	}
	return "#" + strconv.Itoa(number)
}
