package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
)

// Config is every flag of `atoll server`. Each flag is also read from the
// environment as ATOLL_<FLAG_IN_UPPER_SNAKE> when not given on the command
// line.
type Config struct {
	Port          int
	Addr          string
	DataDir       string
	WorkDir       string
	PublicURL     string
	LogLevel      string
	RepoAllowlist string
	AllowForkPRs  bool
	AllowDraftPRs bool
	// HidePrevPlanComments: --hide-prev-plan-comments.
	HidePrevPlanComments bool

	GHUser          string
	GHToken         string
	GHWebhookSecret string
	GHHostname      string
	GHAPIURL        string
	GHAppID         int64
	GHAppKeyFile    string
	GHChecks        bool

	TerraformBin     string
	DefaultTFVersion string
	ExecutableName   string
	CheckoutStrategy string
	Parallelism      int
	StopTimeout      time.Duration
	APISecret        string
	NodeID           string
	Demo             bool
	DemoVCS          string // --demo-vcs: the host the demo repository is named after
	// PlanApproval and ApprovalTTL: which plans need an approval in Atoll
	// before apply, and how long one lasts.
	PlanApproval string
	ApprovalTTL  time.Duration
	// ApprovalFourEyes: a plan's trigger cannot approve it either.
	ApprovalFourEyes bool

	Retention store.Retention // --retain-* (retention.go)

	authConfig      // --admin-password, --oidc-* (auth.go)
	azureConfig     // --azuredevops-* (azuredevops.go)
	repoConfig      // --repo-config, --repo-config-json (repoconfig.go)
	terraformConfig // --tf-bin-dir, --tf-download, --tf-distribution (terraform.go)

	commandsConfig // --allow-commands, --disable-apply, --disable-autoplan (commands.go)
	atlantisConfig // --automerge, --parallel-plan, --silence-*, ... (atlantisflags.go)

	githubExtrasConfig // --emoji-reaction, --gh-team-allowlist (githubextras.go)
	hookConfig         // --enable-regexp-cmd, --restrict-file-list (hookflags.go)
	policyConfig       // --enable-policy-checks, --conftest-bin (policy.go)
	miscConfig         // --autodiscover-mode (autodiscover.go)
	locksConfig        // --disable-repo-locking (locksflags.go)
	labelsConfig       // --disable-*-label, --silence-vcs-status-*, ... (labelsflags.go)
	fileListConfig     // --autoplan-file-list, --enable-diff-markdown-format (filelistflags.go)
	bypassConfig       // --gh-allow-mergeable-bypass-apply (bypassflags.go)
	ignoreStatusConfig // --ignore-vcs-status-names (ignorestatusflags.go)
	notifyConfig       // --webhooks-config, --slack-token, --webhook-http-headers (notifyflags.go)

	// The active/standby pair (ha.go).
	ReplicaURL   string
	AdvertiseURL string
	LeaseTTL     time.Duration
	// Keys of an S3 replica, apart from AWS_*: Terraform inherits AWS_*
	// variables, and a pull request must never reach the replica.
	ReplicaAccessKeyID     string
	ReplicaSecretAccessKey string

	// secretFiles holds --FLAG-file for each secret flag, by flag name.
	secretFiles map[string]*string
}

// secretFlags are read from files too (--FLAG-file, ATOLL_FLAG_FILE), so
// that secrets stay out of argv, where any local user can read them.
var secretFlags = []string{"gh-token", "gh-webhook-secret", "api-secret", "replica-secret-access-key", "admin-password", "oidc-client-secret",
	"azuredevops-token", "azuredevops-webhook-password", "azuredevops-client-secret", "slack-token", "webhook-http-headers"}

func (c *Config) flags(fs *flag.FlagSet) {
	fs.IntVar(&c.Port, "port", 4141, "HTTP port")
	fs.StringVar(&c.Addr, "addr", "", "listen address (host:port); overrides --port, e.g. 127.0.0.1:0")
	fs.StringVar(&c.DataDir, "data-dir", "./atoll-data", "directory for the database and disposable work dirs")
	fs.StringVar(&c.WorkDir, "work-dir", "", "directory for disposable git checkouts (default DATA_DIR/work); best on a different disk than the database")
	fs.StringVar(&c.PublicURL, "public-url", "", "URL users reach Atoll at, for links in comments and pages (default: the address Atoll prints at start, http://127.0.0.1:PORT when it listens on every interface)")
	fs.StringVar(&c.LogLevel, "log-level", "info", "debug, info, warn or error")
	fs.StringVar(&c.RepoAllowlist, "repo-allowlist", "", "comma-separated globs of host/owner/repo Atoll accepts webhooks for (required unless --demo)")
	fs.BoolVar(&c.AllowForkPRs, "allow-fork-prs", false, "plan and apply pull requests whose head branch is in a fork")
	fs.BoolVar(&c.HidePrevPlanComments, "hide-prev-plan-comments", false, "hide a pull request's earlier plan comments when a new plan is posted (GitHub: minimized as outdated; Azure DevOps: thread closed); always on with --demo")
	fs.BoolVar(&c.AllowDraftPRs, "allow-draft-prs", false, "autoplan draft pull requests (a plan comment on a draft always plans)")
	fs.StringVar(&c.GHUser, "gh-user", "", "GitHub user Atoll comments as (also makes @user a command prefix)")
	fs.StringVar(&c.GHToken, "gh-token", "", "GitHub token")
	fs.StringVar(&c.GHWebhookSecret, "gh-webhook-secret", "", "secret GitHub signs webhooks with (X-Hub-Signature-256)")
	fs.StringVar(&c.GHHostname, "gh-hostname", "github.com", "GitHub host (GitHub Enterprise)")
	fs.StringVar(&c.GHAPIURL, "gh-api-url", "", "full GitHub REST base URL; overrides --gh-hostname")
	fs.Int64Var(&c.GHAppID, "gh-app-id", 0, "GitHub App id (instead of --gh-token)")
	fs.StringVar(&c.GHAppKeyFile, "gh-app-key-file", "", "GitHub App private key file")
	fs.BoolVar(&c.GHChecks, "gh-checks", false, "report through GitHub check runs instead of commit statuses (needs --gh-app-id)")
	fs.StringVar(&c.TerraformBin, "terraform-bin", "terraform", "Terraform binary")
	fs.StringVar(&c.DefaultTFVersion, "default-tf-version", "", "Terraform version (or constraint) of projects without terraform_version: selected from --tf-bin-dir (or --terraform-bin), downloaded at start when missing (default: --terraform-bin, whatever its version)")
	fs.StringVar(&c.ExecutableName, "executable-name", "atlantis", "comment prefix; \"atoll\" is always accepted too")
	fs.StringVar(&c.CheckoutStrategy, "checkout-strategy", "branch", "branch or merge")
	fs.IntVar(&c.Parallelism, "parallelism", 4, "requests worked on at once (and jobs per request when parallel_plan is on)")
	fs.DurationVar(&c.StopTimeout, "stop-timeout", 5*time.Minute, "how long a stopping server lets running jobs finish")
	fs.StringVar(&c.APISecret, "api-secret", "", "an admin API token named \"api-secret\" (X-Atlantis-Token or Authorization: Bearer), for Atlantis's API clients")
	fs.StringVar(&c.NodeID, "node-id", "", "this node's name (default FLY_MACHINE_ID or the hostname)")
	fs.StringVar(&c.PlanApproval, "plan-approval", "", "plans that must be approved in Atoll (dashboard or API) before apply: comma-separated *, a repository's full name (owner/repo, org/project/repo on Azure DevOps), or that followed by /PROJECT (name or dir), globs allowed (default with --demo: "+demo.PlanApproval+")")
	fs.DurationVar(&c.ApprovalTTL, "approval-ttl", atoll.DefaultApprovalTTL, "how long a plan approval lasts")
	fs.BoolVar(&c.ApprovalFourEyes, "approval-four-eyes", false, "four-eyes plan approval: whoever triggered a plan cannot approve it either (the pull request's author never can)")
	fs.StringVar(&c.DemoVCS, "demo-vcs", "", "with --demo, name the demo repository as this host would: azuredevops gives demo-org/demo-project/infra (still a local repository)")
	fs.BoolVar(&c.Demo, "demo", false, "run the self-contained demo (local repository, no credentials, 127.0.0.1 unless --addr)")
	authFlags(fs, &c.authConfig)
	azureFlags(fs, &c.azureConfig)
	repoConfigFlags(fs, &c.repoConfig)
	commandsFlags(fs, &c.commandsConfig)
	atlantisFlags(fs, &c.atlantisConfig)
	aliasFlags(fs)
	githubExtrasFlags(fs, &c.githubExtrasConfig)
	hookFlags(fs, &c.hookConfig)
	policyFlags(fs, &c.policyConfig)
	miscFlags(fs, &c.miscConfig)
	locksFlags(fs, &c.locksConfig)
	labelsFlags(fs, &c.labelsConfig)
	fileListFlags(fs, &c.fileListConfig)
	bypassFlags(fs, &c.bypassConfig)
	ignoreStatusFlags(fs, &c.ignoreStatusConfig)
	notifyFlags(fs, &c.notifyConfig)
	terraformFlags(fs, &c.terraformConfig)
	c.secretFiles = map[string]*string{}
	for _, name := range secretFlags {
		c.secretFiles[name] = fs.String(name+"-file", "", "file holding --"+name+" (trailing newline trimmed)")
	}
	retentionFlags(fs, &c.Retention)
	haFlags(fs, c)
}

// Parse reads args, then the environment for flags not given, and checks
// the result. A command line the flag package rejects is a usageError.
func (c *Config) Parse(args []string, getenv func(string) string) error {
	fs := flag.NewFlagSet("atoll server", flag.ContinueOnError)
	c.flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected argument %q: flags only", fs.Arg(0))}
	}
	given, set := map[string]bool{}, map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, arg := range args {
		// The names the command line used: an alias sets its flag too, so
		// fs.Visit cannot tell them apart.
		if strings.HasPrefix(arg, "-") {
			name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
			set[name] = true
		}
	}
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		if v, env := envValue(f.Name, getenv); v != "" {
			set[f.Name] = true
			if serr := fs.Set(f.Name, v); serr != nil {
				err = fmt.Errorf("%s: %w", env, serr)
			}
		}
	})
	if err != nil {
		return err
	}
	if err := checkAliases(set); err != nil {
		return err
	}
	if err := c.readSecretFiles(fs); err != nil {
		return err
	}
	return c.validate(getenv)
}

// readSecretFiles sets each secret flag from its -file flag. Giving both
// (on the command line or in the environment) is an error.
func (c *Config) readSecretFiles(fs *flag.FlagSet) error {
	for _, name := range secretFlags {
		path := *c.secretFiles[name]
		if path == "" {
			continue
		}
		if fs.Lookup(name).Value.String() != "" {
			return fmt.Errorf("--%s and --%s-file are both set: use one", name, name)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--%s-file: %w", name, err)
		}
		v := strings.TrimRight(string(b), "\r\n")
		if v == "" {
			return fmt.Errorf("--%s-file: %s is empty", name, path)
		}
		if err := fs.Set(name, v); err != nil {
			return fmt.Errorf("--%s-file: %w", name, err)
		}
	}
	return nil
}

func (c *Config) validate(getenv func(string) string) error {
	if c.CheckoutStrategy != "branch" && c.CheckoutStrategy != "merge" {
		return fmt.Errorf("--checkout-strategy must be branch or merge, not %q", c.CheckoutStrategy)
	}
	if c.Parallelism < 1 || c.Parallelism > 256 {
		return fmt.Errorf("--parallelism must be between 1 and 256")
	}
	if c.Port < 0 || c.Port > 65535 {
		return fmt.Errorf("--port must be between 0 and 65535")
	}
	if c.ExecutableName == "" || strings.ContainsAny(c.ExecutableName, " \t\n") {
		return fmt.Errorf("--executable-name must be one word")
	}
	if err := validateRetention(c.Retention); err != nil {
		return err
	}
	if _, err := runner.ParseApprovalPolicy(c.PlanApproval); err != nil {
		return errors.New(atoll.ErrorMessage(err))
	}
	if c.ApprovalTTL <= 0 {
		return fmt.Errorf("--approval-ttl must be positive")
	}
	if err := c.authConfig.validate(); err != nil {
		return err
	}
	if err := c.azureConfig.validate(); err != nil {
		return err
	}
	if err := c.atlantisConfig.validate(); err != nil {
		return err
	}
	if err := c.notifyConfig.validate(); err != nil {
		return err
	}
	if !c.Demo && c.RepoAllowlist == "" {
		return fmt.Errorf("--repo-allowlist is required (e.g. github.com/myorg/*)")
	}
	if err := c.checkDemo(); err != nil {
		return err
	}
	if err := c.demoOptions().Check(); err != nil {
		return fmt.Errorf("--demo-vcs: %w", err)
	}
	if c.DemoVCS != "" && !c.Demo {
		return fmt.Errorf("--demo-vcs needs --demo")
	}
	if c.Demo && c.RepoAllowlist == "" {
		c.RepoAllowlist = c.demoOptions().Allowlist()
	}
	if (c.GHToken != "" || c.GHAppID != 0) && c.GHWebhookSecret == "" {
		return fmt.Errorf("--gh-webhook-secret is required with GitHub credentials: unsigned webhooks are refused")
	}
	if c.GHChecks && c.GHAppID == 0 {
		return fmt.Errorf("--gh-checks needs a GitHub App (--gh-app-id and --gh-app-key-file): GitHub accepts check runs only from an App installation, not from a token")
	}
	if c.NodeID == "" {
		c.NodeID = getenv("FLY_MACHINE_ID")
	}
	if c.NodeID == "" {
		c.NodeID, _ = os.Hostname()
	}
	return nil
}

// checkDemo refuses VCS credentials with --demo: the demo is for trying
// Atoll out, with a printed password, and must not act on real repositories.
func (c *Config) checkDemo() error {
	if c.Demo && (c.GHToken != "" || c.GHAppID != 0 || c.GHAppKeyFile != "" || c.GHAppKey != "" || c.GHWebhookSecret != "" || c.azureConfig.configured()) {
		return fmt.Errorf("--demo takes no VCS credentials (--gh-token, --gh-app-id, --gh-app-key-file, --gh-webhook-secret, --azuredevops-*)")
	}
	return nil
}

// demoOptions is what --demo seeds.
func (c *Config) demoOptions() demo.Options { return demo.Options{VCS: c.DemoVCS} }

// listenAddr is --addr, else --port on every interface, or on 127.0.0.1
// only for the demo: it is for trying Atoll out on this machine.
func (c *Config) listenAddr() string {
	if c.Addr != "" {
		return c.Addr
	}
	if c.Demo {
		return fmt.Sprintf("127.0.0.1:%d", c.Port)
	}
	return fmt.Sprintf(":%d", c.Port)
}
