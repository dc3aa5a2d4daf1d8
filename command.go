package atoll

import (
	"context"
	"regexp"
)

// Command names, as comments spell them. They are untyped so that they
// compare directly with Command.Name, a plain string.
const (
	CommandPlan            = "plan"
	CommandApply           = "apply"
	CommandUnlock          = "unlock"
	CommandVersion         = "version"
	CommandHelp            = "help"
	CommandCancel          = "cancel"
	CommandApprovePolicies = "approve_policies"
	CommandImport          = "import"
	CommandState           = "state"
)

// Command is one command to Atoll on a pull request, structured: what a
// comment such as "atlantis plan -p staging" says once parsed. The comment
// grammar (package command) reads it from a comment and writes it back; the
// dashboard and the API build it directly, so that what they ask is never
// text to be parsed again.
type Command struct {
	Name      string   // one of the Command* names
	SubName   string   // "rm" for state; "" otherwise
	Args      []string // import: ADDRESS ID; state rm: ADDRESS...; nil otherwise
	Dir       string   // cleaned, relative to repo root, "" when not given; "." means root
	Workspace string   // "" when not given
	Project   string   // "" when not given
	Verbose   bool     // append Atoll's log to the reply
	ExtraArgs []string // words after "--", for terraform; nil when none

	// ProjectRegexp is Project as a regular expression over project
	// names, whole names only (--enable-regexp-cmd); nil otherwise.
	ProjectRegexp *regexp.Regexp

	// apply only.
	AutoMergeDisabled bool   // --auto-merge-disabled
	AutoMergeMethod   string // --auto-merge-method: merge, rebase or squash

	// approve_policies only.
	PolicySet           string // --policy-set
	ClearPolicyApproval bool   // --clear-policy-approval
}

// Where a CommandSubmission was asked for.
const (
	// ViaDashboard is the pull request page's buttons: on a local
	// repository, whose conversation is the page's, the command is also
	// added to it as the user's comment.
	ViaDashboard = "dashboard"
	// ViaAPI is the JSON API (Atlantis's /api/plan and /api/apply): the
	// caller gets the outcome in the answer, and the conversation only
	// Atoll's replies.
	ViaAPI = "api"
)

// CommandSubmission is a structured command asked for on a pull request
// outside the pull request's conversation: from the dashboard or the API.
type CommandSubmission struct {
	Repo    Repo
	Pull    Pull // ID and Number are used
	Command Command
	// User is who asked: the signed-in Atoll user, who the command runs as.
	User string
	// Via is ViaDashboard or ViaAPI.
	Via string
	// Source is the client's address, for the audit log.
	Source string
}

// CommentSubmission is free text posted on a pull request through Atoll
// (the pull request page's comment box, the comments API) by User, run
// exactly as if posted on the pull request.
type CommentSubmission struct {
	Repo   Repo
	Pull   Pull // ID and Number are used
	User   string
	Source string
	Body   string
}

// Submitted is what a submission did.
type Submitted struct {
	// RequestID is the request queued (0: none, e.g. a comment that is not
	// a command).
	RequestID int64
	// Comment is the comment text the command was written as, the text a
	// user would have typed (for a CommentSubmission, its Body).
	Comment string
	// CommentID is the comment added to a local repository's pull request
	// conversation (0: none, on other hosts).
	CommentID int64
}

// CommandService turns what users and VCS hosts ask for into queued work
// on pull requests. Every method returns once the work is durably queued,
// never after it ran.
//
// Error codes:
//   - EINVALID: the command cannot be run as given: it is not allowed,
//     a value breaks the grammar's rules, or its comment does not read
//     back as the same command (the message is the grammar's reply);
//   - EFORBIDDEN: the repository is not served (--repo-allowlist);
//   - EUNAVAILABLE: the database refuses writes (a standby node);
//   - anything else is internal.
type CommandService interface {
	// Receive records an event from a VCS host (a webhook reduced by its
	// provider) and queues the work it asks for, in one transaction. It
	// returns the request queued (0: the event asks for nothing).
	Receive(ctx context.Context, ev *VCSEvent) (requestID int64, err error)
	// Receiving marks a webhook as being received until the returned
	// function is called, so that the workers let its answer go first.
	Receiving() (done func())
	// Submit queues cmd as if its user had commented it on the pull
	// request. The comment is written from cmd once, by the comment
	// grammar with the server's executable name, and read back by the
	// same rules as any comment (allowed commands, flag values); on a
	// local repository it is added to the conversation as the user's.
	Submit(ctx context.Context, s CommandSubmission) (Submitted, error)
	// Check reports whether Submit would accept cmd (EINVALID if not),
	// queuing nothing: a caller submitting several commands refuses them
	// all when one is wrong.
	Check(cmd Command) error
	// Comment runs free text as a comment of its user on the pull request
	// (added to a local repository's conversation first). Text that is
	// not addressed to Atoll queues nothing and is not an error.
	Comment(ctx context.Context, c CommentSubmission) (Submitted, error)
}

// UnlockReporter tells pull requests that their locks were released
// outside a comment (the dashboard, the API), in the same words and
// through the same hosts as the runner's own replies.
//
// Error codes: none; a pull request that could not be told is returned
// and the cause logged, since the unlock itself stands.
type UnlockReporter interface {
	// ReportUnlocked comments once on each pull request among locks' that
	// user released them from via ("the dashboard", "the API"). It returns
	// the pull requests it could not tell, as "owner/name#number".
	ReportUnlocked(ctx context.Context, locks []*Lock, user, via string) (failed []string)
}

// ApprovalPolicy is --plan-approval: which plans must be approved in Atoll
// before they are applied.
//
// Error codes: none; it only answers from its configuration.
type ApprovalPolicy interface {
	// Requires reports whether a plan of project (its name, may be "") in
	// dir of repo (owner/name; org/project/name on Azure DevOps) must be
	// approved before it is applied.
	Requires(repo, project, dir string) bool
}

// LogStream is the live output of running jobs, line by line as
// Terraform prints it; stored lines are read from LogService.
//
// Error codes: none. Subscribing to a job that has ended, or does not
// exist, is no error: its channel just never receives, so a subscriber
// reads the store after subscribing to catch what came before.
type LogStream interface {
	// Subscribe returns the lines of job jobID printed from now on, and
	// a function that ends the subscription. The channel is closed when
	// the job ends; a subscriber that falls too far behind misses lines,
	// which it reads back from the store.
	Subscribe(jobID int64) (lines <-chan LogLine, cancel func())
}
