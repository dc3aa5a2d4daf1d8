package atoll

import "context"

// Topics of a Change: what kind of state changed.
const (
	TopicJob      = "job"      // a job (or a request for jobs) was queued, started or finished
	TopicLock     = "lock"     // a lock was taken or released
	TopicPlan     = "plan"     // a plan was stored, applied or discarded
	TopicApproval = "approval" // a plan was approved or rejected
	TopicPull     = "pull"     // a pull request was opened, updated or closed
	TopicFreeze   = "freeze"   // the apply freeze was turned on or off
	TopicNode     = "node"     // this node's role changed, or its copy moved on
	TopicDrift    = "drift"    // a project's drift state was recorded
	// TopicUser: what a user may do changed (disabled, deleted, a new role
	// or password, signed out, a token revoked). Change.UserID names the
	// user; the live streams of that user check again that it may still
	// read them.
	TopicUser = "user"
)

// Change says that committed state changed, for the dashboard's live pages
// (and anything else that must not poll). It is published once, after the
// commit, and carries only what lets a page decide whether to re-read.
type Change struct {
	Topic string `json:"topic"`
	Repo  string `json:"repo,omitempty"`
	Pull  int    `json:"pull,omitempty"`
	JobID int64  `json:"job_id,omitempty"`
	// UserID is the user of a TopicUser change (0: any user). The change
	// stream does not pass it on.
	UserID int64 `json:"user_id,omitempty"`
	// Seq numbers the changes a ChangeService published (from 1; 0 on a
	// Change with Topic ""): with Published, a page can tell whether it
	// missed one.
	Seq uint64 `json:"seq,omitempty"`
}

// ChangeService publishes committed changes to in-process subscribers.
type ChangeService interface {
	// Publish sends c to every subscriber without blocking.
	Publish(c Change)
	// Subscribe returns a channel of changes from now on and a function
	// that ends the subscription. A subscriber that falls behind loses
	// changes but is told so by a Change with Topic "" (re-read everything).
	Subscribe() (<-chan Change, func())
	// Published is how many changes were published so far: the Seq of the
	// last one. A page that reads it before reading what it shows, and a
	// subscription that reads it after subscribing, tell whether a change
	// fell between the two.
	Published() uint64
}

type changeMarkKey struct{}

// NewContextWithChangeMark returns ctx carrying mark: how many changes the
// serving node had published ("node:seq") when the request began, before
// it read anything. What the request renders from the store includes
// every change up to it (changes are published after their commit).
func NewContextWithChangeMark(ctx context.Context, mark string) context.Context {
	return context.WithValue(ctx, changeMarkKey{}, mark)
}

// ChangeMarkFromContext is ctx's change mark, or "".
func ChangeMarkFromContext(ctx context.Context) string {
	m, _ := ctx.Value(changeMarkKey{}).(string)
	return m
}
