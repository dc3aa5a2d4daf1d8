// Package executor is the seam between the runner, which decides what runs
// when (intake, scheduling, locks, the store, the pull request), and what
// runs one job: check out the project, init, and run its plan (with its
// policy checks) with Terraform. The runner hands an Executor a Spec and
// gets back a Result; both are plain data, so that an executor may live in
// another process (a pull-based worker, a Kubernetes Job) and receive the
// spec and send back the result over HTTP. Live log lines, and the one
// moment an apply must ask the runner (Applying), go through Events.
//
// The runner's in-process implementation is runner.LocalExecutor.
package executor

import (
	"context"
	"errors"

	"github.com/atollhq/atoll"
)

// Executor runs one job and returns what it produced. It never touches the
// store or the pull request: what it returns, the runner stores and
// reports. An error is the job's failure (with what the job produced until
// then in the Result); the runner records it and tells the user its
// message (an *atoll.Error's as it is).
type Executor interface {
	Run(ctx context.Context, spec Spec, events Events) (Result, error)
}

// LogSink receives the job's log lines as they are written, numbered and
// stored by the runner. stream is one of atoll.Stream*.
type LogSink interface {
	Write(stream, text string)
}

// Events is what the runner is told while a job runs.
type Events interface {
	LogSink
	// Applying is called by an apply once its checkout and init are done
	// and the plan file is in place, before Terraform changes anything:
	// the runner marks the plan applied in the store there (so that it is
	// never applied twice), checking its approval and policies once more.
	// An error stops the job with nothing applied, and is its failure. A
	// remote executor asks the server this over the wire.
	Applying(ctx context.Context) error
	// Flush returns once every line written so far is stored (committed,
	// and replicated when a replica is configured): a remote executor
	// acknowledges a worker's batch of lines only then.
	Flush() error
	// Waiting tells the user where a job that waits stands (for a worker
	// of its pool, then on the worker that claimed it): the runner shows
	// desc as the job's pending commit status description.
	Waiting(ctx context.Context, desc string)
}

// ErrStopping is the cause of a job's context cancelled because this
// process stops its work (a shutdown, or a node that lost its lease), not
// because the user canceled the job. An executor whose runs go on without
// this process (a worker pool) leaves them running and returns an error
// wrapping ErrDetached: the runner records nothing, and the node that
// takes over follows the run to its end.
var ErrStopping = errors.New("atoll is stopping")

// ErrDetached is wrapped by the error of a run left to go on without this
// process (see ErrStopping).
var ErrDetached = errors.New("the run goes on without this process")

// Interrupted is the error of a job that stopped without finishing for a
// reason of the execution's own (its worker stopped reporting): the
// runner records the job interrupted, not failed, with Message as its
// error. It is never retried by the runner: a plan that may run again was
// already run again by the executor.
type Interrupted struct {
	Message string
}

func (e *Interrupted) Error() string { return "interrupted: " + e.Message }

// Spec is everything an executor needs to run one job.
type Spec struct {
	Job       Job       `json:"job"`
	Checkout  Checkout  `json:"checkout"`
	Terraform Terraform `json:"terraform"`
	// PullEnv is what run steps are told of the pull request, the commit
	// and the command (Atlantis's BASE_REPO_NAME, PULL_NUM, USER_NAME,
	// COMMENT_ARGS...), KEY=VALUE.
	PullEnv []string `json:"pull_env,omitempty"`
	// PolicyCheck runs the server's policy sets against a successful plan
	// (--enable-policy-checks, unless the repository or project turned
	// them off); CustomPolicyCheck makes the policy_check stage's run
	// steps the check instead of conftest (custom_policy_check).
	PolicyCheck       bool `json:"policy_check,omitempty"`
	CustomPolicyCheck bool `json:"custom_policy_check,omitempty"`
	// Plan is, for an apply, the stored plan file to apply.
	Plan []byte `json:"plan,omitempty"`
}

// Job is the job to run: its row's columns that execution reads, and its
// spec as stored.
type Job struct {
	ID        int64  `json:"id"`
	Kind      string `json:"kind"` // atoll.JobPlan, JobApply, JobImport or JobStateRm
	Repo      string `json:"repo"` // owner/name
	Pull      int    `json:"pull"`
	Project   string `json:"project,omitempty"`
	Dir       string `json:"dir"`
	Workspace string `json:"workspace"`
	HeadSHA   string `json:"head_sha"`
	User      string `json:"user"`
	// Spec is the job's stored spec: workflow steps, arguments, Terraform
	// version and distribution, policy arguments.
	Spec atoll.JobSpec `json:"spec"`
}

// Checkout is the tree the job runs in: the pull request's commit, in a
// work dir of the job's workspace.
type Checkout struct {
	// RequestID is the request the job belongs to: the in-process executor
	// shares one checkout among a request's jobs of a workspace and commit.
	RequestID int64  `json:"request_id"`
	VCS       string `json:"vcs"`
	Host      string `json:"host"`
	Owner     string `json:"owner"`
	Name      string `json:"name"`
	Pull      int    `json:"pull"`
	Workspace string `json:"workspace"`
	HeadSHA   string `json:"head_sha"`
	HeadRef   string `json:"head_ref,omitempty"`
	// MergeBase, with the merge checkout strategy, is the base branch the
	// head is merged onto; the Result's BaseSHA is its tip as checked out.
	// "" with the branch strategy.
	MergeBase string `json:"merge_base,omitempty"`
	// ExtraRefs are the host's refs that hold the pull request's commits
	// besides its branches (a fork's, such as refs/pull/N/head).
	ExtraRefs []string `json:"extra_refs,omitempty"`
}

// Terraform is the binary the job runs and its environment.
type Terraform struct {
	// Bin is the binary selected for the job ("" runs the executor's
	// default); Version is its version when known ("" asks the binary).
	// A remote executor installs what Version and Distribution name.
	Bin     string `json:"bin,omitempty"`
	Version string `json:"version,omitempty"`
	// Env is the project's workflow environment (env steps with values),
	// added to Terraform's; RunEnv is the git credential helper settings
	// of the run (private module sources), never part of a fingerprint.
	// RunEnv names this server's helper and the request's grant: only the
	// in-process executor can use it; a remote one gets credentials of its
	// own.
	Env    []string `json:"env,omitempty"`
	RunEnv []string `json:"run_env,omitempty"`
	// Distribution is terraform or opentofu: what `terraform` (or `tofu`)
	// names in run steps.
	Distribution string `json:"distribution,omitempty"`
}

// Result is what a job produced.
type Result struct {
	// Output is what the pull request comment shows of the run: Terraform's
	// output, or the workflow steps' as Atlantis joins them.
	Output  string         `json:"output,omitempty"`
	Summary *atoll.Summary `json:"summary,omitempty"`
	// Plan is the plan file and ShowJSON its `terraform show -json`, for
	// the runner to store: only a stored plan is applied.
	Plan     []byte `json:"plan,omitempty"`
	ShowJSON []byte `json:"show_json,omitempty"`
	// ShowLater, set only by an in-process executor, makes ShowJSON after
	// the fact: the plan's Summary came from plan's own text, so the
	// comment need not wait for `show -json`. The runner calls it once,
	// after the plan is stored and told, while the request still holds the
	// checkout.
	ShowLater func(context.Context) ([]byte, error) `json:"-"`
	// Policies are the policy sets' results, when Spec.PolicyCheck.
	Policies []atoll.PolicyCheck `json:"policies,omitempty"`
	// BaseSHA is, with Checkout.MergeBase, the base commit the checkout
	// was merged onto.
	BaseSHA string `json:"base_sha,omitempty"`
}
