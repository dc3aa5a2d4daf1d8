package dispatch

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
)

// The worker protocol's calls (atoll.WorkerService).

// Claim waits up to wait for a job of the worker's pool.
func (d *Dispatcher) Claim(ctx context.Context, secret string, hello atoll.WorkerHello, wait time.Duration) (*atoll.WorkerAssignment, error) {
	tok, err := d.Store.WorkerTokenByHash(ctx, hash(secret))
	if atoll.ErrorCode(err) == atoll.EUNAUTHORIZED && strings.HasPrefix(secret, pinnedPrefix) {
		return d.claimPinned(ctx, secret, hello)
	} else if err != nil {
		return nil, err
	}
	if err := d.checkHello(hello); err != nil {
		return nil, err
	}
	if hello.Pool != tok.Pool {
		return nil, atoll.Errorf(atoll.EFORBIDDEN, "This worker token is for pool %q, not %q.", tok.Pool, hello.Pool)
	}
	d.see(tok, hello.Worker, hello.Version)
	if err := d.Store.SeeWorker(ctx, tok.ID, hello.Worker, hello.Version); err != nil {
		return nil, err
	}
	d.polls(tok.Pool, 1)
	defer d.polls(tok.Pool, -1)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		// Taken before the claim: a dispatch queued after it wakes us.
		wake := d.wakeup(tok.Pool)
		token := newSecret("atj_")
		disp, err := d.Store.ClaimDispatch(ctx, tok.Pool, tok.ID, hello.Worker, hash(token), d.lease())
		if err != nil {
			return nil, err
		}
		if disp != nil {
			d.claimed(disp, hello.Worker)
			return d.assignment(disp, token), nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline.C:
			return nil, nil
		case <-wake:
			// A dispatch, or a revoked token: ask again.
			if _, err := d.Store.WorkerTokenByHash(ctx, hash(secret)); err != nil {
				return nil, err
			}
		}
	}
}

// checkHello refuses a claim of another protocol or without a usable name.
func (d *Dispatcher) checkHello(hello atoll.WorkerHello) error {
	if hello.Protocol != atoll.WorkerProtocol {
		return atoll.Errorf(atoll.EINVALID, "This worker speaks protocol %d and this server (Atoll %s) speaks %d: run the worker of the server's version.", hello.Protocol, d.Version, atoll.WorkerProtocol)
	}
	if hello.Worker == "" || len(hello.Worker) > 253 || strings.ContainsAny(hello.Worker, " \t\r\n") {
		return atoll.Errorf(atoll.EINVALID, "A worker needs a name (1 to 253 characters, no spaces).")
	}
	return nil
}

// pinnedPrefix starts the one-time secrets that pin a dispatch to the
// process started for it.
const pinnedPrefix = "atp_"

// PinnedSecret is a new one-time secret and the hash a dispatch pinned to
// it stores (atoll.Dispatch.ClaimHash): the process given the secret (a
// Kubernetes Job's pod) claims that job, and no worker of the pool does.
func PinnedSecret() (secret string, claimHash []byte) {
	secret = newSecret(pinnedPrefix)
	return secret, hash(secret)
}

// claimPinned claims the dispatch pinned to secret, at once: it was
// queued before its claimant was started.
func (d *Dispatcher) claimPinned(ctx context.Context, secret string, hello atoll.WorkerHello) (*atoll.WorkerAssignment, error) {
	if err := d.checkHello(hello); err != nil {
		return nil, err
	}
	token := newSecret("atj_")
	disp, err := d.Store.ClaimPinnedDispatch(ctx, hash(secret), hello.Worker, hash(token), d.lease())
	if err != nil {
		return nil, err
	}
	if disp.Pool != hello.Pool {
		// Claimed all the same (its secret was this job's alone); said
		// in the worker's log.
		d.logger().Warn("a pinned claimant named another pool", "job", disp.JobID, "pool", disp.Pool, "said", hello.Pool)
	}
	d.claimed(disp, hello.Worker)
	return d.assignment(disp, token), nil
}

// claimed tells the job's log (when this node follows it) who runs it.
func (d *Dispatcher) claimed(disp *atoll.Dispatch, worker string) {
	d.logger().Info("job claimed", "job", disp.JobID, "worker", worker, "pool", disp.Pool, "attempt", disp.Attempt)
	w, err := d.waiter(disp.JobID)
	if err != nil {
		return
	}
	// Before any line of the worker's: it has not the job yet.
	w.events.Write(atoll.StreamAtoll, fmt.Sprintf("Running on worker %s (pool %s, attempt %d).", worker, disp.Pool, disp.Attempt))
	if w.waited.Load() {
		w.events.Waiting(context.Background(), fmt.Sprintf("Running on worker %s.", worker))
	}
}

// assignment is the claim's answer.
func (d *Dispatcher) assignment(disp *atoll.Dispatch, token string) *atoll.WorkerAssignment {
	return &atoll.WorkerAssignment{JobID: disp.JobID, JobToken: token, LeaseSeconds: int(d.lease() / time.Second),
		Attempt: disp.Attempt, Spec: disp.Spec, PlanSHA256: disp.PlanSHA256}
}

// held is job id's dispatch, checked against the job token, and its
// waiter in this process. The store checks again in every write.
func (d *Dispatcher) held(ctx context.Context, jobID int64, jobToken string) (*atoll.Dispatch, error) {
	disp, err := d.Store.Dispatch(ctx, jobID)
	if atoll.ErrorCode(err) == atoll.ENOTFOUND || (err == nil && string(disp.JobTokenHash) != string(hash(jobToken))) {
		return nil, atoll.Errorf(atoll.ECONFLICT, "This job token does not hold job %d.", jobID)
	} else if err != nil {
		return nil, err
	}
	if !disp.Live(time.Now()) || disp.State != atoll.DispatchClaimed {
		return nil, atoll.Errorf(atoll.ECONFLICT, "This worker no longer holds job %d (%s).", jobID, disp.State)
	}
	d.seeJob(disp)
	return disp, nil
}

// Holds checks that jobToken holds job jobID's claim.
func (d *Dispatcher) Holds(ctx context.Context, jobID int64, jobToken string) error {
	_, err := d.held(ctx, jobID, jobToken)
	return err
}

// Heartbeat extends the claim's lease.
func (d *Dispatcher) Heartbeat(ctx context.Context, jobID int64, jobToken string) (*atoll.WorkerLease, error) {
	disp, err := d.Store.RenewDispatch(ctx, jobID, hash(jobToken), d.lease())
	if err != nil {
		return nil, err
	}
	d.seeJob(disp)
	return &atoll.WorkerLease{LeaseExpiresAt: *disp.LeaseExpiresAt}, nil
}

// Logs stores a batch of the job's lines, skipping those already stored.
func (d *Dispatcher) Logs(ctx context.Context, jobID int64, jobToken string, lines []atoll.WorkerLogLine) error {
	if _, err := d.held(ctx, jobID, jobToken); err != nil {
		return err
	}
	w, err := d.waiter(jobID)
	if err != nil {
		return err
	}
	w.logMu.Lock()
	defer w.logMu.Unlock()
	// Read under the lock: a batch before this one moved it on.
	disp, err := d.Store.Dispatch(ctx, jobID)
	if err != nil {
		return err
	}
	last := disp.LogAcked
	for _, l := range lines {
		if l.Seq <= last {
			continue // stored already: a batch sent again
		}
		if l.Seq != last+1 {
			return atoll.Errorf(atoll.EINVALID, "Log line %d came before line %d: send the lines in order.", l.Seq, last+1)
		}
		w.events.Write(stream(l.Stream), l.Text)
		last = l.Seq
	}
	if last == disp.LogAcked {
		return nil
	}
	if err := w.events.Flush(); err != nil {
		return err
	}
	return d.Store.AckDispatchLogs(ctx, jobID, hash(jobToken), last, d.lease())
}

// stream keeps a worker's line to the streams a job's log has.
func stream(s string) string {
	switch s {
	case atoll.StreamStdout, atoll.StreamStderr:
		return s
	}
	return atoll.StreamAtoll
}

// Applying asks the runner whether the apply may start.
func (d *Dispatcher) Applying(ctx context.Context, jobID int64, jobToken string) error {
	disp, err := d.held(ctx, jobID, jobToken)
	if err != nil {
		return err
	}
	if disp.Applying {
		return nil // allowed already: the answer was lost
	}
	w, err := d.waiter(jobID)
	if err != nil {
		return err
	}
	if err := w.events.Applying(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	return d.Store.MarkDispatchApplying(context.WithoutCancel(ctx), jobID, hash(jobToken))
}

// Plan returns the plan file an apply applies.
func (d *Dispatcher) Plan(ctx context.Context, jobID int64, jobToken string) ([]byte, error) {
	if _, err := d.held(ctx, jobID, jobToken); err != nil {
		return nil, err
	}
	w, err := d.waiter(jobID)
	if err != nil {
		return nil, err
	}
	if len(w.plan) == 0 {
		return nil, atoll.Errorf(atoll.ENOTFOUND, "Job %d applies no plan file.", jobID)
	}
	return w.plan, nil
}

// Result stores the job's result.
func (d *Dispatcher) Result(ctx context.Context, jobID int64, jobToken string, res atoll.WorkerResult) error {
	if _, err := d.held(ctx, jobID, jobToken); err != nil {
		return err
	}
	var r executor.Result
	if len(res.Result) > 0 && string(res.Result) != "null" {
		if err := json.Unmarshal(res.Result, &r); err != nil {
			return atoll.Errorf(atoll.EINVALID, "The result is not a job result: %v", err)
		}
	}
	if len(r.Plan) > 0 && atoll.PlanSHA256(r.Plan) != strings.ToLower(res.PlanSHA256) {
		return atoll.Errorf(atoll.EINVALID, "The plan file's SHA-256 is not the one reported: the upload is refused.")
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return fmt.Errorf("encode result of job %d: %w", jobID, err)
	}
	if err := d.Store.FinishDispatch(context.WithoutCancel(ctx), jobID, hash(jobToken), raw); err != nil {
		return err
	}
	if w, err := d.waiter(jobID); err == nil {
		w.finished()
	}
	return nil
}

// UploadPack serves the job's repository to its worker's git.
func (d *Dispatcher) UploadPack(ctx context.Context, jobID int64, jobToken string, advertise bool, gitProtocol string, in io.Reader, out io.Writer) error {
	if _, err := d.held(ctx, jobID, jobToken); err != nil {
		return err
	}
	w, err := d.waiter(jobID)
	if err != nil {
		return err
	}
	if d.Mirrors == nil || d.ServeGit == nil {
		return atoll.Errorf(atoll.ENOTIMPLEMENTED, "This server does not serve repositories to workers.")
	}
	dir, err := d.Mirrors.Mirror(ctx, w.spec.Checkout)
	if err != nil {
		return err
	}
	return d.ServeGit(ctx, dir, advertise, gitProtocol, in, out)
}

// see records a worker seen by this node.
func (d *Dispatcher) see(tok *atoll.WorkerToken, name, version string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.seen == nil {
		d.seen = map[seenKey]*atoll.WorkerSeen{}
	}
	k := seenKey{tok.ID, name}
	s, ok := d.seen[k]
	if !ok {
		s = &atoll.WorkerSeen{Name: name, Pool: tok.Pool, TokenID: tok.ID}
		d.seen[k] = s
	}
	s.Version, s.SeenAt = version, time.Now().UTC()
}

// seeJob records the worker of a job call as seen.
func (d *Dispatcher) seeJob(disp *atoll.Dispatch) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.seen[seenKey{disp.TokenID, disp.Worker}]; ok {
		s.SeenAt = time.Now().UTC()
	} else {
		if d.seen == nil {
			d.seen = map[seenKey]*atoll.WorkerSeen{}
		}
		d.seen[seenKey{disp.TokenID, disp.Worker}] = &atoll.WorkerSeen{Name: disp.Worker, Pool: disp.Pool, TokenID: disp.TokenID, SeenAt: time.Now().UTC()}
	}
}

func (d *Dispatcher) polls(pool string, n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.polling == nil {
		d.polling = map[string]int{}
	}
	d.polling[pool] += n
}

// hasWorker reports whether a worker of pool is waiting for a job or was
// seen within a lease.
func (d *Dispatcher) hasWorker(pool string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.polling[pool] > 0 {
		return true
	}
	for _, s := range d.seen {
		if s.Pool == pool && time.Since(s.SeenAt) < d.lease() {
			return true
		}
	}
	return false
}

// The dashboard's side (atoll.WorkerAdmin).

// CreateWorkerToken makes a worker token of pool.
func (d *Dispatcher) CreateWorkerToken(ctx context.Context, name, pool, actor, source string) (*atoll.WorkerToken, string, error) {
	secret := newSecret("atw_")
	t, err := d.Store.CreateWorkerToken(ctx, name, pool, hash(secret), actor, source)
	if err != nil {
		return nil, "", err
	}
	return t, secret, nil
}

// RevokeWorkerToken revokes token id and wakes its workers' polls, which
// are then refused.
func (d *Dispatcher) RevokeWorkerToken(ctx context.Context, id int64, actor, source string) error {
	t, err := d.Store.RevokeWorkerToken(ctx, id, actor, source)
	if err != nil {
		return err
	}
	d.mu.Lock()
	for k := range d.seen {
		if k.token == id {
			delete(d.seen, k)
		}
	}
	d.mu.Unlock()
	d.notify(t.Pool)
	return nil
}

// Workers is the workers page.
func (d *Dispatcher) Workers(ctx context.Context) (*atoll.WorkerOverview, error) {
	tokens, err := d.Store.WorkerTokens(ctx)
	if err != nil {
		return nil, err
	}
	live, err := d.Store.Dispatches(ctx, atoll.DispatchQueued, atoll.DispatchClaimed)
	if err != nil {
		return nil, err
	}
	o := &atoll.WorkerOverview{Tokens: tokens, Queued: map[string]int{}}
	for pool, st := range d.Starters {
		if o.Kubernetes == nil {
			o.Kubernetes = map[string]string{}
		}
		o.Kubernetes[pool] = st.Where()
	}
	jobs := map[seenKey][]int64{}
	for _, disp := range live {
		if disp.State == atoll.DispatchQueued {
			o.Queued[disp.Pool]++
			continue
		}
		o.Running = append(o.Running, disp)
		k := seenKey{disp.TokenID, disp.Worker}
		jobs[k] = append(jobs[k], disp.JobID)
	}
	d.mu.Lock()
	for k, s := range d.seen {
		if time.Since(s.SeenAt) < 2*d.lease() || len(jobs[k]) > 0 {
			w := *s
			w.Jobs = jobs[k]
			o.Workers = append(o.Workers, w)
		}
	}
	d.mu.Unlock()
	slices.SortFunc(o.Workers, func(a, b atoll.WorkerSeen) int {
		return strings.Compare(a.Pool+"\x00"+a.Name, b.Pool+"\x00"+b.Name)
	})
	return o, nil
}
