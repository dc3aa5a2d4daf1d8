package terraform

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
)

// CommandError reports that a workflow's command exited unsuccessfully.
type CommandError struct {
	Code   int    // exit code, -1 when killed by a signal
	Stderr string // from CommandStdout: the last lines of standard error
}

func (e *CommandError) Error() string { return fmt.Sprintf("exit code %d", e.Code) }

// Command runs argv (a workflow's run, env or multienv command: a shell and
// its arguments) in dir the way terraform runs: in its own process group,
// recorded in Procs, SIGINT then SIGKILL on cancellation, with Environ()
// followed by extra. Each output line goes to emit (if not nil) as it
// arrives, and the combined output is returned (capped like Run's). The
// environment is never logged.
func (r Runner) Command(ctx context.Context, dir string, argv, extra []string, emit func(Line)) (output string, err error) {
	if len(argv) == 0 {
		return "", errors.New("command: empty")
	}
	c := newCollector(MaxOutput, emit)
	env := dedupEnv(append(r.Environ(), extra...))
	err = r.start(ctx, dir, argv[0], argv[1:], env, c.writer(streamStdout), c.writer(streamStderr))
	c.flush()
	return c.String(), commandErr(ctx, err)
}

// CommandStdout runs argv like Command and returns its standard output
// alone; stderr goes to emit.
func (r Runner) CommandStdout(ctx context.Context, dir string, argv, extra []string, emit func(Line)) (string, error) {
	if len(argv) == 0 {
		return "", errors.New("command: empty")
	}
	var stdout limitedBuffer
	stderr := newCollector(64<<10, emit)
	env := dedupEnv(append(r.Environ(), extra...))
	err := r.start(ctx, dir, argv[0], argv[1:], env, &stdout, stderr.writer(streamStderr))
	stderr.flush()
	err = commandErr(ctx, err)
	var ce *CommandError
	if errors.As(err, &ce) {
		ce.Stderr = stderr.stderrTail()
	}
	return stdout.String(), err
}

func commandErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("command interrupted: %w", context.Cause(ctx))
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return &CommandError{Code: ee.ExitCode()}
	}
	return fmt.Errorf("command: %w", err)
}
