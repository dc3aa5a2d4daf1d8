package atoll

import (
	"context"
	"encoding/json"
	"io"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"
)

// Execution pools: where a job's Terraform runs. A job of PoolLocal runs
// in the active node itself; a job of any other pool is dispatched to the
// `atoll worker` processes of that pool, which pull it over HTTP(S) with a
// worker token of the pool (docs/workers.md).

// PoolLocal is the pool of jobs the active node runs itself: the default.
const PoolLocal = "local"

// poolName is a worker pool's name: a DNS label, since it names
// Kubernetes objects too.
var poolName = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ValidPool reports whether name names a pool: PoolLocal, or 1 to 63
// lower-case letters, digits and '-', starting and ending with a letter or
// digit. The one rule for repos config, worker tokens and workers.
func ValidPool(name string) bool { return name == PoolLocal || poolName.MatchString(name) }

// CheckWorkerToken is the rule for a new worker token's name and pool:
// EINVALID, saying what to fix. The one owner of it (the store applies it).
func CheckWorkerToken(name, pool string) error {
	switch {
	case strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 100:
		return Errorf(EINVALID, "Name the worker token (1 to 100 characters), e.g. after the machines that use it.")
	case pool == "":
		return Errorf(EINVALID, "Name the pool whose workers use the token.")
	case pool == PoolLocal:
		return Errorf(EINVALID, "The pool %q is the active node's own: choose another pool.", PoolLocal)
	case !ValidPool(pool):
		return Errorf(EINVALID, "Pool %q is not a pool name: 1 to 63 lower-case letters, digits and '-', starting and ending with a letter or digit.", pool)
	}
	return nil
}

// WorkerProtocol is the version of the worker protocol this build speaks.
// A worker that speaks another is refused at its claim, with both numbers.
const WorkerProtocol = 1

// Dispatch states.
const (
	DispatchQueued   = "queued"   // waiting for a worker of its pool
	DispatchClaimed  = "claimed"  // a worker holds it while its lease lasts
	DispatchDone     = "done"     // the worker reported its result
	DispatchLost     = "lost"     // the lease ran out before a result
	DispatchCanceled = "canceled" // the job was canceled or stopped
)

// WorkerToken is the credential of the workers of one pool. Only its hash
// is stored; the secret is shown once, when it is made.
type WorkerToken struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Pool      string     `json:"pool"`
	CreatedBy string     `json:"created_by"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
	RevokedBy string     `json:"revoked_by,omitempty"`
	// SeenAt, Worker and Version are the last claim made with it: when,
	// the worker's name and its version.
	SeenAt  *time.Time `json:"seen_at,omitempty"`
	Worker  string     `json:"worker,omitempty"`
	Version string     `json:"version,omitempty"`
}

// Revoked reports whether the token was revoked.
func (t *WorkerToken) Revoked() bool { return t.RevokedAt != nil }

// Dispatch is a job handed to a pool: what its worker is given, who holds
// it and until when, and what it reported.
type Dispatch struct {
	JobID   int64  `json:"job_id"`
	Pool    string `json:"pool"`
	Attempt int    `json:"attempt"` // 1, then 2 for a plan run again after a lost worker
	State   string `json:"state"`
	// TokenID and Worker are the worker token and name of the worker that
	// claimed it (zero and "" while queued).
	TokenID int64  `json:"token_id,omitempty"`
	Worker  string `json:"worker,omitempty"`
	// JobTokenHash is the SHA-256 of the job token handed to the worker at
	// its claim: the job's own credential, good while the claim holds.
	JobTokenHash   []byte     `json:"-"`
	LeaseExpiresAt *time.Time `json:"lease_expires_at,omitempty"`
	// LogAcked is the last of the worker's lines (numbered by the worker
	// from 1 each attempt) acknowledged as stored: lines sent again after
	// a lost answer or a failover are skipped up to it.
	LogAcked int64 `json:"log_acked"`
	// Applying is set once the server let the worker's apply start.
	Applying bool `json:"applying,omitempty"`
	// Spec is the executor spec the worker runs (JSON, without the plan
	// file); PlanSHA256 is, for an apply, the SHA-256 of the plan file the
	// worker downloads.
	Spec       json.RawMessage `json:"-"`
	PlanSHA256 string          `json:"plan_sha256,omitempty"`
	// ClaimHash, when set, pins the dispatch to the one claimant that
	// holds the secret it hashes (a process started for this job alone):
	// the pool's workers never claim it.
	ClaimHash []byte `json:"-"`
	// Result is the worker's report (a WorkerResult, JSON) once done.
	Result     json.RawMessage `json:"-"`
	CreatedAt  time.Time       `json:"created_at"`
	ClaimedAt  *time.Time      `json:"claimed_at,omitempty"`
	FinishedAt *time.Time      `json:"finished_at,omitempty"`
}

// Live reports whether the dispatch may still end with a result at now:
// queued, or claimed under a lease that has not run out.
func (d *Dispatch) Live(now time.Time) bool {
	switch d.State {
	case DispatchQueued:
		return true
	case DispatchClaimed:
		return d.LeaseExpiresAt != nil && now.Before(*d.LeaseExpiresAt)
	}
	return false
}

// DispatchService is the store's side of worker pools. Every method is one
// transaction; those that change something are committed (and replicated)
// before they return.
type DispatchService interface {
	// CreateWorkerToken stores a new worker token of pool with the hash
	// of its secret (the caller makes and shows the secret) and its audit
	// event. EINVALID for an empty name or a pool that is not a pool name.
	CreateWorkerToken(ctx context.Context, name, pool string, hash []byte, actor, source string) (*WorkerToken, error)
	// RevokeWorkerToken revokes token id with its audit event: claims and
	// job calls made with it are refused from then on (ENOTFOUND).
	RevokeWorkerToken(ctx context.Context, id int64, actor, source string) (*WorkerToken, error)
	// WorkerTokens lists every worker token, newest first.
	WorkerTokens(ctx context.Context) ([]*WorkerToken, error)
	// WorkerTokenByHash is the token whose secret hashes to hash
	// (EUNAUTHORIZED when none, or when revoked).
	WorkerTokenByHash(ctx context.Context, hash []byte) (*WorkerToken, error)
	// SeeWorker records a claim's worker name and version on token id.
	SeeWorker(ctx context.Context, id int64, worker, version string) error

	// QueueDispatch queues d (attempt 1) unless job d.JobID has a
	// dispatch already, and returns the job's dispatch either way: a job
	// is dispatched once, and a node that takes over finds it.
	QueueDispatch(ctx context.Context, d *Dispatch) (*Dispatch, error)
	// Dispatch returns job id's dispatch (ENOTFOUND).
	Dispatch(ctx context.Context, jobID int64) (*Dispatch, error)
	// ClaimDispatch gives the oldest queued dispatch of pool to the
	// worker (token, name) under a lease, with the job token hash; nil
	// when none is queued.
	ClaimDispatch(ctx context.Context, pool string, tokenID int64, worker string, jobTokenHash []byte, lease time.Duration) (*Dispatch, error)
	// ClaimPinnedDispatch gives the queued dispatch pinned to claimHash
	// to the worker (as ClaimDispatch); the pinning secret is spent.
	// EUNAUTHORIZED when no queued dispatch is pinned to it.
	ClaimPinnedDispatch(ctx context.Context, claimHash []byte, worker string, jobTokenHash []byte, lease time.Duration) (*Dispatch, error)
	// RenewDispatch extends the lease of job id's claim held under
	// jobTokenHash. ECONFLICT once the claim is not held (lost, canceled,
	// done, its lease run out or its worker token revoked).
	RenewDispatch(ctx context.Context, jobID int64, jobTokenHash []byte, lease time.Duration) (*Dispatch, error)
	// MarkDispatchApplying records that the server let the apply start
	// (same refusals as RenewDispatch).
	MarkDispatchApplying(ctx context.Context, jobID int64, jobTokenHash []byte) error
	// AckDispatchLogs records that the worker's lines up to seq are
	// stored, and extends the lease as a heartbeat does (same refusals as
	// RenewDispatch).
	AckDispatchLogs(ctx context.Context, jobID int64, jobTokenHash []byte, seq int64, lease time.Duration) error
	// FinishDispatch stores the worker's result and ends the claim (same
	// refusals as RenewDispatch).
	FinishDispatch(ctx context.Context, jobID int64, jobTokenHash []byte, result json.RawMessage) error
	// ExpireDispatch ends job id's claim whose lease ran out at now
	// (ECONFLICT when it did not, or the claim already ended) and, with
	// requeue, queues it again as its next attempt, pinned to claimHash
	// when one is given.
	ExpireDispatch(ctx context.Context, jobID int64, requeue bool, claimHash []byte) (*Dispatch, error)
	// EndDispatch ends attempt of job id's dispatch, queued or claimed,
	// whose claimant is known to be gone (its Kubernetes pod ended), lease
	// or not, as ExpireDispatch does. ECONFLICT when the dispatch is at
	// another attempt or has ended.
	EndDispatch(ctx context.Context, jobID int64, attempt int, requeue bool, claimHash []byte) (*Dispatch, error)
	// PinDispatch pins job id's queued attempt to claimHash (a new
	// claimant is started for it). ECONFLICT when the dispatch is at
	// another attempt or not queued.
	PinDispatch(ctx context.Context, jobID int64, attempt int, claimHash []byte) (*Dispatch, error)
	// CancelDispatch ends job id's dispatch, queued or claimed, as
	// canceled; a dispatch already ended is left as it is.
	CancelDispatch(ctx context.Context, jobID int64) error
	// Dispatches lists the dispatches in the given states (all when
	// none), oldest first.
	Dispatches(ctx context.Context, states ...string) ([]*Dispatch, error)
	// PruneDispatchResults drops the results (plan files, show JSON) kept
	// for jobs that have ended: the runner stored what it needed.
	PruneDispatchResults(ctx context.Context) error
	// PoolQueues is each execution pool's backlog, by pool name:
	// PoolLocal and every pool with an unrevoked worker token always (at
	// zero when idle), any other pool while it has work waiting.
	PoolQueues(ctx context.Context) ([]PoolQueue, error)
}

// PoolQueue is the backlog of one execution pool: what waits to run there.
type PoolQueue struct {
	Pool string `json:"pool"`
	// Jobs are the pool's jobs queued and not started yet.
	Jobs int `json:"jobs"`
	// Dispatches are the pool's jobs started and handed to its workers,
	// not claimed yet (always zero for PoolLocal, which has no workers).
	Dispatches int `json:"dispatches"`
}

// WorkerHello is a worker's claim: who it is, the pool it serves (it must
// be its token's) and the protocol it speaks.
type WorkerHello struct {
	Worker   string `json:"worker"`
	Pool     string `json:"pool"`
	Version  string `json:"version"`
	Protocol int    `json:"protocol"`
}

// WorkerAssignment is a claimed job as its worker is given it.
type WorkerAssignment struct {
	JobID int64 `json:"job_id"`
	// JobToken authenticates the worker's calls for this job (heartbeat,
	// logs, plan, result, git) until the claim ends.
	JobToken string `json:"job_token"`
	// LeaseSeconds is how long a claim lasts without a heartbeat.
	LeaseSeconds int `json:"lease_seconds"`
	Attempt      int `json:"attempt"`
	// Spec is the executor spec (runner/executor.Spec) without the plan
	// file; PlanSHA256 is, for an apply, the SHA-256 the downloaded plan
	// must have.
	Spec       json.RawMessage `json:"spec"`
	PlanSHA256 string          `json:"plan_sha256,omitempty"`
}

// WorkerLease is the answer to a heartbeat.
type WorkerLease struct {
	LeaseExpiresAt time.Time `json:"lease_expires_at"`
}

// WorkerLogLine is one line of a job's output as its worker sends it;
// Seq counts the worker's lines of the job from 1.
type WorkerLogLine struct {
	Seq    int64     `json:"seq"`
	Stream string    `json:"stream"`
	Time   time.Time `json:"time"`
	Text   string    `json:"text"`
}

// WorkerResult is what a worker reports at a job's end: the executor's
// Result (JSON) and, for a job that failed, the user-facing error.
type WorkerResult struct {
	Result json.RawMessage `json:"result"`
	// PlanSHA256 is the SHA-256 of the plan file in Result: a mismatch is
	// refused.
	PlanSHA256 string `json:"plan_sha256,omitempty"`
	Error      *Error `json:"error,omitempty"`
}

// WorkerService is the control plane's side of the worker protocol, what
// the /api/v1/workers routes call. Worker calls authenticate with the
// worker token's secret; job calls with the job token of the claim.
// Errors: EUNAUTHORIZED (an unknown or revoked worker token), EFORBIDDEN
// (a pool not the token's), EINVALID (another protocol, a bad batch or
// result, a plan hash mismatch), ECONFLICT (the job token does not hold the
// job: a wrong or earlier attempt's token, or the claim was lost, canceled,
// expired or ended, or its worker token revoked), EUNAVAILABLE (this node cannot take it
// now: retry, possibly on the next active), ETOOLARGE.
type WorkerService interface {
	// Claim waits up to wait for a job of the worker's pool and returns
	// it, or nil when none came.
	Claim(ctx context.Context, secret string, hello WorkerHello, wait time.Duration) (*WorkerAssignment, error)
	// Holds checks, reading only, that jobToken holds job jobID's claim:
	// the routes that take a large body ask it before reading one.
	Holds(ctx context.Context, jobID int64, jobToken string) error
	// Heartbeat extends the claim's lease.
	Heartbeat(ctx context.Context, jobID int64, jobToken string) (*WorkerLease, error)
	// Logs stores a batch of the job's lines; it returns once they are
	// committed (and replicated). Lines already stored are skipped.
	Logs(ctx context.Context, jobID int64, jobToken string, lines []WorkerLogLine) error
	// Applying asks whether the apply may start (the plan is marked
	// applied then: asking again after a yes is a yes).
	Applying(ctx context.Context, jobID int64, jobToken string) error
	// Plan returns the plan file an apply applies.
	Plan(ctx context.Context, jobID int64, jobToken string) ([]byte, error)
	// Result stores the job's result; it returns once committed.
	Result(ctx context.Context, jobID int64, jobToken string, res WorkerResult) error
	// UploadPack serves git's smart HTTP upload-pack of the job's
	// repository (and no other): the advertisement when advertise, else
	// the answer to the request read from in. gitProtocol is the client's
	// Git-Protocol header.
	UploadPack(ctx context.Context, jobID int64, jobToken string, advertise bool, gitProtocol string, in io.Reader, out io.Writer) error
}

// WorkerAdmin is what the dashboard shows and does of worker pools.
type WorkerAdmin interface {
	// CreateWorkerToken makes a worker token of pool and returns it with
	// its secret, shown once (EINVALID).
	CreateWorkerToken(ctx context.Context, name, pool, actor, source string) (*WorkerToken, string, error)
	// RevokeWorkerToken revokes token id: its workers' polls and jobs
	// stop (ENOTFOUND).
	RevokeWorkerToken(ctx context.Context, id int64, actor, source string) error
	// Workers lists the pools' tokens, the workers seen recently and the
	// jobs they hold, and the queued jobs per pool.
	Workers(ctx context.Context) (*WorkerOverview, error)
}

// WorkerOverview is the workers page.
type WorkerOverview struct {
	Tokens []*WorkerToken `json:"tokens"`
	// Workers are the workers seen by this node (claims and job calls)
	// within the last lease.
	Workers []WorkerSeen `json:"workers"`
	// Queued counts the dispatches waiting for a worker, by pool.
	Queued map[string]int `json:"queued"`
	// Running are the claimed dispatches.
	Running []*Dispatch `json:"running"`
	// Kubernetes are the pools whose every job runs as its own Kubernetes
	// Job, by pool: where ("namespace ci").
	Kubernetes map[string]string `json:"kubernetes,omitempty"`
}

// WorkerSeen is a worker as the active node last saw it.
type WorkerSeen struct {
	Name    string    `json:"name"`
	Pool    string    `json:"pool"`
	Version string    `json:"version"`
	TokenID int64     `json:"token_id"`
	SeenAt  time.Time `json:"seen_at"`
	Jobs    []int64   `json:"jobs"`
}
