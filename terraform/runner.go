// Package terraform runs the terraform CLI for plans and applies and reads
// its output: streamed log lines, plan summaries and `show -json`.
package terraform

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/atollhq/atoll/procs"
)

// DefaultGrace is how long a cancelled command gets to stop after SIGINT
// before its process group is killed. Terraform uses this time to release
// state locks and write partial state, so it is generous.
const DefaultGrace = 30 * time.Second

// Runner runs one terraform binary. The zero Grace means DefaultGrace.
type Runner struct {
	Bin   string        // path to terraform
	Env   []string      // extra KEY=VALUE pairs; they override inherited ones
	Grace time.Duration // time between SIGINT and SIGKILL on cancellation
	Nice  int           // scheduling niceness of terraform processes (0-19)
	// RunEnv is one run's settings, last of all: the git credential helper
	// a run is granted (package gitcred). It changes with every run, so it
	// is not an input of init (see runner's init fingerprint).
	RunEnv []string
	// Procs records terraform's process groups so that a later start can
	// kill what a crash left running. Nil records nothing.
	Procs *procs.Registry
}

// Line is one line of terraform output.
type Line struct {
	Stream string // atoll.StreamStdout or atoll.StreamStderr
	Text   string
}

// Run runs terraform with args in dir, passing each output line to emit (if
// not nil) as it arrives, one call at a time. It returns the combined
// output, capped at MaxOutput with a note where lines were dropped, and an
// *ExitError when terraform exits non-zero. When ctx is cancelled terraform
// gets SIGINT, then SIGKILL after the grace period, and the error wraps the
// context's error.
func (r Runner) Run(ctx context.Context, dir string, args []string, emit func(Line)) (string, error) {
	c := newCollector(MaxOutput, emit)
	err := r.execute(ctx, dir, args, c.writer(streamStdout), c.writer(streamStderr))
	c.flush()
	return c.String(), r.wrapErr(ctx, args, err, c.stderrTail())
}

// execute runs terraform to completion in its own process group so that a
// cancellation reaches terraform's children (providers, provisioners) too.
// The group's leader dies with the server (see package procs).
func (r Runner) execute(ctx context.Context, dir string, args []string, stdout, stderr io.Writer) error {
	if r.Bin == "" {
		return errors.New("terraform: no binary configured")
	}
	return r.start(ctx, dir, r.Bin, args, r.Environ(), stdout, stderr)
}

// start runs bin with args and env in dir as execute describes; run steps
// of workflows share it with terraform.
func (r Runner) start(ctx context.Context, dir, bin string, args, env []string, stdout, stderr io.Writer) error {
	grace := r.Grace
	if grace <= 0 {
		grace = DefaultGrace
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = stdout, stderr
	exited := make(chan struct{})
	defer close(exited)
	cmd.Cancel = func() error {
		pgid := cmd.Process.Pid
		// SIGINT lets terraform stop gracefully (and unlock its state).
		err := syscall.Kill(-pgid, syscall.SIGINT)
		go func() {
			t := time.NewTimer(grace)
			defer t.Stop()
			select {
			case <-exited:
			case <-t.C:
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}()
		if errors.Is(err, syscall.ESRCH) {
			return os.ErrProcessDone
		}
		return err
	}
	// Backstop: stop waiting for pipes held open by stray grandchildren.
	cmd.WaitDelay = grace + 5*time.Second
	release, err := r.Procs.Start(cmd)
	if err == nil {
		// Background work yields the CPU to the server's request handling,
		// so webhooks are answered promptly while plans run.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, r.Nice)
		err = cmd.Wait()
		// Terraform is gone; whatever is left in its group (a provisioner's
		// command started as terraform was interrupted, a backgrounded
		// process) is an orphan: release kills it and drops the record.
		release()
	}
	return err
}

// ExitError reports that terraform exited unsuccessfully.
type ExitError struct {
	Command string // e.g. "plan" or "workspace select"
	Code    int    // exit code, -1 when killed by a signal
	Stderr  string // the last lines terraform wrote to stderr
}

func (e *ExitError) Error() string {
	msg := fmt.Sprintf("terraform %s: exit code %d", e.Command, e.Code)
	if d := firstDiagnostic(e.Stderr); d != "" {
		msg += ": " + d
	}
	return msg
}

// firstDiagnostic picks the first "Error: ..." line, terraform's one-line
// description of what went wrong.
func firstDiagnostic(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(strings.TrimLeft(l, "│╷╵ "))
		if strings.HasPrefix(l, "Error: ") {
			return l
		}
	}
	return ""
}

func (r Runner) wrapErr(ctx context.Context, args []string, err error, stderr string) error {
	if err == nil {
		return nil
	}
	name := commandName(args)
	if ctx.Err() != nil {
		return fmt.Errorf("terraform %s interrupted: %w", name, context.Cause(ctx))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &ExitError{Command: name, Code: ee.ExitCode(), Stderr: stderr}
	}
	return fmt.Errorf("terraform %s: %w", name, err)
}

// commandName is the subcommand for messages: "plan", "workspace select".
func commandName(args []string) string {
	var words []string
	for _, a := range args {
		if strings.HasPrefix(a, "-") || len(words) == 2 {
			break
		}
		words = append(words, a)
	}
	if len(words) == 0 {
		return "(no command)"
	}
	if words[0] != "workspace" && words[0] != "state" && words[0] != "providers" {
		words = words[:1]
	}
	return strings.Join(words, " ")
}
