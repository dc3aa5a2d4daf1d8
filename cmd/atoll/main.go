// Command atoll is the Atoll server. This package only reads flags and wires
// the packages together.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/gitcred"
	"github.com/atollhq/atoll/inmem"
	"github.com/atollhq/atoll/node"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/local"
	"github.com/atollhq/atoll/web"
)

// Version is set at build time with -ldflags "-X main.Version=...".
var Version = "dev"

func main() {
	os.Exit(exitCode(run(os.Args[1:], os.Stdout, os.Getenv), os.Stderr))
}

// usageError is a command line that does not parse. printed says the flag
// package has shown the problem and the usage already.
type usageError struct {
	err     error
	printed bool
}

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// exitCode reports err as one line "atoll: ..." and returns the exit code:
// 0 on success (and -h), 2 for a command line that does not parse (as the
// flag package does), 1 for every other error.
func exitCode(err error, stderr io.Writer) int {
	var usage usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &usage):
		if !usage.printed {
			fmt.Fprintln(stderr, "atoll:", oneLine(err.Error()))
		}
		return 2
	}
	fmt.Fprintln(stderr, "atoll:", oneLine(err.Error()))
	return 1
}

// oneLine joins a multi-line message (Terraform's or git's output) so that
// a start-up error stays one line.
func oneLine(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "; ")
}

const usageLine = "usage: atoll server [flags] | atoll worker --server URL --token-file FILE --pool NAME [flags] | atoll restore --replica-url URL --output PATH | atoll version | atoll git-credential get"

func run(args []string, stdout io.Writer, getenv func(string) string) error {
	if len(args) == 0 {
		return usageError{err: errors.New(usageLine)}
	}
	switch args[0] {
	case "version":
		fmt.Fprintln(stdout, "atoll", Version)
		return nil
	case "server":
		m := NewMain()
		if err := m.Config.Parse(args[1:], getenv); err != nil {
			return err
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		if err := m.Run(ctx); err != nil {
			m.Close()
			return err
		}
		fmt.Fprintf(stdout, "Atoll is running at %s\n", m.URL)
		select {
		case <-ctx.Done():
		case <-m.fenced():
			// Lost the lease: the work was killed and nothing more may be
			// written. Exit; the supervisor starts a fresh standby.
			m.Close()
			return fmt.Errorf("fenced: %w", m.Node.Err())
		}
		m.Logger.Info("shutting down: finishing running jobs", "timeout", m.Config.StopTimeout)
		return m.Close()
	case "restore":
		return restore(args[1:], stdout, getenv)
	case "worker":
		return workerMain(args[1:], os.Stderr, getenv)
	case "git-credential":
		// Run by git, inside Terraform's runs (see package gitcred).
		return gitcred.RunHelper(args[1:], os.Stdin, stdout, getenv)
	default:
		return usageError{err: fmt.Errorf("unknown command %q: %s", args[0], usageLine)}
	}
}

// listenURL is the URL of the bound address addr that Atoll prints: its
// own host, or 127.0.0.1 when it listens on every interface.
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// Main is one running server, as the command and end-to-end tests start it.
type Main struct {
	Config Config
	Logger *slog.Logger
	DB     *store.DB
	Runner *runner.Runner
	// Dispatcher hands the jobs of worker pools to `atoll worker`
	// processes and serves their protocol.
	Dispatcher *dispatch.Dispatcher
	Server     *web.Server
	// URL is where the server listens, as printed (http://127.0.0.1:PORT
	// when it listens on every interface), and the default --public-url.
	URL string

	// Node is this process's role when it shares a replica (--replica-url).
	Node *node.Node
	// Stderr receives the one-time admin password (default os.Stderr).
	Stderr io.Writer
	// Changes carries committed changes to the live pages.
	Changes *inmem.Changes
	// CredentialHelper is the atoll executable git runs as the credential
	// helper of Terraform's runs (default: this executable; tests, whose
	// executable is the test binary, point it at a built atoll).
	CredentialHelper string
	// Credentials serves the VCS hosts' git credentials to those helpers.
	Credentials *gitcred.Server

	serveErr   chan error
	stopPruner func()
}

// NewMain returns a Main with default configuration.
func NewMain() *Main {
	m := &Main{}
	m.Config.setDefaults()
	return m
}

// Run opens the database, starts the workers and the HTTP server, and
// returns once it accepts requests.
func (m *Main) Run(ctx context.Context) error {
	c := &m.Config
	if err := c.checkDemo(); err != nil {
		return err
	}
	if err := c.checkHA(); err != nil {
		return err
	}
	if c.Demo && c.RepoAllowlist == "" {
		c.RepoAllowlist = c.demoOptions().Allowlist()
	}
	if c.Demo && c.PlanApproval == "" {
		c.PlanApproval = c.demoOptions().PlanApproval()
	}
	if m.Logger == nil {
		m.Logger = newLogger(c.LogLevel)
	}
	// Parse has read them already; a Main started without Parse (tests,
	// embedding) reads them here.
	if err := c.notifyConfig.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(c.DataDir, 0o755); err != nil {
		return fmt.Errorf("data dir: %w", err)
	}
	dataDir, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	workDir := c.WorkDir
	if workDir == "" {
		workDir = filepath.Join(dataDir, "work")
	}
	if workDir, err = filepath.Abs(workDir); err != nil {
		return err
	}
	m.DB = store.NewDB(filepath.Join(dataDir, "atoll.db"))
	m.DB.DriftSlots = c.DriftParallelism
	m.Changes = inmem.NewChanges()
	m.DB.Changes = m.Changes
	// A node of a pair opens its database when it becomes the active one.
	if c.ReplicaURL == "" {
		if err := m.DB.Open(ctx); err != nil {
			return err
		}
	}
	providers, err := m.providers()
	if err != nil {
		return err
	}
	// A node of a pair says nothing outward past its lease deadline: every
	// VCS write and notification goes through this fence (the replica's
	// uploads have their own, on the same deadline).
	var fence *atoll.Fence
	if c.ReplicaURL != "" {
		fence = &atoll.Fence{Deadline: m.nodeDeadline}
		for kind, p := range providers {
			providers[kind] = vcs.Fence(p, fence, m.Logger)
		}
	}
	srv := &web.Server{DB: m.DB, Providers: providers, Hosts: webhookHosts, Logger: m.Logger, Version: Version, Node: c.NodeID,
		APISecret: c.APISecret, Demo: c.Demo, ApprovalTTL: c.ApprovalTTL, ApprovalFourEyes: c.ApprovalFourEyes, OIDC: c.oidc(), Changes: m.Changes,
		Now:       func() time.Time { return m.DB.Now() }, // read each time, as the store does
		Profiling: c.EnableProfilingAPI, DriftDetection: c.EnableDriftDetection, DriftRemediation: c.EnableDriftRemediation,
		// The server's one metrics registry; the runner records Atlantis's
		// metrics in it (newRunner).
		Metrics: web.NewMetrics()}
	if srv.TLS, err = c.tlsConfig(); err != nil {
		return err
	}
	if err := srv.Listen(c.listenAddr()); err != nil {
		return err
	}
	m.Server = srv
	_, port, _ := net.SplitHostPort(m.Server.Addr())
	m.URL = listenURL(m.Server.Addr())
	if srv.TLS != nil {
		m.URL = "https://" + strings.TrimPrefix(m.URL, "http://")
	}
	// Links in comments, statuses and pages point where the server says it
	// runs, unless told otherwise.
	publicURL := strings.TrimRight(c.PublicURL, "/")
	if publicURL == "" {
		publicURL = m.URL
	}
	m.Server.PublicURL = publicURL

	tfBin, err := exec.LookPath(c.TerraformBin)
	if err == nil {
		tfBin, err = filepath.Abs(tfBin)
	}
	if err != nil {
		// With --default-tf-version, projects need --terraform-bin only
		// when it is the version they ask for.
		if c.DefaultTFVersion == "" {
			m.Logger.Warn("terraform binary not found: plans will fail until it is installed", "terraform_bin", c.TerraformBin, "err", err)
		}
		tfBin = c.TerraformBin
	}
	if c.Demo {
		if _, err := demo.SeedWith(ctx, m.DB, dataDir, publicURL, c.demoOptions()); err != nil {
			return fmt.Errorf("demo: %w", err)
		}
	}
	if m.Credentials, err = m.credentialServer(dataDir); err != nil {
		return err
	}
	if m.Runner, err = m.newRunner(runnerDeps{dataDir: dataDir, workDir: workDir, tfBin: tfBin, publicURL: publicURL,
		providers: providers, fence: fence}); err != nil {
		return err
	}
	// The web server sees the runner only through the root interfaces.
	m.Server.Commands, m.Server.Unlocks, m.Server.Drift = m.Runner, m.Runner, m.Runner
	m.Server.Allowlist = m.Runner.Allowlist
	m.Dispatcher.Mirrors = m.Runner
	m.Dispatcher.Start(ctx)
	m.Server.Workers, m.Server.WorkerAdmin = m.Dispatcher, m.Dispatcher
	m.Server.Logs, m.Server.Approvals = m.Runner.Hub, m.Runner.PlanApproval
	if err := m.checkDefaultTerraform(ctx); err != nil {
		return err
	}
	if c.ReplicaURL != "" {
		if err := m.startNode(ctx, port); err != nil {
			return err
		}
	} else {
		// Last of the checks: the one-time password is printed only by a
		// server that starts.
		if err := m.bootstrapAdmin(ctx); err != nil {
			return err
		}
		if err := m.Runner.Start(ctx); err != nil {
			return err
		}
		m.startPruner()
	}
	m.serveErr = make(chan error, 1)
	go func() { m.serveErr <- m.Server.Serve() }()
	m.Logger.Info("atoll started", "url", m.URL, "public_url", publicURL, "node", c.NodeID, "demo", c.Demo, "data_dir", dataDir)
	return nil
}

// terraformEnv is what Atoll adds to Terraform's environment: a shared
// provider cache, and no CLI config file when the one named in the
// environment is missing (Terraform would print a warning into every plan).
func (m *Main) terraformEnv(dataDir string) []string {
	var env []string
	if m.Config.UseTFPluginCache {
		env = append(env, "TF_PLUGIN_CACHE_DIR="+pluginCache(dataDir))
	}
	if f := os.Getenv("TF_CLI_CONFIG_FILE"); f != "" {
		if _, err := os.Stat(f); err != nil {
			m.Logger.Warn("TF_CLI_CONFIG_FILE names a missing file: ignoring it", "file", f)
			env = append(env, "TF_CLI_CONFIG_FILE=")
		}
	}
	return env
}

func pluginCache(dataDir string) string {
	dir := filepath.Join(dataDir, "plugin-cache")
	os.MkdirAll(dir, 0o755)
	return dir
}

// webhookHosts are the hosts whose webhooks Atoll tells apart, in the order
// asked: GitHub's event header is the surer sign, so it goes first.
var webhookHosts = []vcs.Recognizer{github.Recognizer{}, azuredevops.Recognizer{}}

func (m *Main) providers() (map[string]vcs.Provider, error) {
	c := &m.Config
	providers := map[string]vcs.Provider{atoll.VCSLocal: &local.Provider{DB: m.DB}}
	if c.GHToken != "" || c.GHAppID != 0 {
		gh, err := github.New(github.Config{Hostname: c.GHHostname, APIURL: c.GHAPIURL, User: c.GHUser, Token: c.GHToken,
			WebhookSecret: c.GHWebhookSecret, AppID: c.GHAppID, AppKeyFile: c.GHAppKeyFile, AppKey: c.GHAppKey,
			Checks: c.GHChecks, AllowMergeableBypassApply: c.GHAllowMergeableBypassApply, StatusName: c.VCSStatusName,
			IgnoreStatusNames: splitList(c.IgnoreVCSStatusNames), Logger: m.Logger})
		if err != nil {
			return nil, fmt.Errorf("github: %w", err)
		}
		providers[atoll.VCSGitHub] = gh
	}
	if c.azureConfig.configured() {
		az, err := c.azureProvider(m.Logger, c.VCSStatusName)
		if err != nil {
			return nil, fmt.Errorf("azure devops: %w", err)
		}
		providers[atoll.VCSAzureDevOps] = az
	}
	return providers, nil
}

// Close stops taking requests, lets running jobs finish (up to the stop
// timeout) and closes the database.
func (m *Main) Close() error {
	var errs []error
	if m.Server != nil {
		// Also closes the listener of a server that never served (a
		// start-up error after Listen). A fenced node has nothing to finish.
		grace := 10 * time.Second
		if m.Node != nil && m.Node.Err() != nil {
			grace = 0
		}
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		errs = append(errs, m.Server.Shutdown(ctx))
		cancel()
	}
	if m.Node != nil {
		// Stops the work, closes the database and releases the lease.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		errs = append(errs, m.Node.Stop(ctx))
		cancel()
		if m.Credentials != nil {
			errs = append(errs, m.Credentials.Close())
		}
		return errors.Join(errs...)
	}
	if m.stopPruner != nil {
		m.stopPruner()
	}
	if m.Runner != nil {
		m.Runner.Stop()
	}
	if m.Credentials != nil {
		errs = append(errs, m.Credentials.Close())
	}
	if m.DB != nil {
		errs = append(errs, m.DB.Close())
	}
	return errors.Join(errs...)
}

// credentialServer serves the git credentials of Terraform's runs from a
// private directory of the data dir.
func (m *Main) credentialServer(dataDir string) (*gitcred.Server, error) {
	helper := m.CredentialHelper
	if helper == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("credential helper: %w", err)
		}
		helper = exe
	}
	return gitcred.Listen(filepath.Join(dataDir, "credentials"), []string{helper, "git-credential"}, m.Logger)
}

func (m *Main) stderr() io.Writer {
	if m.Stderr != nil {
		return m.Stderr
	}
	return os.Stderr
}

// nodeDeadline is the lease deadline of this node of a pair: the zero
// time until the node exists and whenever it is not the active one.
func (m *Main) nodeDeadline() time.Time {
	if m.Node == nil {
		return time.Time{}
	}
	return m.Node.Deadline()
}

// fenced is closed when this node lost its lease (never without a replica).
func (m *Main) fenced() <-chan struct{} {
	if m.Node == nil {
		return nil
	}
	return m.Node.Fenced()
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}
