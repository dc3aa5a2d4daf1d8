package templates

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/planview"
)

// Where a project's latest plan stands, as the pull request page says.
const (
	PlanApplicable = "applicable" // pending at the head commit: apply can use it
	PlanStale      = "stale"      // planned on an older commit than the head
	PlanApplied    = "applied"
	PlanDiscarded  = "discarded" // its lock was released, or the pull request closed
	PlanFailed     = "failed"    // the latest plan job did not succeed
	PlanRunning    = "planning"  // a plan job is queued or running
	PlanApplying   = "applying"  // an apply job of the plan is queued or running
	PlanNone       = "none"      // never planned
)

// ProjectRow is one project of a pull request with where it stands.
type ProjectRow struct {
	Project atoll.Project
	// Plan is the project's latest plan, whatever its state; nil if none.
	Plan *atoll.Plan
	// State is one of the Plan* constants, Reason says why in a sentence.
	State  string
	Reason string
	// Lock is the project's lock when this pull request holds it.
	Lock *atoll.Lock
	// Jobs are the project's latest jobs, newest first.
	Jobs []*atoll.Job
	// Notice follows a command sent from this row (?request=N&for=ID).
	Notice *RequestNotice
	// Approval is the latest plan's approval panel (nil without a plan).
	Approval *ApprovalView
}

// RequestNotice is the outcome of a command sent from the page: the
// request it queued and, once it has them, its jobs.
type RequestNotice struct {
	Request *atoll.Request
	Command string // plan or apply
	Jobs    []*atoll.Job
	// Live is the address of the notice alone (?section=notice), re-fetched
	// on changes of its pull request (Repo, Pull) while the request or its
	// jobs can still change; "" once final.
	Live string
	Repo string
	Pull int
}

// Final reports whether nothing more will happen to the request.
func (n *RequestNotice) Final() bool { return n.Live == "" }

// PlanPage shows one plan: its resource changes and outputs, redacted.
type PlanPage struct {
	Meta    Meta
	Plan    *atoll.Plan
	Pull    *atoll.Pull
	Job     *atoll.Job
	Project atoll.Project
	// State and Reason are as on the pull request page.
	State, Reason string
	// View is the parsed plan; nil when it cannot be shown (ViewError says why).
	View      *planview.Plan
	ViewError string
	// Log is the plan job's output, ANSI stripped and scrubbed of secrets;
	// LogTruncated is set when only its beginning is shown.
	Log          []atoll.LogLine
	LogTruncated bool
	// Approval is the plan's approval panel.
	Approval *ApprovalView
	// Policies are the plan's conftest policy check results (none when
	// policy checks were off).
	Policies []atoll.PolicyCheck
}

// PullAnchor is the id of a project's row on the pull request page.
func PullAnchor(projectID int64) string { return paths.ProjectAnchor(projectID) }

// ProjectsAnchor is the id of the pull request page's projects section.
const ProjectsAnchor = "projects"

// Sections of the pull request page, each re-fetched alone
// (?section=NAME) when a change of one of its topics arrives for the pull
// request; PullSectionNotice is the outcome of one command
// (?section=notice&request=N&for=ID|all).
const (
	PullSectionHead         = "head"
	PullSectionStatuses     = "statuses"
	PullSectionProjects     = "projects"
	PullSectionJobs         = "jobs"
	PullSectionLocks        = "locks"
	PullSectionConversation = "conversation"
	PullSectionNotice       = "notice"
)

// PullSections are the page's live sections, in order.
var PullSections = []string{PullSectionHead, PullSectionStatuses, PullSectionProjects, PullSectionJobs, PullSectionLocks, PullSectionConversation}

// Ids on the pull request page: the conversation's heading, the comment
// form and the comment form's outcome area.
const (
	ConversationAnchor = "conversation"
	CommentFormAnchor  = "comment"
	CommentOutcomeID   = "comment-outcome"
)

// PullSectionPath is the address of one section of a pull request page.
func PullSectionPath(repo string, number int, section string) string {
	return PullPath(repo, number) + "?section=" + url.QueryEscape(section)
}

// NoticeSectionPath is the notice of request `request` sent for project
// `of` (0: all), alone.
func NoticeSectionPath(repo string, number int, request, of int64) string {
	q := url.Values{"section": {PullSectionNotice}, "request": {strconv.FormatInt(request, 10)}, "for": {forValue(of)}}
	return PullPath(repo, number) + "?" + q.Encode()
}

// CommentPath is where the pull request page's comment box posts.
func CommentPath(repo string, number int) string { return paths.PullComment(repo, number) }

// CommandsPath is where the page's Plan and Apply buttons post.
func CommandsPath(repo string, number int) string { return paths.PullCommands(repo, number) }

// PlanPath is the page of a plan.
func PlanPath(id int64) string { return paths.Plan(id) }

// NoticePath is the pull request page showing the outcome of request id
// in the row of project `of` (0: the whole projects section).
func NoticePath(repo string, number int, request, of int64) string {
	q := url.Values{"request": {strconv.FormatInt(request, 10)}, "for": {forValue(of)}}
	return PullPath(repo, number) + "?" + q.Encode()
}

func forValue(of int64) string {
	if of == 0 {
		return "all"
	}
	return strconv.FormatInt(of, 10)
}

// noticeTarget is the element a notice for project `of` replaces.
func noticeTarget(of int64) string {
	if of == 0 {
		return ProjectsAnchor
	}
	return PullAnchor(of)
}

// NoticeTarget is noticeTarget for the handlers.
func NoticeTarget(of int64) string { return noticeTarget(of) }

func outcomeID(projectID int64) string {
	if projectID == 0 {
		return "outcome-all"
	}
	return "outcome-" + strconv.FormatInt(projectID, 10)
}

// canOperate reports whether the page's user may press Plan, Apply and
// Unlock. Pages served before sign-in existed have no user: the route
// itself then refuses.
func canOperate(m Meta) bool { return m.User == nil || m.User.Role.Allows(atoll.RoleOperator) }

func operatorTitle(m Meta) string {
	if canOperate(m) {
		return ""
	}
	return "This needs the operator role."
}

func pullOpen(p *atoll.Pull) bool { return p.State == "" || p.State == atoll.PullOpen }

// stateLabel is the badge text of a plan state.
func stateLabel(state string) string {
	if state == PlanNone {
		return "not planned"
	}
	return state
}

func requestPhrase(n *RequestNotice) string {
	cmd := "Command"
	if n.Command != "" {
		cmd = strings.ToUpper(n.Command[:1]) + n.Command[1:]
	}
	switch n.Request.State {
	case atoll.RequestQueued:
		return cmd + " queued as request #" + id(n.Request.ID)
	case atoll.RequestRunning:
		return cmd + " running as request #" + id(n.Request.ID)
	case atoll.RequestInterrupted:
		return cmd + " request #" + id(n.Request.ID) + " was interrupted"
	}
	return cmd + " request #" + id(n.Request.ID) + " done"
}

func jobProject(j *atoll.Job) string {
	return atoll.Project{Name: j.Project, Dir: j.Dir, Workspace: j.Workspace}.Label()
}

// Symbol classes colour the +, ~ and - of changes.
func actionClass(action string) string {
	switch action {
	case "create":
		return "add"
	case "delete":
		return "del"
	case "replace":
		return "rep"
	case "no-op":
		return "muted"
	}
	return "chg"
}

func changeClass(change string) string {
	switch change {
	case planview.ChangeAdd:
		return "add"
	case planview.ChangeRemove:
		return "del"
	case planview.ChangeUpdate:
		return "chg"
	}
	return "muted"
}

func changeSymbol(change string) string {
	switch change {
	case planview.ChangeAdd:
		return "+"
	case planview.ChangeRemove:
		return "-"
	case planview.ChangeUpdate:
		return "~"
	}
	return " "
}

// changedOnly keeps what changes (changed true) or what does not.
func changedOnly[T interface{ Changed() bool }](all []T, changed bool) []T {
	var out []T
	for _, x := range all {
		if x.Changed() == changed {
			out = append(out, x)
		}
	}
	return out
}

func changedResources(p *planview.Plan) []planview.Resource   { return changedOnly(p.Resources, true) }
func unchangedResources(p *planview.Plan) []planview.Resource { return changedOnly(p.Resources, false) }
func changedOutputs(p *planview.Plan) []planview.Output       { return changedOnly(p.Outputs, true) }
func unchangedOutputs(p *planview.Plan) []planview.Output     { return changedOnly(p.Outputs, false) }

func valueText(v *planview.Value) string {
	if v == nil {
		return "null"
	}
	return v.Text
}

func valueClass(v *planview.Value) string {
	switch {
	case v == nil:
		return "val muted"
	case v.Sensitive:
		return "val sensitive"
	case v.Unknown:
		return "val unknown"
	}
	return "val"
}

func attrCount(n int, what string) string {
	if n == 1 {
		return "1 unchanged " + what
	}
	return strconv.Itoa(n) + " unchanged " + what + "s"
}

func projectID(p *atoll.Project) int64 {
	if p == nil {
		return 0
	}
	return p.ID
}

func userName(m Meta) string {
	if m.User == nil {
		return "you"
	}
	return m.User.Name
}

// outputChangeKind maps an output's action to an attribute change, for
// values.
func outputChangeKind(o planview.Output) string {
	switch o.Action {
	case "create":
		return planview.ChangeAdd
	case "delete":
		return planview.ChangeRemove
	case "no-op":
		return planview.ChangeSame
	}
	return planview.ChangeUpdate
}
