// Package mock has function-field mocks of the root package's service
// interfaces, for tests of the layers that use them (the HTTP handlers):
// a test sets the Fn fields its code calls and asserts on their
// arguments. A method whose Fn is not set panics, so a call the test did
// not expect is not silently answered.
package mock

import (
	"context"

	"github.com/atollhq/atoll"
)

var (
	_ atoll.CommandService = (*CommandService)(nil)
	_ atoll.UnlockReporter = (*UnlockReporter)(nil)
	_ atoll.LogStream      = (*LogStream)(nil)
	_ atoll.ApprovalPolicy = (*ApprovalPolicy)(nil)
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
