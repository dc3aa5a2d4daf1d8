// Package worker is the `atoll worker` process: the client side of
// pull-based worker pools. A worker long-polls the control plane for jobs
// of its pool with its worker token, and runs each with the same
// in-process executor the server uses (runner.LocalExecutor), over its own
// Terraform and a checkout fetched from the control plane with the job's
// token. Its log lines, heartbeats, the apply's go-ahead and the result go
// back over HTTP (the /api/v1/workers routes; docs/workers.md).
//
// Nothing of the worker's own secrets reaches Terraform or git: the
// worker token lives in memory only, terraform.Runner drops every ATOLL_*
// variable, and git runs with a minimal environment plus the job token's
// header.
package worker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/tfinstall"
)

// Defaults of Config.
const (
	DefaultStopTimeout = 30 * time.Second
	// ClaimWait is how long a claim long-polls (the server caps it at 30 s).
	ClaimWait      = 30 * time.Second
	MaxConcurrency = 64
)

// Config is a worker's configuration (the flags of `atoll worker`).
type Config struct {
	Servers []string // control plane URLs, tried in turn
	Token   string   // the worker token's secret
	Pool    string
	Name    string // shown by the control plane; default the hostname
	// Concurrency is how many jobs run at once (1 to MaxConcurrency).
	Concurrency int
	// Once claims one job, runs and reports it, and returns.
	Once bool
	// DataDir holds the work dirs (DataDir/work), the Terraform versions
	// installed for jobs (DataDir/bin) and the provider cache.
	DataDir      string
	TerraformBin string // required: the command looks `terraform` up on PATH
	// StopTimeout is how long running jobs may continue once Run's
	// context ends before they are interrupted (0: DefaultStopTimeout).
	StopTimeout time.Duration
	Version     string // this build's, told at each claim
	Logger      *slog.Logger
	HTTP        *http.Client // nil: http.DefaultClient
	// RetryFor bounds the retries of a job call (0: JobRetryFor).
	RetryFor time.Duration
	// ClaimWait is how long a claim long-polls (0: ClaimWait).
	ClaimWait time.Duration
}

// Worker pulls jobs of its pool and runs them.
type Worker struct {
	cfg      Config
	client   *Client
	tf       *terraformSet
	workdirs *git.Workdirs
	dataDirs []string // DataDir as given and resolved, for redaction
}

// New checks cfg and makes the worker's directories.
func New(cfg Config) (*Worker, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name, _ = os.Hostname()
	}
	if cfg.StopTimeout <= 0 {
		cfg.StopTimeout = DefaultStopTimeout
	}
	if cfg.ClaimWait <= 0 {
		cfg.ClaimWait = ClaimWait
	}
	if cfg.Once {
		cfg.Concurrency = 1
	}
	dataDir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return nil, fmt.Errorf("data dir: %w", err)
	}
	cfg.DataDir = dataDir
	cache := filepath.Join(dataDir, "plugin-cache")
	for _, d := range []string{dataDir, cache} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("data dir: %w", err)
		}
	}
	w := &Worker{cfg: cfg, dataDirs: []string{dataDir}}
	if real, err := filepath.EvalSymlinks(dataDir); err == nil && real != dataDir {
		w.dataDirs = append(w.dataDirs, real)
	}
	w.client = &Client{Servers: cfg.Servers, HTTP: cfg.HTTP, Logger: cfg.Logger, RetryFor: cfg.RetryFor}
	w.tf = &terraformSet{
		runner:    terraform.Runner{Bin: cfg.TerraformBin, Env: []string{"TF_PLUGIN_CACHE_DIR=" + cache}},
		installer: &tfinstall.Installer{Dir: filepath.Join(dataDir, "bin"), Download: true},
	}
	// One Workdirs for every job: it merges only when the spec names a
	// base (BaseRef), so the merge strategy serves branch jobs too, and
	// two instances over one root would lease the same checkouts.
	w.workdirs = &git.Workdirs{Root: filepath.Join(dataDir, "work"), Strategy: git.StrategyMerge}
	return w, nil
}

func (c *Config) check() error {
	switch {
	case len(c.Servers) == 0:
		return errors.New("no server URL")
	case c.Token == "":
		return errors.New("no worker token")
	case c.Pool == "":
		return errors.New("no pool")
	case c.Concurrency < 1 || c.Concurrency > MaxConcurrency:
		return fmt.Errorf("concurrency %d: must be between 1 and %d", c.Concurrency, MaxConcurrency)
	case c.DataDir == "":
		return errors.New("no data dir")
	case c.TerraformBin == "":
		return errors.New("no terraform binary")
	}
	for _, s := range c.Servers {
		if !strings.HasPrefix(s, "http://") && !strings.HasPrefix(s, "https://") {
			return fmt.Errorf("server %q: not an http(s) URL", s)
		}
	}
	return nil
}

// Name is the worker's name as the control plane sees it.
func (w *Worker) Name() string { return w.cfg.Name }

// DataDir is the worker's data dir, absolute.
func (w *Worker) DataDir() string { return w.cfg.DataDir }

func (w *Worker) logger() *slog.Logger {
	if w.cfg.Logger != nil {
		return w.cfg.Logger
	}
	return slog.Default()
}

// redactPaths replaces the data dir in a message shown to users.
func (w *Worker) redactPaths(msg string) string {
	for _, d := range w.dataDirs {
		msg = strings.ReplaceAll(msg, d, "<work>")
	}
	return msg
}

// Run claims and runs jobs until ctx ends, then stops claiming and lets
// running jobs finish for up to StopTimeout before interrupting them. It
// returns an error when the control plane refuses the worker (its token,
// its pool, its protocol): a worker that cannot claim must not look alive.
// With Once it returns after the first job: nil once it is reported.
func (w *Worker) Run(ctx context.Context) error {
	exec, interrupt := context.WithCancelCause(context.WithoutCancel(ctx))
	defer interrupt(nil)
	// Reporting outlives the interruption a little: an interrupted job is
	// still reported.
	report, dropReports := context.WithCancel(context.WithoutCancel(ctx))
	defer dropReports()
	go func() {
		select {
		case <-ctx.Done():
		case <-exec.Done():
			return
		}
		w.logger().Info("worker stopping: no more claims; running jobs may finish", "timeout", w.cfg.StopTimeout)
		select {
		case <-time.After(w.cfg.StopTimeout):
			interrupt(errStopped)
		case <-exec.Done():
			return
		}
		select {
		case <-time.After(DefaultStopTimeout):
			dropReports()
		case <-report.Done():
		}
	}()

	claims, stopClaims := context.WithCancelCause(ctx)
	defer stopClaims(nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range w.cfg.Concurrency {
		wg.Go(func() {
			if err := w.slot(claims, exec, report); err != nil {
				mu.Lock()
				if firstErr == nil {
					firstErr = err
				}
				mu.Unlock()
				stopClaims(err)
			}
		})
	}
	wg.Wait()
	if errors.Is(firstErr, errOnceDone) {
		return nil
	}
	return firstErr
}

// errStopped interrupts the jobs still running when a stop's timeout ran
// out.
var errStopped = errors.New("the worker was stopped and its stop timeout ran out")

// errOnceDone ends the other slots' claims once a Once job is done.
var errOnceDone = errors.New("once: done")

// slot claims and runs one job at a time until claims ends. Its error is
// the worker's: a refusal, or a Once job that was not reported.
func (w *Worker) slot(claims, exec, report context.Context) error {
	hello := atoll.WorkerHello{Worker: w.cfg.Name, Pool: w.cfg.Pool, Version: w.cfg.Version, Protocol: atoll.WorkerProtocol}
	for claims.Err() == nil {
		a, err := w.client.Claim(claims, w.cfg.Token, hello, w.cfg.ClaimWait)
		if err != nil {
			if claims.Err() != nil {
				break
			}
			if fatal := refusal(err); fatal != nil {
				w.logger().Error(fatal.Error())
				return fatal
			}
			w.logger().Warn("claim failed: retrying", "err", err)
			sleep(claims, retryMax)
			continue
		}
		if a == nil {
			continue
		}
		err = w.runJob(exec, report, a)
		if w.cfg.Once {
			if err == nil {
				err = errOnceDone
			}
			return err
		}
	}
	if w.cfg.Once && !errors.Is(context.Cause(claims), errOnceDone) {
		return fmt.Errorf("stopped before a job was claimed: %w", context.Cause(claims))
	}
	return nil
}

// refusal is the worker's fatal error for a claim the control plane
// refused for good, nil for any other failure.
func refusal(err error) error {
	var se *StatusError
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Status {
	case http.StatusUnauthorized:
		return fmt.Errorf("the control plane refuses the worker token (unknown or revoked): %s", se.Message)
	case http.StatusForbidden:
		return fmt.Errorf("the worker token is not of this pool: %s", se.Message)
	case http.StatusBadRequest:
		return fmt.Errorf("the control plane refuses the claim: %s", se.Message)
	case http.StatusNotFound:
		return fmt.Errorf("the server has no worker routes (is it an Atoll server of this version?): %s", se.Message)
	}
	return nil
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
