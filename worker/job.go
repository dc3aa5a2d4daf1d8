package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/executor"
	"github.com/atollhq/atoll/terraform"
)

// errAbandoned is the cause of a job's cancellation when its claim is no
// longer held: its result would be refused, so none is sent.
var errAbandoned = errors.New("the claim is no longer held")

// job is one claimed job as this worker runs it.
type job struct {
	w   *Worker
	a   *atoll.WorkerAssignment
	log *slog.Logger
	// ctx is the execution's: its end kills Terraform. report is the
	// calls' (logs, applying, result): it outlives a stop's interruption
	// of the execution, so that the interrupted job is still reported.
	ctx          context.Context
	cancel       context.CancelCauseFunc
	report       context.Context
	cancelReport context.CancelFunc
	abandoned    atomic.Bool
	reported     atomic.Bool // the result is stored: the claim ended
	logs         *logShipper
}

// runJob runs assignment a to its end and reports it. exec ends the
// execution (a stop's grace ran out); report ends the reporting. It
// returns nil once the result is stored.
func (w *Worker) runJob(exec, report context.Context, a *atoll.WorkerAssignment) error {
	j := &job{w: w, a: a, log: w.logger().With("job", a.JobID, "attempt", a.Attempt)}
	j.ctx, j.cancel = context.WithCancelCause(exec)
	j.report, j.cancelReport = context.WithCancel(report)
	defer j.cancel(nil)
	defer j.cancelReport()
	j.logs = newLogShipper(j.report, j.sendLogs)
	stopBeat := j.heartbeat()
	defer stopBeat()

	j.log.Info("job claimed")
	res, err := j.execute()
	if j.abandoned.Load() {
		return j.abandon()
	}
	return j.finish(res, err)
}

// abandon ends a job whose claim is no longer held, reporting nothing.
func (j *job) abandon() error {
	j.log.Warn("job abandoned: " + errAbandoned.Error())
	return errAbandoned
}

// execute decodes the spec, fetches an apply's plan and runs the job. A
// panic is the job's failure, not the end of the worker's other jobs.
func (j *job) execute() (res executor.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			j.log.Error("job panicked", "panic", r, "stack", string(debug.Stack()))
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	var spec executor.Spec
	if err := json.Unmarshal(j.a.Spec, &spec); err != nil {
		return executor.Result{}, fmt.Errorf("the job's spec does not parse: %w", err)
	}
	// An apply of a plan whose stage wrote no plan file has no SHA-256:
	// there is nothing to download (the server refused it already when
	// its apply stage has an apply step).
	if spec.Job.Kind == atoll.JobApply && j.a.PlanSHA256 != "" {
		plan, err := j.plan()
		if err != nil {
			return executor.Result{}, err
		}
		spec.Plan = plan
	}
	bin, err := j.w.tf.binary(j.ctx, spec.Terraform)
	if err != nil {
		return executor.Result{}, err
	}
	// The server's binary and credential helper mean nothing here.
	spec.Terraform.Bin, spec.Terraform.RunEnv = bin, nil
	checkouts := &jobCheckouts{workdirs: j.w.workdirs, client: j.w.client, jobID: j.a.JobID, jobToken: j.a.JobToken}
	defer checkouts.release()
	return j.w.tf.newExecutor(checkouts, j.log).Run(j.ctx, spec, jobEvents{j})
}

// plan downloads an apply's plan file and checks it is the one approved.
func (j *job) plan() ([]byte, error) {
	plan, err := j.w.client.Plan(j.report, j.a.JobID, j.a.JobToken)
	if err != nil {
		j.abandonOn(err)
		return nil, fmt.Errorf("downloading the plan file: %w", err)
	}
	if !strings.EqualFold(atoll.PlanSHA256(plan), j.a.PlanSHA256) {
		return nil, atoll.Errorf(atoll.EINTERNAL, "The plan file downloaded does not match its SHA-256: nothing was applied.")
	}
	return plan, nil
}

// finish sends the job's last lines, then its result.
func (j *job) finish(res executor.Result, runErr error) error {
	if err := j.logs.Flush(); err != nil {
		j.log.Warn("job's log lines not all sent", "err", err)
	}
	if j.abandoned.Load() {
		return j.abandon()
	}
	wr := atoll.WorkerResult{Error: j.userError(runErr)}
	var err error
	if wr.Result, err = json.Marshal(res); err != nil {
		return err
	}
	if len(res.Plan) > 0 {
		wr.PlanSHA256 = atoll.PlanSHA256(res.Plan)
	}
	if err := j.w.client.Result(j.report, j.a.JobID, j.a.JobToken, wr); err != nil {
		// The claim may have been found gone meanwhile (a heartbeat or a
		// batch of lines was told so): then nothing is to be reported.
		if j.abandonOn(err) || j.abandoned.Load() {
			return j.abandon()
		}
		j.log.Error("job's result not reported", "err", err)
		return fmt.Errorf("job %d: reporting its result: %w", j.a.JobID, err)
	}
	j.reported.Store(true)
	if runErr != nil {
		j.log.Info("job failed", "err", wr.Error.Message)
	} else {
		j.log.Info("job done")
	}
	return nil
}

// userError is the job's error as the user is shown it, with this
// machine's paths replaced: they mean nothing to users.
func (j *job) userError(err error) *atoll.Error {
	if err == nil {
		return nil
	}
	var ae *atoll.Error
	var exit *terraform.ExitError
	switch {
	case j.ctx != nil && errors.Is(context.Cause(j.ctx), errStopped):
		ae = atoll.Errorf(atoll.EINTERNAL, "Interrupted: worker %s was stopped and the job did not finish within its stop timeout.", j.w.cfg.Name)
	case errors.As(err, &ae):
		ae = &atoll.Error{Code: ae.Code, Message: ae.Message}
	case errors.As(err, &exit):
		ae = atoll.Errorf(atoll.EINVALID, "%s\n\n%s", exit.Error(), strings.TrimSpace(exit.Stderr))
	default:
		ae = atoll.Errorf(atoll.EINTERNAL, "Internal error on worker %s: %v", j.w.cfg.Name, err)
	}
	ae.Message = j.w.redactPaths(ae.Message)
	return ae
}

// abandonOn abandons the job when err says its claim is no longer held:
// 409, or 401 (the job token is unknown: the claim ended).
func (j *job) abandonOn(err error) bool {
	if !IsStatus(err, http.StatusConflict) && !IsStatus(err, http.StatusUnauthorized) {
		return false
	}
	if j.reported.Load() {
		return true // a heartbeat that crossed the result: the claim ended as it should
	}
	if !j.abandoned.Swap(true) {
		j.log.Warn("the control plane says the claim is no longer held: stopping the job", "err", err)
	}
	j.cancel(fmt.Errorf("%w: %v", errAbandoned, err))
	j.cancelReport()
	return true
}

func (j *job) sendLogs(ctx context.Context, lines []atoll.WorkerLogLine) error {
	err := j.w.client.Logs(ctx, j.a.JobID, j.a.JobToken, lines)
	j.abandonOn(err)
	return err
}

// heartbeat renews the claim every third of the lease until the returned
// function is called.
func (j *job) heartbeat() func() {
	lease := time.Duration(j.a.LeaseSeconds) * time.Second
	if lease <= 0 {
		lease = 30 * time.Second
	}
	ctx, stop := context.WithCancel(j.report)
	go func() {
		t := time.NewTicker(max(lease/3, 50*time.Millisecond))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if _, err := j.w.client.Heartbeat(ctx, j.a.JobID, j.a.JobToken, lease); err != nil && !j.abandonOn(err) && ctx.Err() == nil {
				j.log.Warn("heartbeat failed", "err", err)
			}
		}
	}()
	return stop
}

// jobEvents is what the executor tells the control plane while the job
// runs.
type jobEvents struct{ j *job }

func (e jobEvents) Write(stream, text string) { e.j.logs.Write(stream, text) }
func (e jobEvents) Flush() error              { return e.j.logs.Flush() }
func (e jobEvents) Waiting(context.Context, string) {
	// The job runs already: the control plane shows why a job waits.
}

// Applying asks the control plane whether the apply may start; its
// refusal is the job's failure, with its message.
func (e jobEvents) Applying(ctx context.Context) error {
	// The lines so far (init's) come before the apply's.
	_ = e.j.logs.Flush()
	// The execution's context: an apply interrupted by a stop never starts.
	err := e.j.w.client.Applying(ctx, e.j.a.JobID, e.j.a.JobToken)
	if err == nil || e.j.abandonOn(err) {
		return err
	}
	var se *StatusError
	if errors.As(err, &se) {
		return atoll.Errorf(statusCode(se.Status), "%s", se.Message)
	}
	return err
}

// statusCode is the atoll error code of an HTTP status.
func statusCode(status int) string {
	switch status {
	case http.StatusBadRequest:
		return atoll.EINVALID
	case http.StatusUnauthorized:
		return atoll.EUNAUTHORIZED
	case http.StatusForbidden:
		return atoll.EFORBIDDEN
	case http.StatusNotFound:
		return atoll.ENOTFOUND
	case http.StatusConflict:
		return atoll.ECONFLICT
	case http.StatusRequestEntityTooLarge:
		return atoll.ETOOLARGE
	case http.StatusServiceUnavailable:
		return atoll.EUNAVAILABLE
	}
	return atoll.EINTERNAL
}
