package vcs_test

import (
	"bytes"
	"context"
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/vcs"
)

// recorder is a provider with every optional interface that records which
// method was called and the deadline of the context it got.
type recorder struct {
	mu        sync.Mutex
	calls     []string
	deadlines map[string]time.Time
}

func (r *recorder) call(ctx context.Context, name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, name)
	if ctx != nil {
		if d, ok := ctx.Deadline(); ok {
			if r.deadlines == nil {
				r.deadlines = map[string]time.Time{}
			}
			r.deadlines[name] = d
		}
	}
}

func (r *recorder) called(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.calls {
		if c == name {
			return true
		}
	}
	return false
}

func (r *recorder) Kind() string { r.call(context.Background(), "Kind"); return "fake" }
func (r *recorder) Recognizes(http.Header) bool {
	r.call(context.Background(), "Recognizes")
	return true
}
func (r *recorder) WebhookHint() string   { r.call(context.Background(), "WebhookHint"); return "" }
func (r *recorder) PullRefs(int) []string { r.call(context.Background(), "PullRefs"); return nil }
func (r *recorder) CloneAuthorization(ctx context.Context, _ atoll.Repo) (string, string, error) {
	r.call(ctx, "CloneAuthorization")
	return "https://host/repo", "Bearer x", nil
}
func (r *recorder) MaxCommentChars() int {
	r.call(context.Background(), "MaxCommentChars")
	return 65536
}
func (r *recorder) CheckWebhook(http.Header) error {
	r.call(context.Background(), "CheckWebhook")
	return nil
}
func (r *recorder) ParseWebhook(*http.Request, []byte) (*vcs.Event, error) {
	r.call(context.Background(), "ParseWebhook")
	return nil, nil
}
func (r *recorder) GetPull(ctx context.Context, _ atoll.Repo, _ int) (*vcs.PullDetails, error) {
	r.call(ctx, "GetPull")
	return &vcs.PullDetails{}, nil
}
func (r *recorder) ChangedFiles(ctx context.Context, _ atoll.Repo, _ int) ([]string, error) {
	r.call(ctx, "ChangedFiles")
	return nil, nil
}
func (r *recorder) CreateComment(ctx context.Context, _ atoll.Repo, _ int, _ string) (string, error) {
	r.call(ctx, "CreateComment")
	return "1", nil
}
func (r *recorder) UpdateComment(ctx context.Context, _ atoll.Repo, _ int, _, _ string) error {
	r.call(ctx, "UpdateComment")
	return nil
}
func (r *recorder) HideComments(ctx context.Context, _ atoll.Repo, _ int, _ string, _ ...string) error {
	r.call(ctx, "HideComments")
	return nil
}
func (r *recorder) SetStatus(ctx context.Context, _ atoll.Repo, _ string, _ vcs.Status) error {
	r.call(ctx, "SetStatus")
	return nil
}
func (r *recorder) CloneURL(ctx context.Context, _ atoll.Repo) (string, error) {
	r.call(ctx, "CloneURL")
	return "", nil
}
func (r *recorder) Merge(ctx context.Context, _ atoll.Repo, _ int, _ vcs.MergeOptions) error {
	r.call(ctx, "Merge")
	return nil
}
func (r *recorder) GitCredentials(ctx context.Context, _ atoll.Repo) (vcs.GitCredential, error) {
	r.call(ctx, "GitCredentials")
	return vcs.GitCredential{}, nil
}
func (r *recorder) ReplyComment(ctx context.Context, _ atoll.Repo, _ int, _, _ string) (string, error) {
	r.call(ctx, "ReplyComment")
	return "2", nil
}
func (r *recorder) React(ctx context.Context, _ atoll.Repo, _ int, _, _ string) error {
	r.call(ctx, "React")
	return nil
}
func (r *recorder) UserTeams(ctx context.Context, _ atoll.Repo, _ string) ([]string, error) {
	r.call(ctx, "UserTeams")
	return nil, nil
}
func (r *recorder) HostGitCredentials(ctx context.Context) (vcs.GitCredential, error) {
	r.call(ctx, "HostGitCredentials")
	return vcs.GitCredential{}, nil
}
func (r *recorder) DismissApprovals(ctx context.Context, _ atoll.Repo, _ int) (int, error) {
	r.call(ctx, "DismissApprovals")
	return 1, nil
}

// The interfaces a provider may have. A new optional interface goes here,
// and in Fenced.
var providerInterfaces = []reflect.Type{
	reflect.TypeFor[vcs.Provider](),
	reflect.TypeFor[vcs.Replier](),
	reflect.TypeFor[vcs.Reactor](),
	reflect.TypeFor[vcs.TeamLister](),
	reflect.TypeFor[vcs.HostCredentials](),
	reflect.TypeFor[vcs.ApprovalDismisser](),
	reflect.TypeFor[vcs.CommentLimiter](),
	reflect.TypeFor[vcs.CloneAuthorizer](),
}

// readMethods change nothing on the host: they pass through a fenced
// provider. Every other method is a write and must be refused past the
// deadline; a new method is a write until it is listed here.
var readMethods = map[string]bool{
	"Kind": true, "Recognizes": true, "WebhookHint": true, "PullRefs": true, "CheckWebhook": true, "ParseWebhook": true,
	"GetPull": true, "ChangedFiles": true, "CloneURL": true, "GitCredentials": true, "UserTeams": true, "HostGitCredentials": true,
	"MaxCommentChars": true, "CloneAuthorization": true,
}

// callMethod calls method name of p with zero arguments (a live context, a
// request) and returns its results.
func callMethod(t *testing.T, p any, name string) []reflect.Value {
	t.Helper()
	m := reflect.ValueOf(p).MethodByName(name)
	if !m.IsValid() {
		t.Fatalf("%T has no method %s", p, name)
	}
	mt := m.Type()
	args := make([]reflect.Value, mt.NumIn())
	for i := range args {
		switch in := mt.In(i); {
		case in == reflect.TypeFor[context.Context]():
			args[i] = reflect.ValueOf(context.Background())
		case in == reflect.TypeFor[*http.Request]():
			args[i] = reflect.ValueOf(httptest.NewRequest("POST", "/events", nil))
		case in == reflect.TypeFor[http.Header]():
			args[i] = reflect.ValueOf(http.Header{})
		default:
			args[i] = reflect.Zero(in)
		}
	}
	if mt.IsVariadic() {
		return m.CallSlice(args)
	}
	return m.Call(args)
}

// lastError is the error a method returned last, if it returns one.
func lastError(out []reflect.Value) (error, bool) {
	if len(out) == 0 || out[len(out)-1].Type() != reflect.TypeFor[error]() {
		return nil, false
	}
	err, _ := out[len(out)-1].Interface().(error)
	return err, true
}

// Every write method of every provider interface is refused once the
// deadline has passed, without reaching the host, with a coded error
// wrapping atoll.ErrFenced, logged once; every read still reaches it.
func TestFencedRefusesEveryWritePastTheDeadline(t *testing.T) {
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	rec := &recorder{}
	passed := time.Now().Add(-time.Millisecond)
	p := vcs.Fence(rec, &atoll.Fence{Deadline: func() time.Time { return passed }}, logger)
	writes := 0
	for _, iface := range providerInterfaces {
		for i := range iface.NumMethod() {
			name := iface.Method(i).Name
			out := callMethod(t, p, name)
			err, returnsErr := lastError(out)
			if readMethods[name] {
				if !rec.called(name) {
					t.Errorf("%s.%s is a read: it must reach the host past the deadline", iface.Name(), name)
				}
				continue
			}
			writes++
			if rec.called(name) {
				t.Errorf("%s.%s reached the host past the lease deadline: a write method without the fence (or a read missing from readMethods)", iface.Name(), name)
			}
			if !returnsErr {
				t.Errorf("%s.%s returns no error: a refused write cannot say so", iface.Name(), name)
				continue
			}
			if !errors.Is(err, atoll.ErrFenced) || atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
				t.Errorf("%s.%s past the deadline: err %v, want one wrapping atoll.ErrFenced (EUNAVAILABLE)", iface.Name(), name, err)
			}
		}
	}
	if writes < 8 {
		t.Fatalf("only %d write methods checked", writes)
	}
	if n := strings.Count(logs.String(), "fenced: VCS writes refused"); n != 1 {
		t.Errorf("the refusal was logged %d times, want once:\n%s", n, logs.String())
	}
}

// Before the deadline every method reaches the host, and a write's
// context ends no later than the deadline: a request still in flight when
// it passes is abandoned.
func TestFencedPassesWritesBeforeTheDeadline(t *testing.T) {
	rec := &recorder{}
	deadline := time.Now().Add(time.Minute)
	p := vcs.Fence(rec, &atoll.Fence{Deadline: func() time.Time { return deadline }}, nil)
	for _, iface := range providerInterfaces {
		for i := range iface.NumMethod() {
			name := iface.Method(i).Name
			out := callMethod(t, p, name)
			if err, ok := lastError(out); ok && err != nil {
				t.Errorf("%s.%s before the deadline: %v", iface.Name(), name, err)
			}
			if !rec.called(name) {
				t.Errorf("%s.%s did not reach the host before the deadline", iface.Name(), name)
			}
			if readMethods[name] {
				continue
			}
			if d, ok := rec.deadlines[name]; !ok || d.After(deadline) {
				t.Errorf("%s.%s: context deadline %v (set %v), want at most the lease deadline %v", iface.Name(), name, d, ok, deadline)
			}
		}
	}
}

// The deadline is read at each write: a node that was fine a moment ago
// and whose deadline passed since (a frozen process resumed) sends nothing,
// and the zero deadline (a standby, a fenced node) refuses everything.
func TestFencedReadsTheDeadlineAtEachWrite(t *testing.T) {
	rec := &recorder{}
	var mu sync.Mutex
	deadline := time.Now().Add(time.Hour)
	p := vcs.Fence(rec, &atoll.Fence{Deadline: func() time.Time { mu.Lock(); defer mu.Unlock(); return deadline }}, nil)
	repo := atoll.Repo{Owner: "acme", Name: "infra"}
	if _, err := p.CreateComment(context.Background(), repo, 1, "first"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	deadline = time.Time{}
	mu.Unlock()
	err := p.SetStatus(context.Background(), repo, "abc", vcs.Status{State: vcs.StatusFailure, Context: "atlantis/plan"})
	if !errors.Is(err, atoll.ErrFenced) || !strings.Contains(err.Error(), "set status atlantis/plan") {
		t.Fatalf("SetStatus with a zero deadline: %v, want a fenced error naming the write", err)
	}
	if rec.called("SetStatus") {
		t.Fatal("SetStatus reached the host with a zero deadline")
	}
	// vcs.Comment, the way the runner posts results, goes through it too.
	if _, err := vcs.Comment(context.Background(), p, repo, 1, "", "late"); !errors.Is(err, atoll.ErrFenced) {
		t.Fatalf("vcs.Comment past the deadline: %v", err)
	}
}

// A nil fence (a single node) returns the provider itself.
func TestFenceNilIsTheProvider(t *testing.T) {
	rec := &recorder{}
	if p := vcs.Fence(rec, nil, nil); p != vcs.Provider(rec) {
		t.Fatalf("Fence(p, nil) = %T, want p itself", p)
	}
}

// plain has no optional interface: only Provider's methods are promoted.
type plain struct{ vcs.Provider }

// As finds an optional interface only when the wrapped provider has it,
// and returns the wrapper, so that the call is still fenced.
func TestAsLooksThroughTheWrapper(t *testing.T) {
	fence := &atoll.Fence{Deadline: func() time.Time { return time.Now().Add(time.Minute) }}
	full := vcs.Fence(&recorder{}, fence, nil)
	bare := vcs.Fence(plain{&recorder{}}, fence, nil)
	if _, ok := any(bare).(vcs.Reactor); !ok {
		t.Fatal("the wrapper should implement Reactor whatever it wraps (As is what tells)")
	}
	if r, ok := vcs.As[vcs.Reactor](full); !ok || r != full.(vcs.Reactor) {
		t.Fatalf("As[Reactor] of a wrapped reactor = %v %v, want the wrapper", r, ok)
	}
	if _, ok := vcs.As[vcs.Reactor](bare); ok {
		t.Fatal("As[Reactor] of a wrapped provider without reactions = true")
	}
	if _, ok := vcs.As[vcs.Replier](bare); ok {
		t.Fatal("As[Replier] of a wrapped provider without threads = true")
	}
	// vcs.Comment on a host without threads posts a new comment.
	rec := &recorder{}
	if _, err := vcs.Comment(context.Background(), vcs.Fence(plain{rec}, fence, nil), atoll.Repo{}, 1, "reply-to", "body"); err != nil || !rec.called("CreateComment") || rec.called("ReplyComment") {
		t.Fatalf("vcs.Comment through the wrapper of a host without threads: err %v, calls %v", err, rec.calls)
	}
	// Unwrapped providers work as before.
	if _, ok := vcs.As[vcs.Reactor](&recorder{}); !ok {
		t.Fatal("As[Reactor] of a reactor = false")
	}
	if _, ok := vcs.As[vcs.Reactor](plain{&recorder{}}); ok {
		t.Fatal("As[Reactor] of a plain provider = true")
	}
}

// Every interface the vcs package declares is one a provider may have, so
// Fenced must implement it (else As finds nothing behind the wrapper, and
// the feature is silently off on a node of a pair) and fence its writes
// (the tests above, through providerInterfaces).
func TestFencedCoversEveryProviderInterface(t *testing.T) {
	known := map[string]bool{"Recognizer": true} // embedded in Provider
	for _, iface := range providerInterfaces {
		known[iface.Name()] = true
		if !reflect.TypeFor[*vcs.Fenced]().Implements(iface) {
			t.Errorf("*vcs.Fenced does not implement vcs.%s", iface.Name())
		}
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				ts := spec.(*ast.TypeSpec)
				if _, ok := ts.Type.(*ast.InterfaceType); ok && !known[ts.Name.Name] {
					t.Errorf("%s declares interface %s: add it to providerInterfaces and implement it in Fenced (fencing its writes)", name, ts.Name.Name)
				}
			}
		}
	}
}
