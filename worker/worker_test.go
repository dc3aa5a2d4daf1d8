package worker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
)

// A transient failure (connection refused, 503) moves the client on to the
// next server, and it stays with the one that answered.
func TestClientRotatesOnTransientFailure(t *testing.T) {
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // connection refused
	var busyCalls atomic.Int32
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		busyCalls.Add(1)
		errorJSON(w, http.StatusServiceUnavailable, "standby")
	}))
	defer busy.Close()
	var goodCalls atomic.Int32
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		goodCalls.Add(1)
		if r.URL.Path != "/api/v1/workers/claim" || r.URL.Query().Get("wait") != "1" || r.Header.Get("Authorization") != "Bearer s3cret" {
			errorJSON(w, http.StatusBadRequest, "unexpected call "+r.URL.String())
			return
		}
		fmt.Fprint(w, `{"job_id":7,"job_token":"jt","lease_seconds":30,"attempt":1,"spec":{}}`)
	}))
	defer good.Close()

	c := &Client{Servers: []string{dead.URL, busy.URL, good.URL}}
	start := time.Now()
	a, err := c.Claim(context.Background(), "s3cret", atoll.WorkerHello{Worker: "w", Pool: "p", Protocol: atoll.WorkerProtocol}, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if a.JobID != 7 || a.JobToken != "jt" {
		t.Fatalf("assignment %+v", a)
	}
	if busyCalls.Load() != 1 || goodCalls.Load() != 1 {
		t.Fatalf("busy answered %d calls, good %d: want 1 each", busyCalls.Load(), goodCalls.Load())
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %s: the backoff should start at 100 ms", d)
	}
	if c.server() != good.URL {
		t.Fatalf("the client went back to %s", c.server())
	}
	// A refusal is not retried, nor is the server changed.
	if _, err := c.Heartbeat(context.Background(), 7, "jt", time.Second); !IsStatus(err, http.StatusBadRequest) {
		t.Fatalf("heartbeat: %v, want the 400", err)
	}
	if goodCalls.Load() != 2 || c.server() != good.URL {
		t.Fatalf("good answered %d calls; server %s", goodCalls.Load(), c.server())
	}
}

// A job call gives up once its retries outlast RetryFor.
func TestClientJobCallGivesUp(t *testing.T) {
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		errorJSON(w, http.StatusBadGateway, "no active node")
	}))
	defer busy.Close()
	c := &Client{Servers: []string{busy.URL}, RetryFor: 500 * time.Millisecond}
	err := c.Applying(context.Background(), 1, "jt")
	if !IsStatus(err, http.StatusBadGateway) || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("err %v", err)
	}
}

// A worker whose token is refused stops, with the server's message.
func TestUnauthorizedStopsWorker(t *testing.T) {
	p := newFakePlane(t)
	w := newTestWorker(t, p, func(c *Config) { c.Token = "wrong-TOKEN-xyz" })
	err := runFor(t, w, context.Background(), 5*time.Second)
	if err == nil || !strings.Contains(err.Error(), "unknown worker token") || !strings.Contains(err.Error(), "refuses the worker token") {
		t.Fatalf("err %v", err)
	}
	// The token is not in the message.
	if strings.Contains(err.Error(), "wrong-TOKEN-xyz") {
		t.Fatalf("the error names the token: %v", err)
	}
}

// 403 (another pool) and 400 (another protocol) stop the worker too.
func TestClaimRefusalsStopWorker(t *testing.T) {
	for _, status := range []int{http.StatusForbidden, http.StatusBadRequest} {
		p := newFakePlane(t)
		p.claimStatus = status
		w := newTestWorker(t, p, nil)
		if err := runFor(t, w, context.Background(), 5*time.Second); err == nil || !strings.Contains(err.Error(), "claim refused by the test") {
			t.Fatalf("%d: err %v", status, err)
		}
	}
}

// A 409 on a heartbeat kills the job (its context ends) and abandons it:
// no result is sent.
func TestHeartbeatConflictCancelsJob(t *testing.T) {
	p := newFakePlane(t)
	p.enqueue(1, []atoll.Step{{Name: "run", Command: "echo started; sleep 30"}}, 1)
	w := newTestWorker(t, p, func(c *Config) { c.Once = true })
	go func() {
		// Once the job runs, the claim is lost.
		for !strings.Contains(strings.Join(p.lines(), "\n"), "started") {
			time.Sleep(20 * time.Millisecond)
		}
		p.mu.Lock()
		p.hbStatus = http.StatusConflict
		p.mu.Unlock()
	}()
	start := time.Now()
	err := runFor(t, w, context.Background(), 10*time.Second)
	if !errors.Is(err, errAbandoned) {
		t.Fatalf("err %v, want the job abandoned", err)
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Fatalf("took %s: the job's sleep was not killed", d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.results) != 0 {
		t.Fatalf("an abandoned job reported %+v", p.results)
	}
}

// A job runs from its claim to its result: its checkout comes from the
// control plane with the job token (in git's header), its steps run with
// the worker's Terraform, and neither token reaches a step's environment.
func TestOnceRunsAndReportsJob(t *testing.T) {
	p := newFakePlane(t)
	p.enqueue(3, []atoll.Step{{Name: "run", Command: "env; ls; echo PATH=$PATH"}}, 30)
	t.Setenv("ATOLL_WORKER_TOKEN", p.secret) // as if someone put it there
	t.Setenv("ATOLL_SOMETHING", "atoll-only")
	w := newTestWorker(t, p, func(c *Config) { c.Once = true })
	if err := runFor(t, w, context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	res, ok := p.results[3]
	auth := p.gitAuth
	p.mu.Unlock()
	if !ok {
		t.Fatal("no result")
	}
	if res.Error != nil {
		t.Fatalf("job failed: %s", res.Error.Message)
	}
	out := strings.Join(p.lines(), "\n")
	for _, secret := range []string{p.secret, jobToken(3), "atoll-only", "SERVER_RUN_ENV", "GIT_CONFIG_"} {
		if strings.Contains(out, secret) || strings.Contains(string(res.Result), secret) {
			t.Errorf("the step's output holds %q:\n%s", secret, out)
		}
	}
	if !strings.Contains(out, "main.tf") {
		t.Errorf("the checkout has no main.tf:\n%s", out)
	}
	if len(auth) == 0 || auth[0] != "Bearer "+jobToken(3) {
		t.Errorf("git's Authorization headers: %q", auth)
	}
}

// An error shown to users names no path of the worker's machine.
func TestUserErrorRedactsDataDir(t *testing.T) {
	p := newFakePlane(t)
	w := newTestWorker(t, p, nil)
	j := &job{w: w}
	got := j.userError(fmt.Errorf("open %s/work/x: denied", w.DataDir()))
	if got.Code != atoll.EINTERNAL || got.Message != "Internal error on worker w1: open <work>/work/x: denied" {
		t.Fatalf("%+v", got)
	}
	ae := j.userError(atoll.Errorf(atoll.EINVALID, "Directory %s/a is missing.", w.DataDir()))
	if ae.Code != atoll.EINVALID || ae.Message != "Directory <work>/a is missing." {
		t.Fatalf("%+v", ae)
	}
}

// Lines of a batch the server did not acknowledge are sent again, every
// line is stored once in order, and Flush returns only once the last line
// is acknowledged.
func TestLogsResentUntilAcknowledged(t *testing.T) {
	p := newFakePlane(t)
	p.failLogs = 2
	p.logDelay = 200 * time.Millisecond
	c := &Client{Servers: []string{p.srv.URL}, RetryFor: 5 * time.Second}
	l := newLogShipper(context.Background(), func(ctx context.Context, lines []atoll.WorkerLogLine) error {
		return c.Logs(ctx, 5, jobToken(5), lines)
	})
	const n = 1203 // three batches
	for i := range n {
		l.Write(atoll.StreamStdout, fmt.Sprintf("line %d", i+1))
	}
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	// Flush returned: every line is stored, none was stored twice.
	got := p.lines()
	if len(got) != n || got[0] != "line 1" || got[n-1] != fmt.Sprintf("line %d", n) {
		t.Fatalf("stored %d lines (%q ... )", len(got), got[:min(3, len(got))])
	}
	p.mu.Lock()
	posts := p.logPosts
	p.mu.Unlock()
	if len(posts) < 5 || posts[0][0].Seq != 1 || posts[1][0].Seq != 1 || posts[2][0].Seq != 1 {
		t.Fatalf("posts start at %v: the refused batch was not sent again", firstSeqs(posts))
	}
	for _, b := range posts {
		if len(b) > batchLines {
			t.Fatalf("a batch of %d lines", len(b))
		}
	}
	// Lines written after a Flush are flushed by the next.
	l.Write(atoll.StreamStderr, "late")
	if err := l.Flush(); err != nil {
		t.Fatal(err)
	}
	if got := p.lines(); got[len(got)-1] != "late" {
		t.Fatalf("last line %q", got[len(got)-1])
	}
}

func firstSeqs(posts [][]atoll.WorkerLogLine) []int64 {
	var s []int64
	for _, b := range posts {
		s = append(s, b[0].Seq)
	}
	return s
}

// A batch over the size limit is split.
func TestLogBatchFitsSizeLimit(t *testing.T) {
	l := &logShipper{}
	for range 400 {
		l.pending = append(l.pending, atoll.WorkerLogLine{Seq: int64(len(l.pending) + 1), Text: strings.Repeat("\x1b", 4000)})
	}
	b := l.batch()
	if len(b) == 0 || len(b) == 400 {
		t.Fatalf("batch of %d lines", len(b))
	}
	raw, _ := json.Marshal(b)
	if len(raw) > batchBytes {
		t.Fatalf("batch of %d bytes", len(raw))
	}
}

// Flush returns the error that stopped shipping instead of waiting.
func TestFlushReturnsShippingError(t *testing.T) {
	refused := errors.New("refused")
	l := newLogShipper(context.Background(), func(context.Context, []atoll.WorkerLogLine) error { return refused })
	l.Write(atoll.StreamStdout, "x")
	if err := l.Flush(); !errors.Is(err, refused) {
		t.Fatalf("flush: %v", err)
	}
}

// An apply applies only the plan file whose SHA-256 the assignment names.
func TestApplyChecksPlanSHA256(t *testing.T) {
	p := newFakePlane(t)
	p.plan = []byte("plan file")
	sum := sha256.Sum256(p.plan)
	p.enqueueKind(1, atoll.JobApply, []atoll.Step{{Name: "run", Command: "echo APPLIED; cat $PLANFILE"}}, 30, hex.EncodeToString(sum[:]))
	p.enqueueKind(2, atoll.JobApply, []atoll.Step{{Name: "run", Command: "echo APPLIED"}}, 30, strings.Repeat("0", 64))
	w := newTestWorker(t, p, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			p.mu.Lock()
			n := len(p.results)
			p.mu.Unlock()
			if n == 2 {
				cancel()
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	if err := runFor(t, w, ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.results[1].Error; e != nil {
		t.Fatalf("job 1 failed: %s", e.Message)
	}
	if !strings.Contains(string(p.results[1].Result), "plan file") {
		t.Fatalf("job 1's output: %s", p.results[1].Result)
	}
	e := p.results[2].Error
	if e == nil || e.Message != "The plan file downloaded does not match its SHA-256: nothing was applied." {
		t.Fatalf("job 2's error: %+v", e)
	}
	if strings.Contains(string(p.results[2].Result), "APPLIED") {
		t.Fatal("job 2 applied")
	}
}

// The control plane's refusal of an apply is the job's error, with its
// message, and nothing is applied.
func TestApplyingRefusalFailsJob(t *testing.T) {
	p := newFakePlane(t)
	p.plan = []byte("plan")
	sum := sha256.Sum256(p.plan)
	p.refuseApply = "The plan was discarded."
	p.enqueueKind(1, atoll.JobApply, []atoll.Step{{Name: "run", Command: "echo APPLIED"}}, 30, hex.EncodeToString(sum[:]))
	w := newTestWorker(t, p, func(c *Config) { c.Once = true })
	if err := runFor(t, w, context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.results[1].Error
	if e == nil || e.Code != atoll.EINVALID || e.Message != "The plan was discarded." {
		t.Fatalf("error %+v", e)
	}
	if strings.Contains(strings.Join(p.linesLocked(), "\n"), "APPLIED") {
		t.Fatal("applied")
	}
}

// A stop lets a running job finish within the stop timeout, then
// interrupts it; either way the job is reported.
func TestStopInterruptsJobAfterTimeout(t *testing.T) {
	p := newFakePlane(t)
	p.enqueue(1, []atoll.Step{{Name: "run", Command: "echo started; sleep 30"}}, 30)
	w := newTestWorker(t, p, func(c *Config) { c.StopTimeout = 300 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for !strings.Contains(strings.Join(p.lines(), "\n"), "started") {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
	}()
	if err := runFor(t, w, ctx, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.results[1].Error
	if e == nil || e.Message != "Interrupted: worker w1 was stopped and the job did not finish within its stop timeout." {
		t.Fatalf("error %+v", e)
	}
}

// A job runs --terraform-bin unless it names another version, which is
// installed in the data dir; one that cannot be installed fails the job
// with a message saying so.
func TestTerraformBinary(t *testing.T) {
	p := newFakePlane(t)
	w := newTestWorker(t, p, nil)
	releases := httptest.NewServer(http.NotFoundHandler())
	defer releases.Close()
	w.tf.installer.TerraformURL = releases.URL
	ctx := context.Background()
	for _, tc := range []struct {
		spec executor.Terraform
		want string
	}{
		{executor.Terraform{}, w.tf.runner.Bin},
		{executor.Terraform{Version: "1.9.0", Bin: "/server/terraform1.9.0"}, w.tf.runner.Bin},
		{executor.Terraform{Version: "1.9.0", Distribution: "terraform"}, w.tf.runner.Bin},
	} {
		if got, err := w.tf.binary(ctx, tc.spec); err != nil || got != tc.want {
			t.Errorf("%+v: %q %v, want %q", tc.spec, got, err, tc.want)
		}
	}
	_, err := w.tf.binary(ctx, executor.Terraform{Version: "1.5.7"})
	if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "This job needs terraform 1.5.7, which this worker cannot install") {
		t.Fatalf("err %v", err)
	}
	// An installed version is used as it is.
	installed := filepath.Join(w.tf.installer.Dir, "terraform1.5.7")
	os.MkdirAll(w.tf.installer.Dir, 0o755)
	os.WriteFile(installed, []byte("#!/bin/sh\n"), 0o755)
	if got, err := w.tf.binary(ctx, executor.Terraform{Version: "1.5.7"}); err != nil || got != installed {
		t.Fatalf("%q %v", got, err)
	}
	// Run steps find the job's binary as `terraform`.
	if dirs := w.tf.path("terraform", w.tf.runner.Bin); len(dirs) != 1 || dirs[0] != filepath.Dir(w.tf.runner.Bin) {
		t.Fatalf("path of --terraform-bin: %q", dirs)
	}
	dirs := w.tf.path("terraform", installed)
	if len(dirs) != 2 {
		t.Fatalf("path of %s: %q", installed, dirs)
	}
	if target, err := os.Readlink(filepath.Join(dirs[0], "terraform")); err != nil || target != installed {
		t.Fatalf("%s/terraform -> %q %v", dirs[0], target, err)
	}
}
