package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/atollhq/atoll/worker"
)

// workerConfig is the flags of `atoll worker`: a process that pulls the
// jobs of one pool from the control plane and runs them (package worker).
type workerConfig struct {
	Servers      []string
	TokenFile    string
	Pool         string
	Concurrency  int
	Once         bool
	Name         string
	DataDir      string
	TerraformBin string
	StopTimeout  time.Duration
	LogLevel     string
}

// options is the table of `atoll worker`'s flags, in the docs' order. As
// the server's, each is also read from ATOLL_<FLAG>.
func (c *workerConfig) options() []option {
	return []option{
		opt("server", list(&c.Servers, nil, parseServers), "URL of the Atoll server (its public URL); a comma-separated list is tried in turn, e.g. both nodes of a pair"),
		opt("token-file", text(&c.TokenFile, ""), "file holding the worker token's secret (surrounding whitespace trimmed); required"),
		opt("pool", text(&c.Pool, ""), "the pool whose jobs this worker runs: the worker token's; required"),
		opt("concurrency", integer(&c.Concurrency, 1).checked(between("concurrency", 1, worker.MaxConcurrency)), "jobs run at once, 1 to 64"),
		opt("once", boolean(&c.Once, false), "claim one job, run and report it, then exit (0 once it is reported)"),
		opt("name", text(&c.Name, ""), "the worker's name on the workers page (default the hostname)"),
		opt("data-dir", text(&c.DataDir, ""), "where checkouts, Terraform versions and the provider cache are kept; one worker per directory (default a new directory under the OS temp dir, removed at exit)"),
		opt("terraform-bin", text(&c.TerraformBin, "terraform"), "Terraform binary of jobs that ask for no version or for its version; looked up on PATH"),
		opt("stop-timeout", duration(&c.StopTimeout, worker.DefaultStopTimeout), "on SIGTERM/SIGINT, how long running jobs may continue before they are interrupted (0: 30s)"),
		opt("log-level", text(&c.LogLevel, "info").checked(checkLogLevel), "debug, info, warn or error"),
	}
}

// parseServers reads --server: http(s) URLs without credentials.
func parseServers(s string) ([]string, error) {
	var out []string
	for _, raw := range strings.Split(s, ",") {
		raw = strings.TrimRight(strings.TrimSpace(raw), "/")
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("%q is not an http(s) URL without credentials", raw)
		}
		out = append(out, raw)
	}
	return out, nil
}

const workerUsage = "usage: atoll worker --server URL --token-file FILE --pool NAME [flags] (atoll worker -h lists them)"

// parse reads args, then ATOLL_<FLAG> for flags not given, and checks the
// result. A command line that does not parse, or lacks a required flag,
// is a usageError (exit 2).
func (c *workerConfig) parse(args []string, getenv func(string) string, stderr io.Writer) error {
	opts := c.options()
	fs := flag.NewFlagSet("atoll worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, o := range opts {
		o.value.reset()
		fs.Var(o.value, o.name, o.usage)
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage of atoll worker:\n")
		printUsage(fs.Output(), opts)
	}
	if err := parseArgs(fs, args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, o := range opts {
		if v := getenv(o.env); v != "" && !given[o.name] {
			if err := fs.Set(o.name, v); err != nil {
				return usageError{err: fmt.Errorf("%s: %w", o.env, err)}
			}
		}
	}
	for _, o := range opts {
		if err := o.value.check(); err != nil {
			return usageError{err: err}
		}
	}
	switch {
	case len(c.Servers) == 0:
		return usageError{err: errors.New("--server is required: " + workerUsage)}
	case c.TokenFile == "":
		return usageError{err: errors.New("--token-file is required: " + workerUsage)}
	case c.Pool == "":
		return usageError{err: errors.New("--pool is required: " + workerUsage)}
	case c.StopTimeout < 0:
		return usageError{err: errors.New("--stop-timeout must not be negative")}
	}
	return nil
}

// readToken reads the worker token's secret, once: it is kept in memory
// only, never in an environment, a log line or a file of the worker's.
func readToken(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--token-file: %w", err)
	}
	token := strings.TrimSpace(string(b))
	if token == "" {
		return "", fmt.Errorf("--token-file: %s is empty", path)
	}
	return token, nil
}

// workerMain is `atoll worker`.
func workerMain(args []string, stderr io.Writer, getenv func(string) string) error {
	var c workerConfig
	if err := c.parse(args, getenv, stderr); err != nil {
		return err
	}
	cfg, cleanup, err := c.workerConfig()
	if err != nil {
		return err
	}
	defer cleanup()
	w, err := worker.New(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg.Logger.Info("atoll worker started", "name", w.Name(), "pool", c.Pool, "servers", strings.Join(c.Servers, ","),
		"concurrency", cfg.Concurrency, "data_dir", w.DataDir(), "terraform_bin", cfg.TerraformBin)
	if err := w.Run(ctx); err != nil {
		return fmt.Errorf("worker: %w", err)
	}
	return nil
}

// workerConfig is the package's Config of the flags: the token read, the
// binary looked up, the data dir made. cleanup removes a data dir made
// under the temp dir.
func (c *workerConfig) workerConfig() (worker.Config, func(), error) {
	none := func() {}
	token, err := readToken(c.TokenFile)
	if err != nil {
		return worker.Config{}, none, err
	}
	bin, err := exec.LookPath(c.TerraformBin)
	if err != nil {
		return worker.Config{}, none, fmt.Errorf("--terraform-bin %s: %w", c.TerraformBin, err)
	}
	dataDir, cleanup := c.DataDir, none
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "atoll-worker-"); err != nil {
			return worker.Config{}, none, fmt.Errorf("--data-dir: %w", err)
		}
		cleanup = func() { os.RemoveAll(dataDir) }
	}
	return worker.Config{
		Servers: c.Servers, Token: token, Pool: c.Pool, Name: c.Name, Concurrency: c.Concurrency, Once: c.Once,
		DataDir: dataDir, TerraformBin: bin, StopTimeout: c.StopTimeout, Version: Version, Logger: newLogger(c.LogLevel),
	}, cleanup, nil
}
