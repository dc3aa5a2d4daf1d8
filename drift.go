package atoll

import (
	"context"
	"time"
)

// Drift detection: a drift check plans a repository's projects at the
// head of a branch (its default branch unless configured) and records
// whether each still matches it. A check runs as a request of kind
// RequestDrift on the repository's drift target: a pull request row of
// state PullDrift and a negative number, one per branch, so that its
// plan jobs, plans, logs and pages are those of any plan. It posts nothing
// to the VCS host, takes no lock, and is never applied by itself.

// RequestDrift is a drift check's request kind.
const RequestDrift = "drift"

// PullDrift is the state of a drift target's pull request row: it is no
// pull request, and lists of pull requests leave it out.
const PullDrift = "drift"

// Drift states of a project.
const (
	DriftInSync  = "in_sync"
	DriftDrifted = "drifted"
	DriftFailed  = "failed" // the check itself failed
)

// DriftCheck asks for a drift check of a repository's branch: every
// project, or those named (exact names or dirs).
type DriftCheck struct {
	// Reconcile applies what the check's plans would change: each plan
	// with changes waits for an approval (unless the server config's
	// drift_detection sets remediation auto), then ApplyDrift applies it
	// under the project's lock.
	Reconcile bool
	// Apply applies the approved reconcile plans of the projects named
	// (a reconcile's second step).
	Apply    bool
	Repo     Repo
	Branch   string
	Projects []string
	// Paths selects projects by dir and workspace (an empty workspace is
	// the default one), besides Projects.
	Paths  []DriftPath
	User   string
	Source string
	// PlanOnly plans without recording drift states (a plan-only
	// remediation): the outcome is read back from its jobs alone.
	PlanOnly bool
}

// DriftPath selects the project at Dir in Workspace ("" is
// DefaultWorkspace).
type DriftPath struct {
	Dir       string `json:"dir"`
	Workspace string `json:"workspace,omitempty"`
}

// DriftRemediation is a stored run of Atlantis's drift remediation API:
// its id (a UUID), repository (owner/name), ref, action and status, and
// the whole result as the API answers it (JSON).
type DriftRemediation struct {
	ID          string
	Repo        string
	Ref         string
	Action      string
	Status      string
	StartedAt   time.Time
	CompletedAt time.Time
	Result      []byte
}

// DriftResult is one project's check, as the runner records it from the
// check's plan job.
type DriftResult struct {
	JobID     int64
	ProjectID int64
	State     string
	// The plan's counts, and whether Terraform noted objects changed
	// outside of it (drift without a planned change).
	Add, Change, Destroy, Import, Forget int
	ChangedOutside                       bool
	Error                                string
}

// DriftProject is a project's drift state at a branch: its last check.
type DriftProject struct {
	ProjectID int64  `json:"project_id"`
	Repo      string `json:"repo"`
	Project   string `json:"project"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
	Branch    string `json:"branch"`
	State     string `json:"state"`
	// Since is when the state began (the first check that found it).
	Since     time.Time `json:"since"`
	CheckedAt time.Time `json:"checked_at"`
	JobID     int64     `json:"job_id"`
	// RequestID is the drift request of that check (its job's).
	RequestID int64  `json:"request_id"`
	HeadSHA   string `json:"head_sha"`
	Add       int    `json:"to_add"`
	Change    int    `json:"to_change"`
	Destroy   int    `json:"to_destroy"`
	Import    int    `json:"to_import"`
	Forget    int    `json:"to_forget"`
	// ChangedOutside: Terraform found objects changed outside of it.
	ChangedOutside bool   `json:"changed_outside"`
	Error          string `json:"error,omitempty"`
	// PendingPlanID is the newest plan of the project on the branch's
	// drift target neither applied nor discarded (0: none), and
	// PendingPlanSHA256 its hash: what a reconcile's apply applies, once
	// approved.
	PendingPlanID     int64  `json:"pending_plan_id,omitempty"`
	PendingPlanSHA256 string `json:"-"`
}

// DriftFilter selects drift states; zero fields match anything.
type DriftFilter struct {
	Repo   string // owner/name
	State  string
	Branch string
}

// DriftService is the store's side of drift checks. Errors: EINVALID
// (a branch name git refuses), ENOTFOUND (an unknown request).
type DriftService interface {
	// QueueDrift queues a drift check of c.Repo's branch, with its audit
	// event (drift.check), on the branch's drift target (made on first
	// use), and returns its request.
	QueueDrift(ctx context.Context, c DriftCheck) (*Request, error)
	// RecordDrift records the results of drift request requestID, each
	// project's state (its since kept while the state stays), and queues
	// notes (drift webhooks) in the outbox, in one transaction. Recording
	// the same results again changes nothing and queues nothing.
	RecordDrift(ctx context.Context, requestID int64, results []DriftResult, notes []Notification) error
	// DriftHistory lists a project's checks at branch, newest first, at
	// most limit (0: 50).
	DriftHistory(ctx context.Context, projectID int64, branch string, limit int) ([]*DriftCheckRecord, error)
	// DriftProjects lists the projects' drift states, by repository,
	// branch and project.
	DriftProjects(ctx context.Context, f DriftFilter) ([]*DriftProject, error)
	// AddDriftRemediation stores a remediation run (its ID unique).
	AddDriftRemediation(ctx context.Context, r DriftRemediation) error
	// DriftRemediation returns run id (ENOTFOUND: none).
	DriftRemediation(ctx context.Context, id string) (*DriftRemediation, error)
	// DriftRemediations lists repo's runs, newest first, at most limit.
	DriftRemediations(ctx context.Context, repo string, limit int) ([]*DriftRemediation, error)
}

// DriftOutcome is a finished drift request: the commit it checked and
// each project's result, in the order its jobs ran.
type DriftOutcome struct {
	Request  *Request
	Branch   string
	HeadSHA  string
	Projects []DriftProjectOutcome
}

// DriftProjectOutcome is one project's check in a DriftOutcome.
type DriftProjectOutcome struct {
	Job    *Job
	Result DriftResult
	// Output is the plan's output (Terraform's), for clients that ask.
	Output string
}

// Drifter runs drift checks for the web layer (the runner implements
// it). Errors: EFORBIDDEN (a repository not on the allowlist), EINVALID (a
// bad branch or project name), ENOTFOUND (an unknown request).
type Drifter interface {
	// CheckDrift queues a drift check and returns its request.
	CheckDrift(ctx context.Context, c DriftCheck) (*Request, error)
	// DriftOutcome waits, until ctx ends, for drift request id to end, and
	// returns its outcome.
	DriftOutcome(ctx context.Context, id int64) (*DriftOutcome, error)
}

// DriftSchedule is a repository branch's scheduled drift check (the
// server-side repo config's drift_detection).
type DriftSchedule struct {
	RepoID   int64
	Branch   string
	Schedule string   // cron
	Projects []string // globs over project names and dirs (none: all)
	// NextDueAt is when the next check is due (set by the store).
	NextDueAt time.Time
}

// NextFunc is a schedule's next time after after.
type NextFunc func(schedule string, after time.Time) (time.Time, error)

// DriftScheduler is the store's side of drift schedules. Every method is
// one transaction, committed (and replicated) before it returns.
type DriftScheduler interface {
	// SyncDriftSchedules makes the stored schedules those given, keyed by
	// repository and branch: a new one, or one whose schedule changed, is
	// next due at next(schedule, now); the others keep their due time; the
	// ones not given are removed.
	SyncDriftSchedules(ctx context.Context, want []DriftSchedule, next NextFunc) error
	// QueueDueDrift queues a drift check of every schedule due now (none
	// for a branch whose check is still queued or running) and moves each
	// to next(schedule, now), with its audit event: checks missed while no
	// node was active run once.
	QueueDueDrift(ctx context.Context, next NextFunc) ([]*Request, error)
	// DriftSchedules lists the stored schedules.
	DriftSchedules(ctx context.Context) ([]*DriftSchedule, error)
}

// DriftCheckRecord is one past check of a project (the drift page's
// history).
type DriftCheckRecord struct {
	ID             int64     `json:"id"`
	ProjectID      int64     `json:"project_id"`
	Branch         string    `json:"branch"`
	JobID          int64     `json:"job_id"`
	State          string    `json:"state"`
	HeadSHA        string    `json:"head_sha"`
	Add            int       `json:"to_add"`
	Change         int       `json:"to_change"`
	Destroy        int       `json:"to_destroy"`
	ChangedOutside bool      `json:"changed_outside"`
	Error          string    `json:"error,omitempty"`
	CheckedAt      time.Time `json:"checked_at"`
}

// DriftSelection is what a drift request's comment column holds: the
// projects it checks (none: all, or those Globs select) and what it does
// with them.
type DriftSelection struct {
	Projects []string    `json:"projects,omitempty"`
	Paths    []DriftPath `json:"paths,omitempty"`
	// Globs select projects by name or dir (a schedule's projects).
	Globs []string `json:"globs,omitempty"`
	// PlanOnly records no drift state (a plan-only remediation).
	PlanOnly bool `json:"plan_only,omitempty"`
	// Reconcile and Apply: a reconcile's plans and their apply.
	Reconcile bool `json:"reconcile,omitempty"`
	Apply     bool `json:"apply,omitempty"`
}
