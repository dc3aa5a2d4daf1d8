// Package mock has function-field mocks of the root package's service
// interfaces, for tests of the layers that use them (the HTTP handlers):
// a test sets the Fn fields its code calls and asserts on their
// arguments. A method whose Fn is not set panics, so a call the test did
// not expect is not silently answered.
package mock

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/atollhq/atoll"
)

var (
	_ atoll.CommandService  = (*CommandService)(nil)
	_ atoll.UnlockReporter  = (*UnlockReporter)(nil)
	_ atoll.LogStream       = (*LogStream)(nil)
	_ atoll.ApprovalPolicy  = (*ApprovalPolicy)(nil)
	_ atoll.WorkerService   = (*WorkerService)(nil)
	_ atoll.WorkerAdmin     = (*WorkerAdmin)(nil)
	_ atoll.DispatchService = (*DispatchService)(nil)
)

// CommandService is an atoll.CommandService.
type CommandService struct {
	ReceiveFn   func(ctx context.Context, ev *atoll.VCSEvent) (int64, error)
	ReceivingFn func() func()
	SubmitFn    func(ctx context.Context, s atoll.CommandSubmission) (atoll.Submitted, error)
	CheckFn     func(cmd atoll.Command) error
	CommentFn   func(ctx context.Context, c atoll.CommentSubmission) (atoll.Submitted, error)
}

func (s *CommandService) Receive(ctx context.Context, ev *atoll.VCSEvent) (int64, error) {
	return s.ReceiveFn(ctx, ev)
}

// Receiving calls ReceivingFn, if set; a webhook's bracket is no call a
// test needs to answer.
func (s *CommandService) Receiving() func() {
	if s.ReceivingFn == nil {
		return func() {}
	}
	return s.ReceivingFn()
}

func (s *CommandService) Submit(ctx context.Context, sub atoll.CommandSubmission) (atoll.Submitted, error) {
	return s.SubmitFn(ctx, sub)
}

func (s *CommandService) Check(cmd atoll.Command) error { return s.CheckFn(cmd) }

func (s *CommandService) Comment(ctx context.Context, c atoll.CommentSubmission) (atoll.Submitted, error) {
	return s.CommentFn(ctx, c)
}

// UnlockReporter is an atoll.UnlockReporter.
type UnlockReporter struct {
	ReportUnlockedFn func(ctx context.Context, locks []*atoll.Lock, user, via string) []string
}

func (r *UnlockReporter) ReportUnlocked(ctx context.Context, locks []*atoll.Lock, user, via string) []string {
	return r.ReportUnlockedFn(ctx, locks, user, via)
}

// LogStream is an atoll.LogStream.
type LogStream struct {
	SubscribeFn func(jobID int64) (<-chan atoll.LogLine, func())
}

func (l *LogStream) Subscribe(jobID int64) (<-chan atoll.LogLine, func()) {
	return l.SubscribeFn(jobID)
}

// ApprovalPolicy is an atoll.ApprovalPolicy.
type ApprovalPolicy struct {
	RequiresFn func(repo, project, dir string) bool
}

func (p *ApprovalPolicy) Requires(repo, project, dir string) bool {
	return p.RequiresFn(repo, project, dir)
}

// WorkerService is an atoll.WorkerService.
type WorkerService struct {
	ClaimFn      func(ctx context.Context, secret string, hello atoll.WorkerHello, wait time.Duration) (*atoll.WorkerAssignment, error)
	HeartbeatFn  func(ctx context.Context, jobID int64, jobToken string) (*atoll.WorkerLease, error)
	HoldsFn      func(ctx context.Context, jobID int64, jobToken string) error
	LogsFn       func(ctx context.Context, jobID int64, jobToken string, lines []atoll.WorkerLogLine) error
	ApplyingFn   func(ctx context.Context, jobID int64, jobToken string) error
	PlanFn       func(ctx context.Context, jobID int64, jobToken string) ([]byte, error)
	ResultFn     func(ctx context.Context, jobID int64, jobToken string, res atoll.WorkerResult) error
	UploadPackFn func(ctx context.Context, jobID int64, jobToken string, advertise bool, gitProtocol string, in io.Reader, out io.Writer) error
}

// Holds answers nil when HoldsFn is not set: a handler test that is not
// about it sees every token hold its job.
func (s *WorkerService) Holds(ctx context.Context, jobID int64, jobToken string) error {
	if s.HoldsFn == nil {
		return nil
	}
	return s.HoldsFn(ctx, jobID, jobToken)
}

func (s *WorkerService) Claim(ctx context.Context, secret string, hello atoll.WorkerHello, wait time.Duration) (*atoll.WorkerAssignment, error) {
	return s.ClaimFn(ctx, secret, hello, wait)
}

func (s *WorkerService) Heartbeat(ctx context.Context, jobID int64, jobToken string) (*atoll.WorkerLease, error) {
	return s.HeartbeatFn(ctx, jobID, jobToken)
}

func (s *WorkerService) Logs(ctx context.Context, jobID int64, jobToken string, lines []atoll.WorkerLogLine) error {
	return s.LogsFn(ctx, jobID, jobToken, lines)
}

func (s *WorkerService) Applying(ctx context.Context, jobID int64, jobToken string) error {
	return s.ApplyingFn(ctx, jobID, jobToken)
}

func (s *WorkerService) Plan(ctx context.Context, jobID int64, jobToken string) ([]byte, error) {
	return s.PlanFn(ctx, jobID, jobToken)
}

func (s *WorkerService) Result(ctx context.Context, jobID int64, jobToken string, res atoll.WorkerResult) error {
	return s.ResultFn(ctx, jobID, jobToken, res)
}

func (s *WorkerService) UploadPack(ctx context.Context, jobID int64, jobToken string, advertise bool, gitProtocol string, in io.Reader, out io.Writer) error {
	return s.UploadPackFn(ctx, jobID, jobToken, advertise, gitProtocol, in, out)
}

// WorkerAdmin is an atoll.WorkerAdmin.
type WorkerAdmin struct {
	CreateWorkerTokenFn func(ctx context.Context, name, pool, actor, source string) (*atoll.WorkerToken, string, error)
	RevokeWorkerTokenFn func(ctx context.Context, id int64, actor, source string) error
	WorkersFn           func(ctx context.Context) (*atoll.WorkerOverview, error)
}

func (a *WorkerAdmin) CreateWorkerToken(ctx context.Context, name, pool, actor, source string) (*atoll.WorkerToken, string, error) {
	return a.CreateWorkerTokenFn(ctx, name, pool, actor, source)
}

func (a *WorkerAdmin) RevokeWorkerToken(ctx context.Context, id int64, actor, source string) error {
	return a.RevokeWorkerTokenFn(ctx, id, actor, source)
}

func (a *WorkerAdmin) Workers(ctx context.Context) (*atoll.WorkerOverview, error) {
	return a.WorkersFn(ctx)
}

// DispatchService is an atoll.DispatchService.
type DispatchService struct {
	CreateWorkerTokenFn    func(ctx context.Context, name, pool string, hash []byte, actor, source string) (*atoll.WorkerToken, error)
	RevokeWorkerTokenFn    func(ctx context.Context, id int64, actor, source string) (*atoll.WorkerToken, error)
	WorkerTokensFn         func(ctx context.Context) ([]*atoll.WorkerToken, error)
	WorkerTokenByHashFn    func(ctx context.Context, hash []byte) (*atoll.WorkerToken, error)
	SeeWorkerFn            func(ctx context.Context, id int64, worker, version string) error
	QueueDispatchFn        func(ctx context.Context, d *atoll.Dispatch) (*atoll.Dispatch, error)
	DispatchFn             func(ctx context.Context, jobID int64) (*atoll.Dispatch, error)
	ClaimDispatchFn        func(ctx context.Context, pool string, tokenID int64, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error)
	RenewDispatchFn        func(ctx context.Context, jobID int64, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error)
	MarkDispatchApplyingFn func(ctx context.Context, jobID int64, jobTokenHash []byte) error
	FinishDispatchFn       func(ctx context.Context, jobID int64, jobTokenHash []byte, result json.RawMessage) error
	ExpireDispatchFn       func(ctx context.Context, jobID int64, requeue bool, claimHash []byte) (*atoll.Dispatch, error)
	EndDispatchFn          func(ctx context.Context, jobID int64, attempt int, requeue bool, claimHash []byte) (*atoll.Dispatch, error)
	PinDispatchFn          func(ctx context.Context, jobID int64, attempt int, claimHash []byte) (*atoll.Dispatch, error)
	CancelDispatchFn       func(ctx context.Context, jobID int64) error
	DispatchesFn           func(ctx context.Context, states ...string) ([]*atoll.Dispatch, error)
	AckDispatchLogsFn      func(ctx context.Context, jobID int64, jobTokenHash []byte, seq int64, lease time.Duration) error
	PruneDispatchResultsFn func(ctx context.Context) error
	ClaimPinnedDispatchFn  func(ctx context.Context, claimHash []byte, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error)
	PoolQueuesFn           func(ctx context.Context) ([]atoll.PoolQueue, error)
}

func (d *DispatchService) ClaimPinnedDispatch(ctx context.Context, claimHash []byte, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	return d.ClaimPinnedDispatchFn(ctx, claimHash, worker, jobTokenHash, lease)
}

func (d *DispatchService) AckDispatchLogs(ctx context.Context, jobID int64, jobTokenHash []byte, seq int64, lease time.Duration) error {
	return d.AckDispatchLogsFn(ctx, jobID, jobTokenHash, seq, lease)
}

func (d *DispatchService) PruneDispatchResults(ctx context.Context) error {
	return d.PruneDispatchResultsFn(ctx)
}

func (d *DispatchService) CreateWorkerToken(ctx context.Context, name, pool string, hash []byte, actor, source string) (*atoll.WorkerToken, error) {
	return d.CreateWorkerTokenFn(ctx, name, pool, hash, actor, source)
}

func (d *DispatchService) RevokeWorkerToken(ctx context.Context, id int64, actor, source string) (*atoll.WorkerToken, error) {
	return d.RevokeWorkerTokenFn(ctx, id, actor, source)
}

func (d *DispatchService) WorkerTokens(ctx context.Context) ([]*atoll.WorkerToken, error) {
	return d.WorkerTokensFn(ctx)
}

func (d *DispatchService) WorkerTokenByHash(ctx context.Context, hash []byte) (*atoll.WorkerToken, error) {
	return d.WorkerTokenByHashFn(ctx, hash)
}

func (d *DispatchService) SeeWorker(ctx context.Context, id int64, worker, version string) error {
	return d.SeeWorkerFn(ctx, id, worker, version)
}

func (d *DispatchService) QueueDispatch(ctx context.Context, disp *atoll.Dispatch) (*atoll.Dispatch, error) {
	return d.QueueDispatchFn(ctx, disp)
}

func (d *DispatchService) Dispatch(ctx context.Context, jobID int64) (*atoll.Dispatch, error) {
	return d.DispatchFn(ctx, jobID)
}

func (d *DispatchService) ClaimDispatch(ctx context.Context, pool string, tokenID int64, worker string, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	return d.ClaimDispatchFn(ctx, pool, tokenID, worker, jobTokenHash, lease)
}

func (d *DispatchService) RenewDispatch(ctx context.Context, jobID int64, jobTokenHash []byte, lease time.Duration) (*atoll.Dispatch, error) {
	return d.RenewDispatchFn(ctx, jobID, jobTokenHash, lease)
}

func (d *DispatchService) MarkDispatchApplying(ctx context.Context, jobID int64, jobTokenHash []byte) error {
	return d.MarkDispatchApplyingFn(ctx, jobID, jobTokenHash)
}

func (d *DispatchService) FinishDispatch(ctx context.Context, jobID int64, jobTokenHash []byte, result json.RawMessage) error {
	return d.FinishDispatchFn(ctx, jobID, jobTokenHash, result)
}

func (d *DispatchService) ExpireDispatch(ctx context.Context, jobID int64, requeue bool, claimHash []byte) (*atoll.Dispatch, error) {
	return d.ExpireDispatchFn(ctx, jobID, requeue, claimHash)
}

func (d *DispatchService) EndDispatch(ctx context.Context, jobID int64, attempt int, requeue bool, claimHash []byte) (*atoll.Dispatch, error) {
	return d.EndDispatchFn(ctx, jobID, attempt, requeue, claimHash)
}

func (d *DispatchService) PinDispatch(ctx context.Context, jobID int64, attempt int, claimHash []byte) (*atoll.Dispatch, error) {
	return d.PinDispatchFn(ctx, jobID, attempt, claimHash)
}

func (d *DispatchService) CancelDispatch(ctx context.Context, jobID int64) error {
	return d.CancelDispatchFn(ctx, jobID)
}

func (d *DispatchService) Dispatches(ctx context.Context, states ...string) ([]*atoll.Dispatch, error) {
	return d.DispatchesFn(ctx, states...)
}

func (d *DispatchService) PoolQueues(ctx context.Context) ([]atoll.PoolQueue, error) {
	return d.PoolQueuesFn(ctx)
}

// Drifter is an atoll.Drifter.
type Drifter struct {
	CheckDriftFn   func(ctx context.Context, c atoll.DriftCheck) (*atoll.Request, error)
	DriftOutcomeFn func(ctx context.Context, id int64) (*atoll.DriftOutcome, error)
}

func (d *Drifter) CheckDrift(ctx context.Context, c atoll.DriftCheck) (*atoll.Request, error) {
	return d.CheckDriftFn(ctx, c)
}

func (d *Drifter) DriftOutcome(ctx context.Context, id int64) (*atoll.DriftOutcome, error) {
	return d.DriftOutcomeFn(ctx, id)
}
