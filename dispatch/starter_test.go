package dispatch_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/runner/executor"
)

// A Starter's pool (Kubernetes Jobs) through the dispatcher: every
// attempt is pinned to the secret its claimant is started with. The
// starter is recorded here; package kube's tests and the end-to-end tests
// run the real one against the fake API server.

type startCall struct {
	c      dispatch.Claimant
	secret string
}

type starter struct {
	mu      sync.Mutex
	starts  []startCall
	stops   []int // attempts
	started map[int]bool
	follows map[int]chan dispatch.ClaimantEvent
}

func newStarter() *starter {
	return &starter{started: map[int]bool{}, follows: map[int]chan dispatch.ClaimantEvent{}}
}

func (s *starter) Start(_ context.Context, c dispatch.Claimant, secret string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.starts = append(s.starts, startCall{c, secret})
	s.started[c.Attempt] = true
	return nil
}

func (s *starter) Started(_ context.Context, _ int64, attempt int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started[attempt], nil
}

func (s *starter) Follow(ctx context.Context, _ int64, attempt int) (<-chan dispatch.ClaimantEvent, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan dispatch.ClaimantEvent, 4)
	s.follows[attempt] = ch
	return ch, nil
}

func (s *starter) Stop(_ context.Context, _ int64, attempt int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stops = append(s.stops, attempt)
	s.started[attempt] = false
	return nil
}

func (s *starter) Describe(jobID int64, attempt int) string {
	return fmt.Sprintf("Job %d-%d", jobID, attempt)
}

func (s *starter) Sweep(context.Context, func(int64, int) bool) error { return nil }

func (s *starter) Where() string { return "namespace test" }

// send sends ev to attempt's follower once it follows.
func (s *starter) send(t *testing.T, attempt int, ev dispatch.ClaimantEvent) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		ch := s.follows[attempt]
		s.mu.Unlock()
		if ch != nil {
			ch <- ev
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("attempt %d is not followed", attempt)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startOf waits for attempt's Start.
func (s *starter) startOf(t *testing.T, attempt int) startCall {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.mu.Lock()
		for _, c := range s.starts {
			if c.c.Attempt == attempt {
				s.mu.Unlock()
				return c
			}
		}
		s.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatalf("attempt %d was not started", attempt)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *starter) snapshot() (starts []startCall, stops []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]startCall(nil), s.starts...), append([]int(nil), s.stops...)
}

func hello(name string) atoll.WorkerHello {
	return atoll.WorkerHello{Worker: name, Pool: "gpu", Version: "test", Protocol: atoll.WorkerProtocol}
}

// A plan whose pod dies mid-run (OOM) is started again as attempt 2 with
// a new secret; the first secret is spent and the pool's own workers
// never get the job.
func TestStarterPlanAgainAfterPodDied(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	st := newStarter()
	f.d.Starters = map[string]dispatch.Starter{"gpu": st}
	spec := f.job(atoll.JobPlan)
	ev := &events{}
	done := f.start(t.Context(), spec, ev)
	first := st.startOf(t, 1)
	if first.c.JobID != spec.Job.ID || first.c.Repo != "acme/infra" || first.c.Pull != 7 || first.c.Project != "." || !strings.HasPrefix(first.secret, "atp_") {
		t.Fatalf("start %+v", first)
	}
	// The pool's worker token does not claim a pinned job.
	if a, err := f.d.Claim(context.Background(), f.secret, hello("pool-worker"), 50*time.Millisecond); err != nil || a != nil {
		t.Fatalf("a pool worker claimed %+v, %v", a, err)
	}
	a, err := f.d.Claim(context.Background(), first.secret, hello("pod-1"), time.Second)
	if err != nil || a.JobID != spec.Job.ID || a.Attempt != 1 {
		t.Fatalf("pinned claim %+v, %v", a, err)
	}
	if _, err := f.d.Claim(context.Background(), first.secret, hello("pod-1b"), time.Second); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("a spent secret: %v", err)
	}
	st.send(t, 1, dispatch.ClaimantEvent{Note: "Kubernetes: pod p1 is running."})
	st.send(t, 1, dispatch.ClaimantEvent{Ended: true, Failure: "killed: out of memory, limit 1Gi"})

	second := st.startOf(t, 2)
	if second.secret == first.secret || !strings.HasPrefix(second.secret, "atp_") {
		t.Fatalf("attempt 2's secret %q (first %q)", second.secret, first.secret)
	}
	if _, err := f.d.Heartbeat(context.Background(), a.JobID, a.JobToken); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("the dead attempt's token still holds: %v", err)
	}
	b, err := f.d.Claim(context.Background(), second.secret, hello("pod-2"), time.Second)
	if err != nil || b.Attempt != 2 {
		t.Fatalf("attempt 2's claim %+v, %v", b, err)
	}
	if err := f.d.Result(context.Background(), b.JobID, b.JobToken, result(t, executor.Result{Output: "planned"}, nil)); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, done); r.err != nil || r.res.Output != "planned" {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
	lines := ev.snapshot()
	for _, want := range []string{
		fmt.Sprintf("atoll: Started Job %d-1.", spec.Job.ID),
		"atoll: Kubernetes: pod p1 is running.",
		fmt.Sprintf("atoll: Job %d-1 ended before its worker reported: killed: out of memory, limit 1Gi: planning again.", spec.Job.ID),
		fmt.Sprintf("atoll: Started Job %d-2.", spec.Job.ID),
		"atoll: Running on worker pod-2 (pool gpu, attempt 2).",
	} {
		if !contains(lines, want) {
			t.Errorf("log %q lacks %q", lines, want)
		}
	}
	// The dead pod's Job is kept for its log (until its TTL).
	if starts, stops := st.snapshot(); len(starts) != 2 || len(stops) != 0 {
		t.Fatalf("starts %d, stops %v", len(starts), stops)
	}
}

// An apply whose pod dies after it started is interrupted, never started
// again; a pod that ends without ever claiming its job (its image cannot
// be pulled, no node runs it) fails the job in Kubernetes' words and is
// removed.
func TestStarterApplyInterruptedAndNeverClaimed(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	st := newStarter()
	f.d.Starters = map[string]dispatch.Starter{"gpu": st}
	spec := f.job(atoll.JobApply)
	spec.Plan = []byte("plan")
	done := f.start(t.Context(), spec, &events{})
	a, err := f.d.Claim(context.Background(), st.startOf(t, 1).secret, hello("pod-1"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.d.Applying(context.Background(), a.JobID, a.JobToken); err != nil {
		t.Fatal(err)
	}
	st.send(t, 1, dispatch.ClaimantEvent{Ended: true, Failure: "evicted: The node was low on resource: memory."})
	r := wait(t, done)
	var lost *executor.Interrupted
	if !errors.As(r.err, &lost) || !strings.Contains(lost.Message, "evicted: The node was low on resource: memory.") || !strings.Contains(lost.Message, "may have been partly done and is not retried") {
		t.Fatalf("Run = %v", r.err)
	}
	if starts, _ := st.snapshot(); len(starts) != 1 {
		t.Fatalf("the apply was started %d times", len(starts))
	}

	st = newStarter()
	f.d.Starters = map[string]dispatch.Starter{"gpu": st}
	spec = f.job(atoll.JobPlan)
	done = f.start(t.Context(), spec, &events{})
	st.startOf(t, 1)
	st.send(t, 1, dispatch.ClaimantEvent{Ended: true, Failure: "no node can run it: 0/3 nodes are available: 3 Insufficient memory."})
	r = wait(t, done)
	if atoll.ErrorCode(r.err) != atoll.EUNAVAILABLE || atoll.ErrorMessage(r.err) != "Kubernetes could not run this plan: no node can run it: 0/3 nodes are available: 3 Insufficient memory." {
		t.Fatalf("Run = %v", r.err)
	}
	if d, err := f.db.Dispatch(context.Background(), spec.Job.ID); err != nil || d.State != atoll.DispatchLost || d.Attempt != 1 {
		t.Fatalf("dispatch %+v, %v", d, err)
	}
	if _, stops := st.snapshot(); len(stops) != 1 {
		t.Fatalf("the pod that never ran was not removed: stops %v", stops)
	}
}

// The node that follows a job after a restart adopts its claimant when it
// exists, and starts one with a new secret (re-pinned) when the previous
// node stopped before it started one. A cancel stops the claimant.
func TestStarterAdoptRepinAndCancel(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	st := newStarter()
	f.d.Starters = map[string]dispatch.Starter{"gpu": st}
	spec := f.job(atoll.JobPlan)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := f.start(ctx, spec, &events{})
	first := st.startOf(t, 1)
	cancel(executor.ErrStopping)
	if r := wait(t, done); !errors.Is(r.err, executor.ErrDetached) {
		t.Fatalf("Run on stop = %v", r.err)
	}

	// Adopted: the claimant exists, nothing is started, its secret holds.
	st.mu.Lock()
	delete(st.follows, 1) // the stopped node's
	st.mu.Unlock()
	next := &dispatch.Dispatcher{Store: f.db, Lease: 5 * time.Second, Starters: map[string]dispatch.Starter{"gpu": st}}
	ev := &events{}
	ctx, cancel = context.WithCancelCause(context.Background())
	nextDone := make(chan run, 1)
	go func() {
		res, err := next.Executor("gpu").Run(ctx, spec, ev)
		nextDone <- run{res, err}
	}()
	st.send(t, 1, dispatch.ClaimantEvent{Note: "Kubernetes: pod p1 is running."})
	for deadline := time.Now().Add(5 * time.Second); !contains(ev.snapshot(), "atoll: Kubernetes: pod p1 is running.") && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if starts, _ := st.snapshot(); len(starts) != 1 {
		t.Fatalf("the adopted claimant was started again: %d starts", len(starts))
	}
	if !contains(ev.snapshot(), fmt.Sprintf("atoll: Following Job %d-1, started before.", spec.Job.ID)) {
		t.Fatalf("log %q", ev.snapshot())
	}
	cancel(errors.New("cancel comment"))
	wait(t, nextDone)
	if _, stops := st.snapshot(); len(stops) != 1 || stops[0] != 1 {
		t.Fatalf("a cancel did not stop the claimant: %v", stops)
	}
	if _, err := f.d.Claim(context.Background(), first.secret, hello("late"), time.Second); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("a canceled job's secret: %v", err)
	}

	// Re-pinned: queued by a node that never started its claimant.
	st = newStarter()
	f.d.Starters = map[string]dispatch.Starter{"gpu": st}
	spec = f.job(atoll.JobPlan)
	ctx, cancel = context.WithCancelCause(context.Background())
	done = f.start(ctx, spec, &events{})
	lost := st.startOf(t, 1)
	cancel(executor.ErrStopping)
	wait(t, done)
	st.Stop(context.Background(), spec.Job.ID, 1) // as if never started
	next = &dispatch.Dispatcher{Store: f.db, Lease: 5 * time.Second, Starters: map[string]dispatch.Starter{"gpu": st}}
	nextDone = make(chan run, 1)
	go func() {
		res, err := next.Executor("gpu").Run(context.Background(), spec, &events{})
		nextDone <- run{res, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	var starts []startCall
	for len(starts) < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		starts, _ = st.snapshot()
	}
	if len(starts) != 2 || starts[1].secret == lost.secret {
		t.Fatalf("starts %+v", starts)
	}
	if _, err := next.Claim(context.Background(), lost.secret, hello("old"), time.Second); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Fatalf("the lost secret: %v", err)
	}
	a, err := next.Claim(context.Background(), starts[1].secret, hello("new"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := next.Result(context.Background(), a.JobID, a.JobToken, result(t, executor.Result{Output: "ok"}, nil)); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, nextDone); r.err != nil || r.res.Output != "ok" {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
}

// A pod that hangs (its worker silent past the lease, the pod still
// there) loses its plan to a new attempt, and its Job is deleted: it is
// refused from then on and would hold its node's resources.
func TestStarterHungPodReplaced(t *testing.T) {
	f := newFixture(t, time.Second)
	st := newStarter()
	f.d.Starters = map[string]dispatch.Starter{"gpu": st}
	done := f.start(t.Context(), f.job(atoll.JobPlan), &events{})
	if _, err := f.d.Claim(context.Background(), st.startOf(t, 1).secret, hello("pod-1"), time.Second); err != nil {
		t.Fatal(err)
	}
	second := st.startOf(t, 2)
	b, err := f.d.Claim(context.Background(), second.secret, hello("pod-2"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, stops := st.snapshot(); len(stops) != 1 || stops[0] != 1 {
		t.Fatalf("the hung attempt's Job: stops %v", stops)
	}
	if err := f.d.Result(context.Background(), b.JobID, b.JobToken, result(t, executor.Result{Output: "planned"}, nil)); err != nil {
		t.Fatal(err)
	}
	if r := wait(t, done); r.err != nil || r.res.Output != "planned" {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
}
