package runner_test

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
	"github.com/atollhq/atoll/vcs"
)

// claimNotReplicated is the store as a node of a pair sees it when the
// replication barrier of its first claim fails: the claim is committed on
// its disk (and a later sync uploads it), the caller is told EUNAVAILABLE.
type claimNotReplicated struct {
	atoll.RunnerStore
	failed atomic.Bool
}

func (s *claimNotReplicated) ClaimRequest(ctx context.Context, node string) (*atoll.Request, error) {
	req, err := s.RunnerStore.ClaimRequest(ctx, node)
	if err == nil && req != nil && s.failed.CompareAndSwap(false, true) {
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "The write was not replicated.")
	}
	return req, err
}

// comments records the comments posted; nothing else of the host is used.
type comments struct {
	vcs.Provider
	mu     sync.Mutex
	bodies []string
}

func (c *comments) Kind() string { return atoll.VCSGitHub }

func (c *comments) CreateComment(_ context.Context, _ atoll.Repo, _ int, body string) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bodies = append(c.bodies, body)
	return "1", nil
}

func (c *comments) posted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.bodies...)
}

// An acknowledged request whose claim was told "not replicated" although
// committed is still worked on, and so is the request queued behind it on
// the same pull request (issue 21): before the orphan sweep, both waited
// for ever (until the next start of a node).
func TestClaimNotReplicatedIsStillWorkedOn(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	host := &comments{}
	r := &runner.Runner{
		DB:        &claimNotReplicated{RunnerStore: db},
		Providers: map[string]vcs.Provider{atoll.VCSGitHub: host},
		Parser:    command.Parser{ExecutableName: "atlantis"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config:    runner.Config{Node: "a", Allowlist: runner.ParseAllowlist("github.com/acme/*")},
	}
	var ids []int64
	for _, tag := range []string{"first", "second"} {
		id, err := r.Enqueue(ctx, event(vcs.EventComment, 1, "atlantis help "+tag))
		if err != nil || id == 0 {
			t.Fatalf("Enqueue: %d %v", id, err)
		}
		ids = append(ids, id)
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	waitRequestsDone(t, db, ids)
	got := strings.Join(host.posted(), "\n")
	for _, tag := range []string{`"first"`, `"second"`} {
		if !strings.Contains(got, tag) {
			t.Errorf("no reply quoting %s on the pull request:\n%s", tag, got)
		}
	}
}

// everyThird tells every third claim "not replicated" (committed all the
// same).
type everyThird struct {
	atoll.RunnerStore
	n atomic.Int32
}

func (s *everyThird) ClaimRequest(ctx context.Context, node string) (*atoll.Request, error) {
	req, err := s.RunnerStore.ClaimRequest(ctx, node)
	if err == nil && req != nil && s.n.Add(1)%3 == 0 {
		return nil, atoll.Errorf(atoll.EUNAVAILABLE, "The write was not replicated.")
	}
	return req, err
}

// With workers claiming in parallel and claims failing often, every request
// is worked on exactly once: the sweep requeues the orphans and never a
// request a worker holds (which would answer twice).
func TestSweepNeverRequeuesAHeldRequest(t *testing.T) {
	ctx := context.Background()
	db := storetest.Open(t)
	host := &comments{}
	r := &runner.Runner{
		DB:        &everyThird{RunnerStore: db},
		Providers: map[string]vcs.Provider{atoll.VCSGitHub: host},
		Parser:    command.Parser{ExecutableName: "atlantis"},
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Config:    runner.Config{Node: "a", Parallelism: 4, Allowlist: runner.ParseAllowlist("github.com/acme/*")},
	}
	if err := r.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Stop)
	const n = 30
	var ids []int64
	for i := range n {
		id, err := r.Enqueue(ctx, event(vcs.EventComment, 1+i%5, "atlantis help t"+strconv.Itoa(i)))
		if err != nil || id == 0 {
			t.Fatalf("Enqueue: %d %v", id, err)
		}
		ids = append(ids, id)
	}
	waitRequestsDone(t, db, ids)
	got := strings.Join(host.posted(), "\n")
	for i := range n {
		if c := strings.Count(got, strconv.Quote("t"+strconv.Itoa(i))); c != 1 {
			t.Errorf("help t%d answered %d times, want once", i, c)
		}
	}
}

// waitRequestsDone waits for each request to end (waitRequest) and
// requires it done: a request left running with no worker never ends.
func waitRequestsDone(t *testing.T, db *store.DB, ids []int64) {
	t.Helper()
	for _, id := range ids {
		waitRequest(t, db, id)
		if q, err := db.Request(context.Background(), id); err != nil || q.State != atoll.RequestDone {
			t.Fatalf("request %d ended %+v, %v; want done", id, q, err)
		}
	}
}
