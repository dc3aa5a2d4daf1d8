package atoll

// Kinds of VCSEvent: the webhooks Atoll acts on. Anything else is ignored.
const (
	VCSEventPullOpened      = "pull_opened"
	VCSEventPullReopened    = "pull_reopened"
	VCSEventPullSynchronize = "pull_synchronize"      // new commits on the head branch
	VCSEventPullClosed      = "pull_closed"           // merged or not: see Merged
	VCSEventPullReady       = "pull_ready_for_review" // a draft was marked ready: autoplan as if opened
	VCSEventComment         = "comment"
)

// VCSEvent is something that happened on a VCS host, reduced to what Atoll
// acts on: a webhook as its provider parsed it, or a comment posted through
// Atoll. (Event is the audit log's record.)
type VCSEvent struct {
	Kind       string // one of the VCSEvent* kinds
	DeliveryID string // the host's id for this delivery, when it sends one
	Repo       Repo
	Pull       Pull   // as the payload reports it; comments only carry Number
	Merged     bool   // for VCSEventPullClosed
	Draft      bool   // the pull request is a draft (pull events only)
	User       string // who acted: PR author/sender or comment author
	Comment    string // the comment body for VCSEventComment
	CommentID  string
	// Source is where an event that did not come from the host came from
	// (the client's address, for the dashboard and the API); empty for
	// webhooks.
	Source string
}
