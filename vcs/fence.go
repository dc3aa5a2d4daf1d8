package vcs

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/atollhq/atoll"
)

// Fenced wraps a provider so that none of its writes (comments posted,
// edited or hidden, commit statuses and check runs, reactions, merges,
// dismissed approvals) leaves this node once its lease deadline has passed.
// The deadline is checked immediately before each write is sent, and the
// write's context ends at the deadline. Reads pass through: a node past its
// deadline may still look, it may not say anything.
//
// Every provider of a node of a pair is wrapped, so that the runner, the
// web handlers and anything added later reach the host through this one
// place. Optional interfaces (Replier, Reactor, ...) are implemented here
// whatever the wrapped provider implements: ask for them with As, never
// with a type assertion.
type Fenced struct {
	p      Provider
	fence  *atoll.Fence
	logger *slog.Logger
	once   sync.Once
}

// Fence wraps p; a nil fence returns p itself (a single node).
func Fence(p Provider, fence *atoll.Fence, logger *slog.Logger) Provider {
	if fence == nil || p == nil {
		return p
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Fenced{p: p, fence: fence, logger: logger}
}

// Unwrap is the wrapped provider.
func (f *Fenced) Unwrap() Provider { return f.p }

// As returns p as the optional interface T (Replier, Reactor, TeamLister,
// HostCredentials, ApprovalDismisser) when the provider underneath
// implements it. A wrapper such as Fenced implements every optional
// interface itself, so a type assertion on it would always succeed; As
// asks the provider it wraps, and returns the wrapper, so that the call
// still goes through it.
func As[T any](p Provider) (T, bool) {
	var zero T
	if w, ok := p.(interface{ Unwrap() Provider }); ok {
		if _, ok := As[T](w.Unwrap()); !ok {
			return zero, false
		}
	}
	t, ok := any(p).(T)
	return t, ok
}

// write runs send unless the deadline has passed; send gets a context that
// ends at the deadline.
func (f *Fenced) write(ctx context.Context, op string, repo atoll.Repo, number int, send func(context.Context) error) error {
	ctx, cancel, err := f.fence.Context(ctx, op)
	if err != nil {
		// Logged once: after the deadline every write is refused, and the
		// callers log their own failures.
		f.once.Do(func() {
			f.logger.Error("fenced: VCS writes refused from now on", "vcs", f.p.Kind(), "op", op, "repo", repo.FullName(), "pull", number, "err", err)
		})
		return err
	}
	defer cancel()
	return send(ctx)
}

// Recognizer, and the reads of Provider: passed through.

func (f *Fenced) Kind() string                     { return f.p.Kind() }
func (f *Fenced) Recognizes(h http.Header) bool    { return f.p.Recognizes(h) }
func (f *Fenced) WebhookHint() string              { return f.p.WebhookHint() }
func (f *Fenced) PullRefs(number int) []string     { return f.p.PullRefs(number) }
func (f *Fenced) CheckWebhook(h http.Header) error { return f.p.CheckWebhook(h) }
func (f *Fenced) ParseWebhook(r *http.Request, body []byte) (*Event, error) {
	return f.p.ParseWebhook(r, body)
}
func (f *Fenced) GetPull(ctx context.Context, repo atoll.Repo, number int) (*PullDetails, error) {
	return f.p.GetPull(ctx, repo, number)
}
func (f *Fenced) ChangedFiles(ctx context.Context, repo atoll.Repo, number int) ([]string, error) {
	return f.p.ChangedFiles(ctx, repo, number)
}
func (f *Fenced) CloneURL(ctx context.Context, repo atoll.Repo) (string, error) {
	return f.p.CloneURL(ctx, repo)
}
func (f *Fenced) GitCredentials(ctx context.Context, repo atoll.Repo) (GitCredential, error) {
	return f.p.GitCredentials(ctx, repo)
}

// The writes of Provider.

func (f *Fenced) CreateComment(ctx context.Context, repo atoll.Repo, number int, body string) (string, error) {
	var id string
	err := f.write(ctx, "create comment", repo, number, func(ctx context.Context) (err error) {
		id, err = f.p.CreateComment(ctx, repo, number, body)
		return err
	})
	return id, err
}

func (f *Fenced) UpdateComment(ctx context.Context, repo atoll.Repo, number int, id, body string) error {
	return f.write(ctx, "update comment", repo, number, func(ctx context.Context) error {
		return f.p.UpdateComment(ctx, repo, number, id, body)
	})
}

func (f *Fenced) HideComments(ctx context.Context, repo atoll.Repo, number int, command string, keep ...string) error {
	return f.write(ctx, "hide comments", repo, number, func(ctx context.Context) error {
		return f.p.HideComments(ctx, repo, number, command, keep...)
	})
}

func (f *Fenced) SetStatus(ctx context.Context, repo atoll.Repo, sha string, st Status) error {
	return f.write(ctx, "set status "+st.Context, repo, st.Pull, func(ctx context.Context) error {
		return f.p.SetStatus(ctx, repo, sha, st)
	})
}

func (f *Fenced) Merge(ctx context.Context, repo atoll.Repo, number int, opts MergeOptions) error {
	return f.write(ctx, "merge", repo, number, func(ctx context.Context) error {
		return f.p.Merge(ctx, repo, number, opts)
	})
}

// The optional interfaces. As says whether the wrapped provider has them;
// a caller that asserted instead gets an ENOTIMPLEMENTED error.

func (f *Fenced) notImplemented(iface string) error {
	return fmt.Errorf("%s provider: %w", f.p.Kind(), &atoll.Error{Code: atoll.ENOTIMPLEMENTED, Message: "The VCS host does not support " + iface + "."})
}

func (f *Fenced) ReplyComment(ctx context.Context, repo atoll.Repo, number int, replyTo, body string) (string, error) {
	r, ok := f.p.(Replier)
	if !ok {
		return "", f.notImplemented("threaded replies")
	}
	var id string
	err := f.write(ctx, "reply comment", repo, number, func(ctx context.Context) (err error) {
		id, err = r.ReplyComment(ctx, repo, number, replyTo, body)
		return err
	})
	return id, err
}

func (f *Fenced) React(ctx context.Context, repo atoll.Repo, number int, commentID, reaction string) error {
	r, ok := f.p.(Reactor)
	if !ok {
		return f.notImplemented("reactions")
	}
	return f.write(ctx, "react", repo, number, func(ctx context.Context) error {
		return r.React(ctx, repo, number, commentID, reaction)
	})
}

func (f *Fenced) DismissApprovals(ctx context.Context, repo atoll.Repo, number int) (int, error) {
	d, ok := f.p.(ApprovalDismisser)
	if !ok {
		return 0, f.notImplemented("dismissing approvals")
	}
	var n int
	err := f.write(ctx, "dismiss approvals", repo, number, func(ctx context.Context) (err error) {
		n, err = d.DismissApprovals(ctx, repo, number)
		return err
	})
	return n, err
}

func (f *Fenced) UserTeams(ctx context.Context, repo atoll.Repo, login string) ([]string, error) {
	l, ok := f.p.(TeamLister)
	if !ok {
		return nil, f.notImplemented("teams")
	}
	return l.UserTeams(ctx, repo, login)
}

// CloneAuthorization is the wrapped host's: a read (git fetches with it),
// never fenced.
func (f *Fenced) CloneAuthorization(ctx context.Context, repo atoll.Repo) (string, string, error) {
	ca, ok := f.p.(CloneAuthorizer)
	if !ok {
		return "", "", f.notImplemented("clone authorization")
	}
	return ca.CloneAuthorization(ctx, repo)
}

// MaxCommentChars is the wrapped host's comment limit: a read, never
// fenced. Callers reach it through As, which asks the wrapped host first.
func (f *Fenced) MaxCommentChars() int {
	if l, ok := f.p.(CommentLimiter); ok {
		return l.MaxCommentChars()
	}
	return 0
}

func (f *Fenced) HostGitCredentials(ctx context.Context) (GitCredential, error) {
	h, ok := f.p.(HostCredentials)
	if !ok {
		return GitCredential{}, f.notImplemented("host credentials")
	}
	return h.HostGitCredentials(ctx)
}

var (
	_ Provider          = (*Fenced)(nil)
	_ Replier           = (*Fenced)(nil)
	_ Reactor           = (*Fenced)(nil)
	_ TeamLister        = (*Fenced)(nil)
	_ CommentLimiter    = (*Fenced)(nil)
	_ CloneAuthorizer   = (*Fenced)(nil)
	_ HostCredentials   = (*Fenced)(nil)
	_ ApprovalDismisser = (*Fenced)(nil)
)
