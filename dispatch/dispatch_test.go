package dispatch_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/store/storetest"
)

// The dispatcher against a real store (SQLite file), with the runner's
// side of a job (events) recorded: the protocol's rules, each bitten.

type events struct {
	mu       sync.Mutex
	lines    []string
	waiting  []string
	flushes  int
	applying func(context.Context) error
	applied  int
}

func (e *events) Write(stream, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lines = append(e.lines, stream+": "+text)
}

func (e *events) Flush() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.flushes++
	return nil
}

func (e *events) Applying(ctx context.Context) error {
	e.mu.Lock()
	e.applied++
	e.mu.Unlock()
	if e.applying != nil {
		return e.applying(ctx)
	}
	return nil
}

func (e *events) Waiting(_ context.Context, desc string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.waiting = append(e.waiting, desc)
}

func (e *events) snapshot() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.lines...)
}

type fixture struct {
	t      *testing.T
	db     *store.DB
	d      *dispatch.Dispatcher
	secret string
	pullID int64
	projID int64
}

func newFixture(t *testing.T, lease time.Duration) *fixture {
	db := storetest.Open(t)
	f := &fixture{t: t, db: db, d: &dispatch.Dispatcher{Store: db, Lease: lease, Version: "test"}}
	err := db.Update(context.Background(), func(tx *store.Tx) (err error) {
		repoID, err := tx.UpsertRepo(atoll.Repo{VCS: "github", Host: "github.com", Owner: "acme", Name: "infra"})
		if err != nil {
			return err
		}
		if f.pullID, err = tx.UpsertPull(repoID, atoll.Pull{Number: 7, HeadSHA: "abc"}); err != nil {
			return err
		}
		f.projID, err = tx.UpsertProject(repoID, atoll.Project{Dir: ".", Workspace: "default"})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, f.secret, err = f.d.CreateWorkerToken(context.Background(), "ci", "gpu", "admin", "test")
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// job inserts a running job of kind and returns its spec.
func (f *fixture) job(kind string) executor.Spec {
	f.t.Helper()
	j := &atoll.Job{Kind: kind, PullID: f.pullID, ProjectID: f.projID, HeadSHA: "abc", User: "alice", Spec: atoll.JobSpec{Pool: "gpu"}}
	err := f.db.Update(context.Background(), func(tx *store.Tx) error {
		if err := tx.InsertJob(j); err != nil {
			return err
		}
		return tx.StartJob(j.ID)
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return executor.Spec{Job: executor.Job{ID: j.ID, Kind: kind, Repo: "acme/infra", Pull: 7, Dir: ".", Workspace: "default", HeadSHA: "abc", Spec: j.Spec}}
}

type run struct {
	res executor.Result
	err error
}

func (f *fixture) start(ctx context.Context, spec executor.Spec, ev *events) <-chan run {
	ch := make(chan run, 1)
	go func() {
		res, err := f.d.Executor("gpu").Run(ctx, spec, ev)
		ch <- run{res, err}
	}()
	return ch
}

func (f *fixture) claim(wait time.Duration) *atoll.WorkerAssignment {
	f.t.Helper()
	a, err := f.d.Claim(context.Background(), f.secret, atoll.WorkerHello{Worker: "w1", Pool: "gpu", Version: "test", Protocol: atoll.WorkerProtocol}, wait)
	if err != nil {
		f.t.Fatal(err)
	}
	if a == nil {
		f.t.Fatal("no job claimed")
	}
	return a
}

func result(t *testing.T, r executor.Result, e *atoll.Error) atoll.WorkerResult {
	raw, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	wr := atoll.WorkerResult{Result: raw, Error: e}
	if len(r.Plan) > 0 {
		sum := sha256.Sum256(r.Plan)
		wr.PlanSHA256 = hex.EncodeToString(sum[:])
	}
	return wr
}

func wait(t *testing.T, ch <-chan run) run {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return")
	}
	return run{}
}

func TestPlanThroughWorker(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	spec := f.job(atoll.JobPlan)
	spec.Terraform.RunEnv = []string{"ATOLL_CREDENTIAL_NONCE=secret-nonce"}
	ev := &events{}
	done := f.start(t.Context(), spec, ev)
	a := f.claim(5 * time.Second)
	if a.JobID != spec.Job.ID || a.Attempt != 1 || a.LeaseSeconds != 5 {
		t.Fatalf("assignment %+v", a)
	}
	var got executor.Spec
	if err := json.Unmarshal(a.Spec, &got); err != nil || got.Job.ID != spec.Job.ID || got.Job.Spec.Pool != "gpu" {
		t.Fatalf("spec %+v, %v", got, err)
	}
	if len(got.Terraform.RunEnv) != 0 || strings.Contains(string(a.Spec), "NONCE") {
		t.Fatalf("the server's credential grant reached the worker: %s", a.Spec)
	}
	ctx := context.Background()
	lines := []atoll.WorkerLogLine{{Seq: 1, Stream: "stdout", Text: "one"}, {Seq: 2, Stream: "weird", Text: "two"}}
	if err := f.d.Logs(ctx, a.JobID, a.JobToken, lines); err != nil {
		t.Fatal(err)
	}
	// Sent again (its answer lost) with one more: only the new one is
	// written.
	if err := f.d.Logs(ctx, a.JobID, a.JobToken, append(lines, atoll.WorkerLogLine{Seq: 3, Stream: "stderr", Text: "three"})); err != nil {
		t.Fatal(err)
	}
	if err := f.d.Logs(ctx, a.JobID, a.JobToken, []atoll.WorkerLogLine{{Seq: 5, Text: "gap"}}); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("a gap in the lines: %v", err)
	}
	if _, err := f.d.Heartbeat(ctx, a.JobID, a.JobToken); err != nil {
		t.Fatal(err)
	}
	bad := result(t, executor.Result{Output: "x", Plan: []byte("plan")}, nil)
	bad.PlanSHA256 = "00"
	if err := f.d.Result(ctx, a.JobID, a.JobToken, bad); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Fatalf("a plan whose hash does not match: %v", err)
	}
	if err := f.d.Result(ctx, a.JobID, "atj_wrong", result(t, executor.Result{}, nil)); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("a wrong job token: %v", err)
	}
	want := executor.Result{Output: "planned", Plan: []byte("plan"), ShowJSON: []byte(`{}`), Summary: &atoll.Summary{Add: 1}}
	if err := f.d.Result(ctx, a.JobID, a.JobToken, result(t, want, nil)); err != nil {
		t.Fatal(err)
	}
	r := wait(t, done)
	if r.err != nil || r.res.Output != "planned" || string(r.res.Plan) != "plan" || r.res.Summary.Add != 1 {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
	text := fmt.Sprint(ev.snapshot())
	for _, want := range []string{"stdout: one", "atoll: two", "stderr: three", "atoll: Running on worker w1 (pool gpu, attempt 1)."} {
		if !contains(ev.snapshot(), want) {
			t.Errorf("log %s lacks %q", text, want)
		}
	}
	if n := count(ev.snapshot(), "stdout: one"); n != 1 {
		t.Errorf("line one written %d times", n)
	}
	// The claim ended: a late call is refused.
	if _, err := f.d.Heartbeat(ctx, a.JobID, a.JobToken); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("heartbeat after the result: %v", err)
	}
}

func contains(lines []string, s string) bool { return count(lines, s) > 0 }

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

func TestFailedJobCarriesItsMessage(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	done := f.start(t.Context(), f.job(atoll.JobPlan), &events{})
	a := f.claim(5 * time.Second)
	e := atoll.Errorf(atoll.EINVALID, "terraform plan: exit status 1\n\nError: bad")
	if err := f.d.Result(context.Background(), a.JobID, a.JobToken, result(t, executor.Result{Output: "partial"}, e)); err != nil {
		t.Fatal(err)
	}
	r := wait(t, done)
	if atoll.ErrorMessage(r.err) != e.Message || r.res.Output != "partial" {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
}

// A claim waiting when a job is queued gets it at once, not at a poll
// interval.
func TestClaimWakesOnDispatch(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	got := make(chan time.Time, 1)
	go func() {
		f.claim(10 * time.Second)
		got <- time.Now()
	}()
	time.Sleep(200 * time.Millisecond) // the claim waits
	queued := time.Now()
	f.start(t.Context(), f.job(atoll.JobPlan), &events{})
	select {
	case at := <-got:
		if d := at.Sub(queued); d > time.Second {
			t.Fatalf("claimed %v after the dispatch", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting claim was not woken")
	}
}

func TestClaimRefusals(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	ctx := context.Background()
	hello := atoll.WorkerHello{Worker: "w1", Pool: "gpu", Version: "old", Protocol: atoll.WorkerProtocol}
	if _, err := f.d.Claim(ctx, "atw_unknown", hello, 0); atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
		t.Errorf("unknown token: %v", err)
	}
	other := hello
	other.Pool = "cpu"
	if _, err := f.d.Claim(ctx, f.secret, other, 0); atoll.ErrorCode(err) != atoll.EFORBIDDEN {
		t.Errorf("another pool: %v", err)
	}
	old := hello
	old.Protocol = 0
	if _, err := f.d.Claim(ctx, f.secret, old, 0); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("an older protocol: %v", err)
	}
	if a, err := f.d.Claim(ctx, f.secret, hello, 0); err != nil || a != nil {
		t.Errorf("no job: %v, %v", a, err)
	}
	if _, _, err := f.d.CreateWorkerToken(ctx, "x", "Bad Pool", "admin", "test"); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("a bad pool name: %v", err)
	}
	if _, _, err := f.d.CreateWorkerToken(ctx, "x", atoll.PoolLocal, "admin", "test"); atoll.ErrorCode(err) != atoll.EINVALID {
		t.Errorf("a token for local: %v", err)
	}
}

// Revoking a token ends its worker's waiting claim with a refusal.
func TestRevokeStopsAWaitingClaim(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	errc := make(chan error, 1)
	go func() {
		_, err := f.d.Claim(context.Background(), f.secret, atoll.WorkerHello{Worker: "w1", Pool: "gpu", Protocol: atoll.WorkerProtocol}, 20*time.Second)
		errc <- err
	}()
	time.Sleep(200 * time.Millisecond)
	toks, err := f.db.WorkerTokens(context.Background())
	if err != nil || len(toks) != 1 {
		t.Fatal(toks, err)
	}
	if err := f.d.RevokeWorkerToken(context.Background(), toks[0].ID, "admin", "test"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-errc:
		if atoll.ErrorCode(err) != atoll.EUNAUTHORIZED {
			t.Fatalf("claim after revoke: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiting claim went on after its token was revoked")
	}
}

// A plan whose worker stops heartbeating is dispatched once more; the
// lost worker's late report is refused; the second worker's is taken.
func TestLostPlanIsPlannedAgain(t *testing.T) {
	f := newFixture(t, time.Second)
	ev := &events{}
	done := f.start(t.Context(), f.job(atoll.JobPlan), ev)
	first := f.claim(5 * time.Second)
	second := f.claim(10 * time.Second) // after the first's lease ran out
	if second.JobID != first.JobID || second.Attempt != 2 {
		t.Fatalf("second claim %+v", second)
	}
	ctx := context.Background()
	if err := f.d.Result(ctx, first.JobID, first.JobToken, result(t, executor.Result{Output: "late"}, nil)); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("the lost worker's late report: %v", err)
	}
	if err := f.d.Logs(ctx, second.JobID, second.JobToken, []atoll.WorkerLogLine{{Seq: 1, Stream: "stdout", Text: "again"}}); err != nil {
		t.Fatalf("the second attempt numbers its lines from 1: %v", err)
	}
	if err := f.d.Result(ctx, second.JobID, second.JobToken, result(t, executor.Result{Output: "second"}, nil)); err != nil {
		t.Fatal(err)
	}
	r := wait(t, done)
	if r.err != nil || r.res.Output != "second" {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
	if !contains(ev.snapshot(), "atoll: Worker w1 (pool gpu) stopped reporting and its lease ran out: planning again.") {
		t.Errorf("log %q does not say the plan runs again", ev.snapshot())
	}
}

// An apply whose worker is lost after it was allowed to start is
// interrupted, never dispatched again.
func TestLostApplyIsInterrupted(t *testing.T) {
	f := newFixture(t, time.Second)
	spec := f.job(atoll.JobApply)
	spec.Plan = []byte("the plan")
	ev := &events{}
	done := f.start(t.Context(), spec, ev)
	a := f.claim(5 * time.Second)
	sum := sha256.Sum256(spec.Plan)
	if a.PlanSHA256 != hex.EncodeToString(sum[:]) {
		t.Fatalf("plan hash %q", a.PlanSHA256)
	}
	ctx := context.Background()
	plan, err := f.d.Plan(ctx, a.JobID, a.JobToken)
	if err != nil || string(plan) != "the plan" {
		t.Fatalf("plan %q, %v", plan, err)
	}
	if err := f.d.Applying(ctx, a.JobID, a.JobToken); err != nil {
		t.Fatal(err)
	}
	// Asked again (the answer lost): allowed, the runner not asked twice.
	if err := f.d.Applying(ctx, a.JobID, a.JobToken); err != nil {
		t.Fatal(err)
	}
	r := wait(t, done)
	var lost *executor.Interrupted
	if !errors.As(r.err, &lost) {
		t.Fatalf("Run = %v, want interrupted", r.err)
	}
	if ev.applied != 1 {
		t.Errorf("the runner was asked %d times whether the apply may start", ev.applied)
	}
	if got, err := f.d.Claim(ctx, f.secret, atoll.WorkerHello{Worker: "w2", Pool: "gpu", Protocol: atoll.WorkerProtocol}, 0); err != nil || got != nil {
		t.Fatalf("the apply was dispatched again: %+v, %v", got, err)
	}
	if err := f.d.Result(ctx, a.JobID, a.JobToken, result(t, executor.Result{Output: "late"}, nil)); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("a late report: %v", err)
	}
}

// The runner's refusal of an apply reaches the worker, and nothing is
// marked applying.
func TestApplyRefused(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	spec := f.job(atoll.JobApply)
	spec.Plan = []byte("p")
	ev := &events{applying: func(context.Context) error { return atoll.Errorf(atoll.EFORBIDDEN, "The plan needs an approval.") }}
	f.start(t.Context(), spec, ev)
	a := f.claim(5 * time.Second)
	if err := f.d.Applying(context.Background(), a.JobID, a.JobToken); atoll.ErrorMessage(err) != "The plan needs an approval." {
		t.Fatalf("Applying = %v", err)
	}
	d, err := f.db.Dispatch(context.Background(), a.JobID)
	if err != nil || d.Applying {
		t.Fatalf("dispatch %+v, %v", d, err)
	}
}

// A stopping runner leaves the run to its worker (the next active follows
// it); a canceled job tells the worker to stop.
func TestStopDetachesCancelStops(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := f.start(ctx, f.job(atoll.JobPlan), &events{})
	a := f.claim(5 * time.Second)
	cancel(executor.ErrStopping)
	if r := wait(t, done); !errors.Is(r.err, executor.ErrDetached) {
		t.Fatalf("Run on stop = %v", r.err)
	}
	if _, err := f.d.Heartbeat(context.Background(), a.JobID, a.JobToken); err != nil {
		t.Fatalf("the worker lost its claim when the node stopped: %v", err)
	}

	ctx, cancel = context.WithCancelCause(context.Background())
	done = f.start(ctx, f.job(atoll.JobPlan), &events{})
	b := f.claim(5 * time.Second)
	cancel(errors.New("cancel comment"))
	wait(t, done)
	if _, err := f.d.Heartbeat(context.Background(), b.JobID, b.JobToken); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("heartbeat of a canceled job: %v", err)
	}
}

// A node that takes over follows a claimed job: it finds the dispatch, the
// worker's lines already acknowledged are not written again, and the
// result reported before the node followed it is taken.
func TestFollowAfterFailover(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	spec := f.job(atoll.JobPlan)
	ctx, cancel := context.WithCancelCause(context.Background())
	done := f.start(ctx, spec, &events{})
	a := f.claim(5 * time.Second)
	if err := f.d.Logs(context.Background(), a.JobID, a.JobToken, []atoll.WorkerLogLine{{Seq: 1, Stream: "stdout", Text: "before"}}); err != nil {
		t.Fatal(err)
	}
	cancel(executor.ErrStopping)
	wait(t, done)
	// The worker, meanwhile, cannot be followed: it retries.
	if err := f.d.Logs(context.Background(), a.JobID, a.JobToken, []atoll.WorkerLogLine{{Seq: 1, Text: "before"}, {Seq: 2, Text: "after"}}); atoll.ErrorCode(err) != atoll.EUNAVAILABLE {
		t.Fatalf("lines while nobody follows: %v", err)
	}
	// The next node's dispatcher, same database.
	next := &dispatch.Dispatcher{Store: f.db, Lease: 5 * time.Second}
	ev := &events{}
	nextDone := make(chan run, 1)
	go func() {
		res, err := next.Executor("gpu").Run(context.Background(), spec, ev)
		nextDone <- run{res, err}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := next.Logs(context.Background(), a.JobID, a.JobToken, []atoll.WorkerLogLine{{Seq: 1, Stream: "stdout", Text: "before"}, {Seq: 2, Stream: "stdout", Text: "after"}})
		if err == nil {
			break
		}
		if atoll.ErrorCode(err) != atoll.EUNAVAILABLE || time.Now().After(deadline) {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := next.Result(context.Background(), a.JobID, a.JobToken, result(t, executor.Result{Output: "done"}, nil)); err != nil {
		t.Fatal(err)
	}
	r := wait(t, nextDone)
	if r.err != nil || r.res.Output != "done" {
		t.Fatalf("Run = %+v, %v", r.res, r.err)
	}
	if contains(ev.snapshot(), "stdout: before") || !contains(ev.snapshot(), "stdout: after") {
		t.Errorf("lines after the takeover %q: want only the new one", ev.snapshot())
	}
}

// A pool with no worker says so, once.
func TestWaitingForAWorker(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	ev := &events{}
	ctx, cancel := context.WithCancel(context.Background())
	done := f.start(ctx, f.job(atoll.JobPlan), ev)
	deadline := time.Now().Add(5 * time.Second)
	for {
		ev.mu.Lock()
		n := len(ev.waiting)
		ev.mu.Unlock()
		if n > 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	wait(t, done)
	if len(ev.waiting) != 1 || ev.waiting[0] != "Waiting for a worker in pool gpu." {
		t.Fatalf("waiting = %q", ev.waiting)
	}
}

// A job's token fetches its own job's repository and no other: the git
// route names a job, never a repository, and another job's is refused.
func TestJobTokenFetchesOnlyItsJob(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	served := ""
	f.d.Mirrors = mirrors(func(co executor.Checkout) string { served = co.Name; return "/mirror/" + co.Name })
	f.d.ServeGit = func(_ context.Context, dir string, _ bool, _ string, _ io.Reader, _ io.Writer) error {
		served = dir
		return nil
	}
	specA := f.job(atoll.JobPlan)
	specA.Checkout.Name = "infra"
	f.start(t.Context(), specA, &events{})
	a := f.claim(5 * time.Second)
	specB := f.job(atoll.JobPlan)
	specB.Checkout.Name = "secrets"
	f.start(t.Context(), specB, &events{})
	ctx := context.Background()
	if err := f.d.UploadPack(ctx, specB.Job.ID, a.JobToken, true, "", nil, io.Discard); atoll.ErrorCode(err) != atoll.ECONFLICT {
		t.Fatalf("another job's repository with this job's token: %v", err)
	}
	if served != "" {
		t.Fatalf("served %q", served)
	}
	if err := f.d.UploadPack(ctx, a.JobID, a.JobToken, true, "", nil, io.Discard); err != nil || served != "/mirror/infra" {
		t.Fatalf("its own: %v, served %q", err, served)
	}
}

type mirrors func(executor.Checkout) string

func (m mirrors) Mirror(_ context.Context, co executor.Checkout) (string, error) { return m(co), nil }

// The apply's start is committed with its dispatch marked applying: when
// the node dies after the commit and before the worker heard yes, the
// worker asking the next node is told yes (the plan is applied already,
// by this job), and the runner is not asked again.
func TestApplyAllowedBeforeAFailoverIsAllowedAfter(t *testing.T) {
	f := newFixture(t, 5*time.Second)
	ctx := context.Background()
	var planID int64
	err := f.db.Update(ctx, func(tx *store.Tx) error {
		pj := &atoll.Job{Kind: atoll.JobPlan, PullID: f.pullID, ProjectID: f.projID, HeadSHA: "abc", User: "alice"}
		if err := tx.InsertJob(pj); err != nil {
			return err
		}
		p := &atoll.Plan{JobID: pj.ID, PullID: f.pullID, ProjectID: f.projID, HeadSHA: "abc", File: []byte("plan"), ShowJSON: []byte("{}")}
		if err := tx.InsertUnlockedPlan(p); err != nil {
			return err
		}
		planID = p.ID
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	spec := f.job(atoll.JobApply)
	spec.Plan = []byte("plan")
	start := func(ctx context.Context) error {
		_, err := f.db.StartApply(ctx, atoll.ApplyStart{PlanID: planID, Unlocked: true, JobID: spec.Job.ID,
			Approve: func(*atoll.PlanRef, *atoll.Approval, time.Time) (*atoll.Approval, error) { return nil, nil },
			Event:   func(*atoll.Approval) atoll.Event { return atoll.Event{Actor: "alice", Action: "apply.start"} }})
		return err
	}
	// The first node: the worker asks, the apply's start is committed, the
	// node dies before its answer (nor its own record) is written.
	f.start(t.Context(), spec, &events{applying: start})
	a := f.claim(5 * time.Second)
	if err := start(ctx); err != nil {
		t.Fatal(err)
	}
	// The next node follows the job; the worker asks again.
	next := &dispatch.Dispatcher{Store: f.db, Lease: 5 * time.Second}
	ev := &events{applying: start}
	go next.Executor("gpu").Run(t.Context(), spec, ev)
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := next.Applying(ctx, a.JobID, a.JobToken)
		if err == nil {
			break
		}
		if atoll.ErrorCode(err) != atoll.EUNAVAILABLE || time.Now().After(deadline) {
			t.Fatalf("the worker asking again after the failover: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ev.applied != 0 {
		t.Fatalf("the next node asked the runner %d times", ev.applied)
	}
}
