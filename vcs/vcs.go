// Package vcs defines the one interface Atoll needs from a version-control
// host. Each host lives in a subpackage named after it.
package vcs

import (
	"context"
	"errors"
	"net/http"

	"github.com/atollhq/atoll"
)

// Event kinds a webhook can turn into (see atoll.VCSEvent). Anything else
// is ignored.
const (
	EventPullOpened      = atoll.VCSEventPullOpened
	EventPullReopened    = atoll.VCSEventPullReopened
	EventPullSynchronize = atoll.VCSEventPullSynchronize
	EventPullClosed      = atoll.VCSEventPullClosed
	EventPullReady       = atoll.VCSEventPullReady
	EventComment         = atoll.VCSEventComment
)

// Event is a webhook reduced to what Atoll acts on. It is the root
// package's, so that the HTTP layer hands it on through
// atoll.CommandService without knowing who works on it.
type Event = atoll.VCSEvent

// PullDetails is a pull request's state fetched from the host when a command
// needs it fresh (apply requirements, head SHA).
type PullDetails struct {
	atoll.Pull
	Approved  bool // at least one approving review from someone other than the author
	Mergeable bool // the host would allow the merge now
	Fork      bool // the head branch lives in another repository
	// Labels are the names of the pull request's labels (GitHub) or tags
	// (Azure DevOps), as the host spells them.
	Labels []string
}

// HasLabel reports whether the pull request carries the label name. An
// empty name is never carried: an unset --disable-*-label flag matches
// nothing. Labels compare exactly, as in Atlantis.
func (d *PullDetails) HasLabel(name string) bool {
	if d == nil || name == "" {
		return false
	}
	for _, l := range d.Labels {
		if l == name {
			return true
		}
	}
	return false
}

// Commit status states.
const (
	StatusPending = "pending"
	StatusSuccess = "success"
	StatusFailure = "failure"
	StatusError   = "error"
)

// Status is a commit status (GitHub) or PR status (Azure DevOps).
type Status struct {
	State       string
	Context     string // e.g. atlantis/plan: dir/default
	Description string
	TargetURL   string
	// Pull is the pull request the status is about, when the caller knows
	// it (0 otherwise). Hosts that attach statuses to pull requests (Azure
	// DevOps) use it rather than searching for the pull requests of sha.
	Pull int
	// Details is a longer Markdown text for hosts that show one next to
	// the status (a GitHub check run's summary): a job's change counts and
	// an excerpt of its output. Optional; hosts without room ignore it.
	Details string
}

// Recognizer tells a host's webhooks apart by their headers. It is the part
// of a provider that works unconfigured, so that a webhook from a host this
// server does not serve is answered "not configured" rather than
// "unrecognised". Recognizes must not authenticate: CheckWebhook does.
type Recognizer interface {
	// Kind is the atoll.VCS* constant of this host.
	Kind() string
	// Recognizes reports whether a webhook with these headers comes from
	// this host.
	Recognizes(h http.Header) bool
	// WebhookHint says what Recognizes looks for, for the message that
	// refuses a webhook no host recognises ("an X-Example-Event header").
	WebhookHint() string
}

// Provider is one VCS host. Everything specific to the host lives behind
// it: adding a host touches only its package and the wiring in cmd/atoll.
type Provider interface {
	Recognizer

	// PullRefs are the refs to fetch, besides the head and base branches,
	// to check out the pull request's head commit (a fork's commits are
	// only reachable from a host-specific ref). Nil when none are needed.
	PullRefs(number int) []string

	// CheckWebhook rejects a webhook by its headers alone, before its body
	// is read: a missing or malformed signature or credentials. It returns an
	// *atoll.Error with EUNAUTHORIZED, as ParseWebhook does; passing it says
	// nothing about the body, which ParseWebhook still authenticates.
	CheckWebhook(h http.Header) error

	// ParseWebhook authenticates the request (signature or basic auth) and
	// reduces it to an Event. It returns an *atoll.Error with EUNAUTHORIZED for
	// a bad or missing signature, and (nil, nil) for events Atoll ignores.
	ParseWebhook(r *http.Request, body []byte) (*Event, error)

	// GetPull fetches the pull request's current state.
	GetPull(ctx context.Context, repo atoll.Repo, number int) (*PullDetails, error)

	// ChangedFiles lists the paths the pull request modifies, relative to the
	// repository root.
	ChangedFiles(ctx context.Context, repo atoll.Repo, number int) ([]string, error)

	// CreateComment posts a comment and returns its id.
	CreateComment(ctx context.Context, repo atoll.Repo, number int, body string) (string, error)

	// UpdateComment replaces the body of a comment Atoll posted.
	UpdateComment(ctx context.Context, repo atoll.Repo, number int, id, body string) error

	// HideComments hides (minimizes as outdated) earlier comments Atoll posted
	// for the given command ("plan", "apply") where the host supports it,
	// except the comments in keep (the ones just posted: new results are
	// posted first, so users see them without waiting for the hiding).
	HideComments(ctx context.Context, repo atoll.Repo, number int, command string, keep ...string) error

	// SetStatus sets a commit status on sha.
	SetStatus(ctx context.Context, repo atoll.Repo, sha string, st Status) error

	// CloneURL returns a URL git can fetch the repository from, with
	// credentials embedded when the host needs them. It must never be logged.
	CloneURL(ctx context.Context, repo atoll.Repo) (string, error)

	// Merge merges the pull request (automerge after a full apply). An
	// error wrapping ErrSourceBranchKept means the merge succeeded but the
	// source branch opts asked to delete is still there; one wrapping
	// ErrMergeQueued means the host accepted the merge but had not done it
	// yet when Merge stopped waiting.
	Merge(ctx context.Context, repo atoll.Repo, number int, opts MergeOptions) error

	// GitCredentials returns what git over http(s) authenticates with on
	// this host while Terraform runs for repo (private module sources); a
	// zero GitCredential when the host needs none. The password is a secret:
	// it is handed to git only through Atoll's credential helper.
	GitCredentials(ctx context.Context, repo atoll.Repo) (GitCredential, error)
}

// MergeOptions say how Merge merges.
type MergeOptions struct {
	// Method is merge (the default when empty), squash or rebase; hosts
	// may accept more (Azure DevOps: rebase-merge).
	Method string
	// DeleteSourceBranch deletes the pull request's head branch once
	// merged (delete_source_branch_on_merge), except a fork's.
	DeleteSourceBranch bool
	// HeadSHA is the head commit that was planned and applied. Hosts that
	// can (Azure DevOps) merge only if the pull request's head is still
	// this commit, so that a push after the apply is never merged unseen.
	HeadSHA string
}

// ErrMergeQueued is wrapped by Merge when the host accepted the merge but
// still had it queued when Merge stopped waiting: it may yet complete, or
// fail.
var ErrMergeQueued = errors.New("the merge is queued but not done yet")

// ErrSourceBranchKept is wrapped by Merge when the pull request was merged
// but its source branch could not be deleted.
var ErrSourceBranchKept = errors.New("merged, but the source branch was not deleted")

// GitCredential is a user name and password git sends to the hosts under
// URL (a scheme and host, with a port when not the default:
// "https://github.com"). The zero value means no credentials.
type GitCredential struct {
	URL      string
	Username string
	Password string
}

// Marker is the hidden tag Atoll puts in every comment it posts for command,
// so that hosts can find (and hide) its earlier comments.
func Marker(command string) string { return "<!-- atoll:" + command + " -->" }

// CloneAuthorizer is a host whose git over https is authenticated with an
// Authorization header of its own rather than with CloneURL's user name
// and password (Azure DevOps: an Entra ID token as a bearer token). The
// runner prefers it to CloneURL. The authorization is a secret: it is
// handed to git only in its environment.
type CloneAuthorizer interface {
	// CloneAuthorization returns the repository's URL, without
	// credentials, and the Authorization header value git sends to it.
	CloneAuthorization(ctx context.Context, repo atoll.Repo) (rawURL, authorization string, err error)
}

// Replier is a host whose comments live in threads (Azure DevOps). The
// results of a command are posted in the thread of the comment that asked
// for them (replyTo, the Event's CommentID) rather than as a new thread.
type Replier interface {
	ReplyComment(ctx context.Context, repo atoll.Repo, number int, replyTo, body string) (string, error)
}

// Comment posts body on the pull request: as a reply to replyTo where the
// host threads its comments and replyTo is set, as a new comment otherwise.
func Comment(ctx context.Context, p Provider, repo atoll.Repo, number int, replyTo, body string) (string, error) {
	if r, ok := As[Replier](p); ok && replyTo != "" {
		return r.ReplyComment(ctx, repo, number, replyTo, body)
	}
	return p.CreateComment(ctx, repo, number, body)
}

// CommentLimiter is a host with a limit on one comment's length, in
// characters. Results longer than that are posted as several comments,
// each filled up to it (runner/markdown's Split); hosts without one get
// GitHub's.
type CommentLimiter interface {
	MaxCommentChars() int
}

// Reactor is a host that can react to a comment with an emoji: Atlantis's
// --emoji-reaction, which marks the command comments it accepted.
// reaction is the host's name for it (GitHub: +1, -1, laugh, confused,
// heart, hooray, rocket or eyes).
type Reactor interface {
	React(ctx context.Context, repo atoll.Repo, number int, commentID, reaction string) error
}

// TeamLister is a host whose users belong to teams (GitHub organizations):
// what --gh-team-allowlist checks. UserTeams returns the slugs of the
// teams of repo's owner that login belongs to, directly or through a child
// team; none (and no error) when the owner is not an organization.
type TeamLister interface {
	UserTeams(ctx context.Context, repo atoll.Repo, login string) ([]string, error)
}

// HostCredentials is a host whose git credentials do not depend on the
// repository (a token, a service principal). Atoll serves them to every
// Terraform run, whichever host its pull request is on, so that module
// sources on this host clone. A zero GitCredential means none.
type HostCredentials interface {
	HostGitCredentials(ctx context.Context) (GitCredential, error)
}

// ApprovalDismisser is a host whose pull request approvals can be
// dismissed (GitHub reviews): --discard-approval-on-plan asks it to, before
// a plan comment's plan, so that reviewers approve what the new plan says.
// It returns how many approvals it dismissed.
type ApprovalDismisser interface {
	DismissApprovals(ctx context.Context, repo atoll.Repo, number int) (int, error)
}
