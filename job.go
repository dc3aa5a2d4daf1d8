package atoll

import (
	"context"
	"time"
)

// Job kinds.
const (
	JobPlan  = "plan"
	JobApply = "apply"
	// JobImport and JobStateRm run `terraform import` and `terraform state
	// rm` for an "atlantis import" or "atlantis state rm" comment.
	JobImport  = "import"
	JobStateRm = "state_rm"
)

// Job states. Queued and running are live; the rest are final.
const (
	JobQueued      = "queued"
	JobRunning     = "running"
	JobSucceeded   = "succeeded"
	JobFailed      = "failed"
	JobInterrupted = "interrupted"
	JobCanceled    = "canceled"
)

// Job is one unit of work: a plan or apply of one project of one pull request
// at one head commit, or a "resolve" job that turns a comment or webhook into
// project jobs once the repository has been checked out.
type Job struct {
	ID         int64      `json:"id"`
	Kind       string     `json:"kind"`
	State      string     `json:"state"`
	Repo       string     `json:"repo"`
	Pull       int        `json:"pull"`
	Project    string     `json:"project"`
	Dir        string     `json:"dir"`
	Workspace  string     `json:"workspace"`
	HeadSHA    string     `json:"head_sha"`
	User       string     `json:"user"`
	Error      string     `json:"error,omitempty"`
	Summary    *Summary   `json:"summary,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Spec       JobSpec    `json:"-"`
	PullID     int64      `json:"-"`
	ProjectID  int64      `json:"-"`
	RequestID  int64      `json:"-"`
	Attempt    int        `json:"-"`
	ClaimedBy  string     `json:"-"`
	// Reported is set once the final outcome was told to the pull request.
	Reported bool `json:"-"`
}

// JobSpec carries what the worker needs beyond the row's columns. It is
// stored as JSON and never holds secrets.
type JobSpec struct {
	// Drift marks a drift check's job (atoll.RequestDrift): its plan
	// takes no lock; its apply (a reconcile) takes the project's lock,
	// needs an approval unless AutoRemediation, and skips the pull
	// request's requirements (there is no pull request).
	Drift bool `json:"drift,omitempty"`
	// AutoRemediation: the server-side config's drift_detection sets
	// remediation auto for the repository: a reconcile applies without an
	// approval.
	AutoRemediation   bool     `json:"auto_remediation,omitempty"`
	ExtraArgs         []string `json:"extra_args,omitempty"`
	Verbose           bool     `json:"verbose,omitempty"`
	Workflow          string   `json:"workflow,omitempty"`
	TerraformVersion  string   `json:"terraform_version,omitempty"`
	ApplyRequirements []string `json:"apply_requirements,omitempty"`
	PlanRequirements  []string `json:"plan_requirements,omitempty"`
	Autoplan          bool     `json:"autoplan,omitempty"`
	Parallel          bool     `json:"parallel,omitempty"`       // run beside the request's other jobs
	ParallelApply     bool     `json:"parallel_apply,omitempty"` // for plan jobs: whether their applies may run in parallel
	Automerge         bool     `json:"automerge,omitempty"`      // merge once every plan is applied
	// DeleteSourceBranch deletes the head branch when automerge merges
	// (delete_source_branch_on_merge).
	DeleteSourceBranch bool `json:"delete_source_branch,omitempty"`
	// SilencePRComments names the commands (plan, apply) whose results for
	// this project are not commented (silence_pr_comments).
	SilencePRComments []string `json:"silence_pr_comments,omitempty"`
	PlanID            int64    `json:"plan_id,omitempty"` // for apply jobs: the stored plan to apply
	// Group is the project's execution_order_group: a request runs its
	// jobs group by group, lowest first. DependsOn names the projects that
	// must succeed before this one runs; AbortOnOrderFail stops later
	// groups after a group with a failure. Stored with the job, so that a
	// resumed request keeps the order.
	Group            int      `json:"group,omitempty"`
	DependsOn        []string `json:"depends_on,omitempty"`
	AbortOnOrderFail bool     `json:"abort_on_order_fail,omitempty"`
	// LockTaken is set on a plan job whose request took the project's lock
	// (it was not held by the pull request before): a job that never runs
	// gives it back.
	LockTaken bool `json:"lock_taken,omitempty"`
	// LockMode is the project's repo_locks mode when the job was queued:
	// "" or on_plan (plans take the lock), on_apply (applies take it) or
	// disabled (nothing does). An apply keeps its plan's.
	LockMode string `json:"lock_mode,omitempty"`
	// BaseSHA is, with the merge checkout strategy, the base branch commit
	// the planned tree was merged onto (set when the plan succeeds; applies
	// inherit it). The undiverged requirement looks at base commits after it.
	BaseSHA string `json:"base_sha,omitempty"`
	// From the project's workflow: extra arguments of the built-in steps
	// and KEY=VALUE environment of env steps (values from atlantis.yaml).
	InitArgs  []string `json:"init_args,omitempty"`
	PlanArgs  []string `json:"plan_args,omitempty"`
	ApplyArgs []string `json:"apply_args,omitempty"`
	Env       []string `json:"env,omitempty"`
	// PlanSteps and ApplySteps are a custom workflow's stages, run in
	// order; nil runs the default stage. They are stored with the job so
	// that a restart or another node runs what was resolved.
	PlanSteps  []Step `json:"plan_steps,omitempty"`
	ApplySteps []Step `json:"apply_steps,omitempty"`
	// ImportSteps and StateRmSteps are the import and state_rm stages;
	// Args are the comment's ADDRESS and ID (import) or ADDRESSes (state
	// rm), each passed to Terraform as one argument after its flags.
	ImportSteps        []Step   `json:"import_steps,omitempty"`
	StateRmSteps       []Step   `json:"state_rm_steps,omitempty"`
	Args               []string `json:"args,omitempty"`
	ImportRequirements []string `json:"import_requirements,omitempty"`

	// TerraformDistribution is the project's terraform_distribution.
	TerraformDistribution string `json:"terraform_distribution,omitempty"`
	// PolicyArgs are the extra_args of the workflow's policy_check step,
	// passed to conftest after its own arguments.
	PolicyArgs []string `json:"policy_args,omitempty"`
	// PolicySteps are the run, env and multienv steps of the workflow's
	// policy_check stage, in order, with a policy_check step where conftest
	// runs; nil when the stage has none (conftest alone runs).
	PolicySteps []Step `json:"policy_steps,omitempty"`
	// CustomPolicyCheck is the project's custom_policy_check, where
	// allowed_overrides lets it set one; nil: the server config's.
	CustomPolicyCheck *bool `json:"custom_policy_check,omitempty"`
	// PolicyCheck is the project's policy_check, where allowed_overrides
	// lets it set one; nil: the server config's. An apply keeps its plan
	// job's.
	PolicyCheck *bool `json:"policy_check,omitempty"`
	// Pool is the execution pool whose workers run the job: the project's
	// execution_pool (repocfg.Project.ExecutionPool). "" is local
	// (PoolLocal): the active node runs it. An apply keeps its plan job's.
	Pool string `json:"pool,omitempty"`
}

// Step is one step of a custom workflow stage, from atlantis.yaml.
type Step struct {
	// Name is init, plan, show, apply, import, state_rm, run, env or
	// multienv.
	Name      string   `json:"name"`
	ExtraArgs []string `json:"extra_args,omitempty"` // init, plan, apply, import, state_rm
	// Command is run by Shell with ShellArgs (default sh -c): run,
	// multienv, and env without a value.
	Command   string   `json:"command,omitempty"`
	Shell     string   `json:"shell,omitempty"`
	ShellArgs []string `json:"shell_args,omitempty"`
	// Output is show (the default), hide or strip_refreshing.
	Output      string   `json:"output,omitempty"`
	FilterRegex []string `json:"filter_regex,omitempty"` // run: parts of the output redacted
	EnvName     string   `json:"env_name,omitempty"`     // env
	Value       *string  `json:"value,omitempty"`        // env with a value
}

// Final reports whether the state can no longer change.
func (j Job) Final() bool { return j.State != JobQueued && j.State != JobRunning }

// JobFilter selects jobs; zero fields match anything.
type JobFilter struct {
	Repo  string
	Pull  int
	State string
	Kind  string
	Limit int
	// Project matches a project's name or its dir.
	Project string
	// User is who triggered the job.
	User string
	// From and To bound the creation time: From <= created_at < To.
	From, To time.Time
	// Before and After are keyset cursors: only jobs with a smaller
	// (Before) or larger (After) id; set at most one.
	Before, After int64
}

// Request kinds: what a webhook or comment asks Atoll to do. A worker turns a
// request into jobs once the repository is checked out.
const (
	RequestAutoplan = "autoplan"
	RequestComment  = "comment"
	RequestClose    = "close"
)

// Request states.
const (
	RequestQueued      = "queued"
	RequestRunning     = "running"
	RequestDone        = "done"
	RequestInterrupted = "interrupted"
)

// Request is a durable unit of intake: one autoplan, one PR comment or one
// close. It is committed before the webhook is answered.
type Request struct {
	ID         int64      `json:"id"`
	Kind       string     `json:"kind"`
	State      string     `json:"state"`
	PullID     int64      `json:"-"`
	Repo       string     `json:"repo"`
	Pull       int        `json:"pull"`
	Comment    string     `json:"comment,omitempty"` // raw comment text, re-parsed by the worker
	CommentID  string     `json:"-"`
	User       string     `json:"user"`
	HeadSHA    string     `json:"head_sha"`
	Error      string     `json:"error,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	// Source is where the request came from, for the audit log: the
	// client's address (dashboard, API) or "pr-comment"/"webhook".
	Source string `json:"source,omitempty"`
}

// JobCount is the number of jobs of a kind in a state.
type JobCount struct {
	Kind, State string
	N           int
}

// JobHistory is one page of the runs history, newest first.
type JobHistory struct {
	Jobs []*Job
	// Older and Newer report whether jobs matching the filter exist beyond
	// the page's last (older) or first (newer) job.
	Older, Newer bool
}

// JobService reads jobs and the requests that queued them.
type JobService interface {
	Job(ctx context.Context, id int64) (*Job, error)
	Jobs(ctx context.Context, f JobFilter) ([]*Job, error)
	JobCounts(ctx context.Context) ([]JobCount, error)
	FinishedJobs(ctx context.Context, limit int) ([]*Job, error)
	JobHistory(ctx context.Context, f JobFilter) (JobHistory, error)
	PullJobs(ctx context.Context, pullID int64) ([]*Job, error)
	Request(ctx context.Context, id int64) (*Request, error)
	RequestJobs(ctx context.Context, requestID int64) ([]*Job, error)
	CountRequests(ctx context.Context, state string) (int, error)
	// CanceledBy returns the requests of the pull request that a cancel
	// marked with msg.
	CanceledBy(ctx context.Context, pullID int64, msg string) ([]*Request, error)
	// ClaimRequest claims the oldest queued request for node, or nil.
	ClaimRequest(ctx context.Context, node string) (*Request, error)

	// The runner's writes, one transaction each (see store/jobrun.go).
	StartJob(ctx context.Context, id int64) error
	// FinishJob records the job's final state with the notifications its
	// end sends.
	FinishJob(ctx context.Context, id int64, state, msg string, summary *Summary, notes []Notification) error
	// SkipJob records a queued job not run; a plan, import or state rm
	// gives back the lock its request took for it.
	SkipJob(ctx context.Context, j *Job, reason, source, releaseReason string) error
	InsertJobs(ctx context.Context, jobs []*Job) error
	// QueueProjectJobs records each job's project and queues the job.
	QueueProjectJobs(ctx context.Context, repoID int64, jobs []*Job) error
	// FinishStateJob discards the project's unapplied plans and finishes
	// an import or state rm, with its audit event.
	FinishStateJob(ctx context.Context, j *Job, event func(discarded int) Event) (int, error)
	MarkJobsReported(ctx context.Context, ids []int64) error
	RequeueRunning(ctx context.Context) ([]*Job, error)
	// RequeueOrphans requeues node's running requests that none of its
	// workers holds (live are those they hold), returning how many.
	RequeueOrphans(ctx context.Context, node string, live []int64) (int, error)
	CancelRequestJobs(ctx context.Context, requestID int64, msg string) error
	FinishRequest(ctx context.Context, id int64, state, msg string) error
	// Intake records a webhook and queues its request, unless redelivered.
	Intake(ctx context.Context, in Intake) (queued bool, err error)
}
