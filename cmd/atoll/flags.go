package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
	"github.com/atollhq/atoll/tfinstall"
	"github.com/atollhq/atoll/vcs/azuredevops"
	ghp "github.com/atollhq/atoll/vcs/github"
)

// This file is every flag of `atoll server`: one table, options, from which
// the flags are registered, read from the environment and from files,
// checked, and listed by -h.

// option is one flag of `atoll server`.
type option struct {
	name string // --name
	// env is the variable read when the command line does not give the
	// flag: ATOLL_<NAME IN UPPER SNAKE>, else Atlantis's ATLANTIS_<...>.
	env   string
	usage string
	// secret: also read from the file --NAME-file (ATOLL_<NAME>_FILE)
	// names, and never printed (no default in the usage, nor the value in
	// an error).
	secret bool
	// alias is Atlantis's name of the flag, accepted too (its environment
	// variables as well); giving both is an error.
	alias string
	// value is the typed binding to the field of Config the flag sets,
	// with its default, its parser and its check.
	value binding
}

// binding is an option's destination: a field of Config of some type T
// (see field), seen through the flag package's Value.
type binding interface {
	flag.Value
	IsBoolFlag() bool
	reset()              // sets the field to its default
	defaultText() string // the default as -h shows it; "" for none
	typeName() string    // what -h says the flag takes ("" for booleans)
	check() error        // checks the field's value, whoever set it
}

// field is a binding to a field of type T.
type field[T any] struct {
	p   *T
	def T
	// parse reads a flag's text. Its error is the flag package's "invalid
	// value" (exit 2, with the usage), or names the environment variable.
	parse  func(string) (T, error)
	format func(T) string
	// valid checks the value once every flag is read (default or set,
	// flag or alias): a start-up error, which names the flag.
	valid func(T) error
	// clone copies the default so that the field never shares it.
	clone  func(T) T
	kind   string
	isBool bool
}

func (f *field[T]) Set(s string) error {
	v, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.p = v
	return nil
}

func (f *field[T]) String() string {
	if f == nil || f.p == nil {
		return ""
	}
	return f.format(*f.p)
}

func (f *field[T]) IsBoolFlag() bool { return f.isBool }
func (f *field[T]) typeName() string { return f.kind }

func (f *field[T]) reset() {
	*f.p = f.def
	if f.clone != nil {
		*f.p = f.clone(f.def)
	}
}

// defaultText is the default as Go's flag package shows it: none for a
// zero value or a value parsed by a function ("value"), quoted for strings.
func (f *field[T]) defaultText() string {
	var zero T
	d := f.format(f.def)
	if f.kind == "value" || d == f.format(zero) {
		return ""
	}
	if f.kind == "string" {
		return strconv.Quote(d)
	}
	return d
}

func (f *field[T]) check() error {
	if f.valid == nil {
		return nil
	}
	return f.valid(*f.p)
}

// checked sets the field's check.
func (f *field[T]) checked(valid func(T) error) *field[T] {
	f.valid = valid
	return f
}

// The flag package's errors for values it cannot parse, so that messages
// stay what they were when flags were registered with it.
var (
	errParse = errors.New("parse error")
	errRange = errors.New("value out of range")
)

func numError(err error) error {
	if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
		return errRange
	}
	return errParse
}

func text(p *string, def string) *field[string] {
	return &field[string]{p: p, def: def, kind: "string",
		parse: func(s string) (string, error) { return s, nil }, format: func(s string) string { return s }}
}

func boolean(p *bool, def bool) *field[bool] {
	return &field[bool]{p: p, def: def, isBool: true, format: strconv.FormatBool,
		parse: func(s string) (bool, error) {
			v, err := strconv.ParseBool(s)
			if err != nil {
				return false, errParse
			}
			return v, nil
		}}
}

func integer(p *int, def int) *field[int] {
	return &field[int]{p: p, def: def, kind: "int", format: strconv.Itoa,
		parse: func(s string) (int, error) {
			v, err := strconv.ParseInt(s, 0, strconv.IntSize)
			if err != nil {
				return 0, numError(err)
			}
			return int(v), nil
		}}
}

func integer64(p *int64, def int64) *field[int64] {
	return &field[int64]{p: p, def: def, kind: "int", format: func(v int64) string { return strconv.FormatInt(v, 10) },
		parse: func(s string) (int64, error) {
			v, err := strconv.ParseInt(s, 0, 64)
			if err != nil {
				return 0, numError(err)
			}
			return v, nil
		}}
}

func duration(p *time.Duration, def time.Duration) *field[time.Duration] {
	return &field[time.Duration]{p: p, def: def, kind: "duration", format: time.Duration.String,
		parse: func(s string) (time.Duration, error) {
			v, err := time.ParseDuration(s)
			if err != nil {
				return 0, errParse
			}
			return v, nil
		}}
}

// parsed is a string whose text parse checks (and may rewrite) as it is
// read: a bad value is the flag package's error.
func parsed(p *string, parse func(string) (string, error)) *field[string] {
	return &field[string]{p: p, kind: "value", parse: parse, format: func(s string) string { return s }}
}

// list is a comma-separated list, read by parse.
func list(p *[]string, def []string, parse func(string) ([]string, error)) *field[[]string] {
	return &field[[]string]{p: p, def: def, kind: "value", parse: parse, clone: slices.Clone[[]string],
		format: func(v []string) string { return strings.Join(v, ",") }}
}

// envName is the ATOLL_ variable of a flag (ATLANTIS_ is read too).
func envName(flagName string) string {
	return "ATOLL_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// envValue is a flag's value from the environment: ATOLL_<FLAG>, else
// Atlantis's ATLANTIS_<FLAG>, so that an Atlantis deployment's environment
// carries over. It names the variable it read.
func envValue(name string, getenv func(string) string) (value, from string) {
	atollName := envName(name)
	for _, env := range []string{atollName, "ATLANTIS_" + strings.TrimPrefix(atollName, "ATOLL_")} {
		if v := getenv(env); v != "" {
			return v, env
		}
	}
	return "", ""
}

// opt is an entry of the table.
func opt(name string, value binding, usage string) option {
	return option{name: name, env: envName(name), usage: usage, value: value}
}

// secret is an entry of a secret flag.
func secret(name string, value binding, usage string) option {
	o := opt(name, value, usage)
	o.secret = true
	return o
}

// aliased is an entry Atlantis names alias.
func aliased(alias, name string, value binding, usage string) option {
	o := opt(name, value, usage)
	o.alias = alias
	return o
}

// between checks that an int is within [lo, hi].
func between(name string, lo, hi int) func(int) error {
	return func(v int) error {
		if v < lo || v > hi {
			return fmt.Errorf("--%s must be between %d and %d", name, lo, hi)
		}
		return nil
	}
}

// retention is a --retain-* window: 0 keeps forever.
func retention(name string, p *time.Duration, def time.Duration, usage string) option {
	return opt(name, duration(p, def).checked(func(d time.Duration) error {
		if d < 0 {
			return fmt.Errorf("--%s must not be negative (0 keeps forever)", name)
		}
		return nil
	}), usage)
}

// options is the table: every flag of `atoll server`, bound to c's
// fields. The order is the docs' (docs/configuration.md); -h sorts.
func (c *Config) options() []option {
	ret := store.DefaultRetention
	return []option{
		// Server.
		opt("port", integer(&c.Port, 4141).checked(between("port", 0, 65535)), "HTTP port"),
		opt("addr", text(&c.Addr, ""), "listen address (host:port); overrides --port, e.g. 127.0.0.1:0"),
		opt("data-dir", text(&c.DataDir, "./atoll-data"), "directory for the database and disposable work dirs"),
		opt("work-dir", text(&c.WorkDir, ""), "directory for disposable git checkouts (default DATA_DIR/work); best on a different disk than the database"),
		aliased("atlantis-url", "public-url", text(&c.PublicURL, ""), "URL users reach Atoll at, for links in comments and pages (default: the address Atoll prints at start, http://127.0.0.1:PORT when it listens on every interface)"),
		opt("ssl-cert-file", text(&c.SSLCertFile, ""), "serve https with this PEM certificate (chain first to last); read again when it changes"),
		opt("ssl-key-file", text(&c.SSLKeyFile, ""), "the PEM private key of --ssl-cert-file"),
		opt("enable-profiling-api", boolean(&c.EnableProfilingAPI, false), "serve net/http/pprof under /debug/pprof/ to admins"),
		opt("enable-drift-detection", boolean(&c.EnableDriftDetection, false), "serve Atlantis's drift API: /api/drift/status and /api/drift/detect, and plan-only /api/drift/remediate (API token or --api-secret)"),
		opt("enable-drift-remediation", boolean(&c.EnableDriftRemediation, false), "accept action apply on /api/drift/remediate (needs --enable-drift-detection)"),
		opt("drift-parallelism", integer(&c.DriftParallelism, 1).checked(func(n int) error {
			if n < 1 {
				return fmt.Errorf("--drift-parallelism must be at least 1")
			}
			return nil
		}), "drift checks run at once at most (pull requests' work always goes first)"),
		opt("drift-tick", duration(&c.DriftTick, 10*time.Second).checked(func(d time.Duration) error {
			if d < time.Second {
				return errors.New("--drift-tick must be at least 1s")
			}
			return nil
		}), "how often the active node looks for due drift checks of the server-side repo config's drift_detection schedules (for tests; the default suits every schedule)"),
		opt("log-level", text(&c.LogLevel, "info").checked(checkLogLevel), "debug, info, warn or error"),
		opt("demo-vcs", text(&c.DemoVCS, ""), "with --demo, name the demo repository as this host would: azuredevops gives demo-org/demo-project/infra (still a local repository)"),
		opt("node-id", text(&c.NodeID, ""), "this node's name (default FLY_MACHINE_ID or the hostname)"),
		opt("demo", boolean(&c.Demo, false), "run the self-contained demo (local repository, no credentials, 127.0.0.1 unless --addr)"),

		// Who Atoll serves.
		opt("repo-allowlist", text(&c.RepoAllowlist, ""), "comma-separated globs of host/owner/repo Atoll accepts webhooks for (required unless --demo)"),
		opt("allow-fork-prs", boolean(&c.AllowForkPRs, false), "plan and apply pull requests whose head branch is in a fork"),
		opt("hide-prev-plan-comments", boolean(&c.HidePrevPlanComments, false), "hide a pull request's earlier plan comments when a new plan is posted (GitHub: minimized as outdated; Azure DevOps: thread closed); always on with --demo"),
		opt("allow-draft-prs", boolean(&c.AllowDraftPRs, false), "autoplan draft pull requests (a plan comment on a draft always plans)"),
		opt("autodiscover-mode", parsed(&c.AutodiscoverMode, func(s string) (string, error) {
			if !slices.Contains(repocfg.AutodiscoverModes, s) {
				return "", fmt.Errorf("%q is not one of %s", s, strings.Join(repocfg.AutodiscoverModes, ", "))
			}
			return s, nil
		}), "project autodiscovery when neither the server-side repo config nor atlantis.yaml sets autodiscover: "+
			strings.Join(repocfg.AutodiscoverModes, ", ")+" (default auto)"),
		opt("autoplan-file-list", parsed(&c.AutoplanFileList, func(s string) (string, error) {
			_, err := repocfg.ParseAutoplanFileList(s)
			return s, err
		}), "comma-separated doublestar globs over repo-relative paths: a changed file matching one autoplans its directory when autodiscovered (default: *.tf, *.tf.json, *.tofu, *.tofu.json, *.tfvars, *.tfvars.json anywhere); when_modified of listed projects is unaffected"),
		opt("executable-name", text(&c.ExecutableName, "atlantis").checked(func(s string) error {
			if s == "" || strings.ContainsAny(s, " \t\n") {
				return fmt.Errorf("--executable-name must be one word")
			}
			return nil
		}), "comment prefix; \"atoll\" is always accepted too"),
		secret("api-secret", text(&c.APISecret, ""), "an admin API token named \"api-secret\" (X-Atlantis-Token or Authorization: Bearer), for Atlantis's API clients"),
		opt("allow-commands", list(&c.AllowCommands, command.DefaultAllowCommands, parseAllowCommands),
			"comma-separated comment commands users may run: "+strings.Join(command.AllCommands, ", ")+
				", or all (default "+strings.Join(command.DefaultAllowCommands, ",")+"; help is always allowed)"),
		opt("disable-apply", boolean(&c.DisableApply, false), "refuse apply comments, whatever --allow-commands says"),
		opt("disable-autoplan", boolean(&c.DisableAutoplan, false), "do not plan when a pull request is opened or updated; plan comments still plan"),
		opt("disable-apply-all", boolean(&c.DisableApplyAll, false), "refuse an apply comment that names no project, directory or workspace"),
		opt("blocked-extra-args", list(&c.BlockedExtraArgs, nil, func(v string) ([]string, error) {
			args := splitList(v)
			for _, f := range args {
				if !strings.HasPrefix(f, "-") || strings.Trim(f, "-") == "" {
					return nil, fmt.Errorf("%q is not a terraform flag (it starts with -)", f)
				}
			}
			return args, nil
		}), "comma-separated terraform flag prefixes comments may not pass after --, next to -chdir and -plugin-dir (always blocked)"),
		opt("var-file-allowlist", list(&c.VarFileAllowlist, nil, func(v string) ([]string, error) {
			dirs := splitList(v)
			for i, d := range dirs {
				abs, err := filepath.Abs(d)
				if err != nil {
					return nil, err
				}
				dirs[i] = abs
			}
			return dirs, nil
		}), "comma-separated directories (made absolute) whose files comments may pass to -var-file, next to files inside the repository"),
		opt("enable-regexp-cmd", boolean(&c.EnableRegexpCmd, false), "read a comment's -p/--project as a regular expression over the names of atlantis.yaml's projects (whole names; allowed_regexp_prefixes limits those selecting several)"),
		opt("restrict-file-list", boolean(&c.RestrictFileList, false), "refuse a plan comment whose -d names a directory without modified files, or whose -p leaves modified files outside the projects it names"),

		// Sign-in.
		secret("admin-password", text(&c.AdminPassword, "").checked(func(s string) error {
			if s != "" && (len(s) < 8 || len(s) > 72) {
				return fmt.Errorf("--admin-password must be 8 to 72 bytes long")
			}
			return nil
		}), "password of the local account \"admin\" (role admin), created or updated at start; without it and without a local admin, a one-time password is printed"),
		opt("oidc-issuer", text(&c.OIDCIssuer, ""), "OpenID Connect issuer URL: adds \"Sign in with your identity provider\" (callback PUBLIC_URL/auth/oidc/callback)"),
		opt("oidc-client-id", text(&c.OIDCClientID, ""), "OIDC client id"),
		secret("oidc-client-secret", text(&c.OIDCClientSecret, ""), "OIDC client secret"),
		opt("oidc-admin-users", text(&c.OIDCAdminUsers, ""), "comma-separated emails (verified by the provider) or subjects of OIDC users who are admins"),
		opt("oidc-operator-users", text(&c.OIDCOperatorUsers, ""), "comma-separated emails or subjects of OIDC users who are operators (others are viewers)"),
		opt("oidc-vcs-login-claim", text(&c.OIDCVCSLoginClaim, ""), "ID token claim (a string or a list) whose values are added to the OIDC user's VCS logins at each sign-in, e.g. preferred_username"),

		// GitHub.
		opt("gh-user", text(&c.GHUser, ""), "GitHub user Atoll comments as (also makes @user a command prefix)"),
		secret("gh-token", text(&c.GHToken, ""), "GitHub token"),
		secret("gh-webhook-secret", text(&c.GHWebhookSecret, ""), "secret GitHub signs webhooks with (X-Hub-Signature-256)"),
		opt("gh-hostname", text(&c.GHHostname, "github.com"), "GitHub host (GitHub Enterprise)"),
		opt("gh-api-url", text(&c.GHAPIURL, ""), "full GitHub REST base URL; overrides --gh-hostname"),
		opt("gh-app-id", integer64(&c.GHAppID, 0), "GitHub App id (instead of --gh-token)"),
		opt("gh-app-key-file", text(&c.GHAppKeyFile, ""), "GitHub App private key file"),
		opt("gh-app-key", text(&c.GHAppKey, ""), "the GitHub App's PEM private key itself, instead of --gh-app-key-file (best from the environment: ATOLL_GH_APP_KEY or ATLANTIS_GH_APP_KEY)"),
		opt("gh-checks", boolean(&c.GHChecks, false), "report through GitHub check runs instead of commit statuses (needs --gh-app-id)"),
		opt("gh-allow-mergeable-bypass-apply", boolean(&c.GHAllowMergeableBypassApply, false),
			"GitHub: count a blocked pull request mergeable when reviews are settled and only the <vcs-status-name>/apply checks among the required checks have not passed (reads branch protection and rulesets)"),
		opt("ignore-vcs-status-names", text(&c.IgnoreVCSStatusNames, ""),
			"comma-separated status names of other Atlantis-like servers; with --gh-allow-mergeable-bypass-apply their required checks (NAME, NAME/...) do not block (GitHub only)"),
		opt("emoji-reaction", parsed(&c.EmojiReaction, func(s string) (string, error) {
			s = strings.TrimSpace(s)
			if s != "" && !slices.Contains(ghp.Reactions, s) {
				return "", fmt.Errorf("unknown GitHub reaction %q: use one of %s", s, strings.Join(ghp.Reactions, ", "))
			}
			return s, nil
		}), "react to each command comment Atoll accepts with this GitHub reaction: "+strings.Join(ghp.Reactions, ", ")+
			" (default none; Azure DevOps comments get none)"),
		opt("gh-team-allowlist", &field[runner.TeamAllowlist]{p: &c.GHTeamAllowlist, kind: "value", parse: runner.ParseTeamAllowlist, format: formatTeamAllowlist},
			"comma-separated TEAM:COMMAND pairs: only members of TEAM (a team slug of the repository's GitHub organization, or *) may run COMMAND (a comment command, or *) "+
				"by commenting on GitHub pull requests, e.g. dev:plan,ops:apply,devops:* (default *:*, no check)"),

		// Azure DevOps.
		opt("azuredevops-hostname", text(&c.AzureHostname, azuredevops.DefaultHostname), "Azure DevOps host: dev.azure.com, or an Azure DevOps Server host with its virtual directory (tfs.example.com/tfs); https unless a scheme is given"),
		opt("azuredevops-notification-url", text(&c.AzureNotificationURL, ""), "Azure DevOps Server only: the public (notification) URL the server writes into service hook payloads, when it differs from --azuredevops-hostname (http://tfs01:8080/tfs); comma-separated for several. Payload URLs on it are read as URLs on --azuredevops-hostname, which is still the only host Atoll calls"),
		opt("azuredevops-user", text(&c.AzureUser, ""), "Azure DevOps account Atoll comments as (its unique name): its threads are the ones closed when earlier plans are hidden"),
		secret("azuredevops-token", text(&c.AzureToken, ""), "Azure DevOps personal access token (Code: read & write, Code status; or use a service principal)"),
		opt("azuredevops-webhook-user", text(&c.AzureWebhookUser, ""), "user name Azure DevOps service hooks send (basic auth)"),
		secret("azuredevops-webhook-password", text(&c.AzureWebhookPassword, ""), "password Azure DevOps service hooks send (basic auth)"),
		opt("azuredevops-tenant-id", text(&c.AzureTenantID, ""), "Microsoft Entra ID tenant of the service principal (with --azuredevops-client-id and --azuredevops-client-secret), or of an AKS workload identity (default AZURE_TENANT_ID)"),
		opt("azuredevops-client-id", text(&c.AzureClientID, ""), "client (application) id of the service principal, or of a user-assigned managed identity"),
		secret("azuredevops-client-secret", text(&c.AzureClientSecret, ""), "client secret of the service principal"),
		opt("azuredevops-managed-identity", boolean(&c.AzureManagedIdentity, false), "authenticate as the Azure managed identity where Atoll runs: AKS workload identity, App Service or Container Apps, else the VM's (IMDS); --azuredevops-client-id picks a user-assigned one"),
		opt("azuredevops-authority-url", text(&c.AzureAuthorityURL, ""), "Microsoft Entra ID authority (default https://login.microsoftonline.com; sovereign clouds differ)"),
		opt("azuredevops-imds-url", text(&c.AzureIMDSURL, ""), "IMDS token endpoint of a VM's managed identity; when set, IMDS is used whatever the environment says (default: Azure's IMDS)"),

		// Terraform and workers.
		opt("terraform-bin", text(&c.TerraformBin, "terraform"), "Terraform binary"),
		opt("checkout-strategy", text(&c.CheckoutStrategy, "branch").checked(func(s string) error {
			if s != "branch" && s != "merge" {
				return fmt.Errorf("--checkout-strategy must be branch or merge, not %q", s)
			}
			return nil
		}), "branch or merge"),
		aliased("parallel-pool-size", "parallelism", integer(&c.Parallelism, 4).checked(between("parallelism", 1, 256)), "requests worked on at once (and jobs per request when parallel_plan is on)"),
		opt("stop-timeout", duration(&c.StopTimeout, 5*time.Minute), "how long a stopping server lets running jobs finish"),
		opt("use-tf-plugin-cache", boolean(&c.UseTFPluginCache, true), "share downloaded providers between runs in DATA_DIR/plugin-cache (TF_PLUGIN_CACHE_DIR)"),
		opt("disable-repo-locking", boolean(&c.DisableRepoLocking, false),
			"take and check no project locks for any repository, as repo_locks mode disabled: two pull requests can then apply the same project"),

		// Atlantis's repository defaults and messages.
		opt("automerge", boolean(&c.Automerge, false), "merge a pull request once all its plans are applied, unless its atlantis.yaml sets automerge"),
		opt("automerge-method", text(&c.AutomergeMethod, "").checked(func(s string) error {
			switch s {
			case "", "merge", "rebase", "squash":
				return nil
			}
			return fmt.Errorf("--automerge-method must be merge, rebase or squash, not %q", s)
		}), "how automerge merges unless the apply comment says --auto-merge-method: merge, rebase or squash (default merge)"),
		opt("parallel-plan", boolean(&c.ParallelPlan, false), "plan a request's projects in parallel, unless atlantis.yaml sets parallel_plan"),
		opt("parallel-apply", boolean(&c.ParallelApply, false), "apply a request's projects in parallel, unless atlantis.yaml sets parallel_apply"),
		opt("discard-approval-on-plan", boolean(&c.DiscardApprovalOnPlan, false), "dismiss a pull request's approvals (GitHub reviews) before a plan comment's plans run"),
		opt("fail-on-pre-workflow-hook-error", boolean(&c.FailOnPreWorkflowHookError, false), "do not run a command when one of its pre workflow hooks fails (default: comment the failure and go on)"),
		opt("silence-fork-pr-errors", boolean(&c.SilenceForkPRErrors, false), "do not comment on pull requests from forks that are refused (without --allow-fork-prs)"),
		opt("silence-no-projects", boolean(&c.SilenceNoProjects, false), "do not comment when a plan comment finds no projects"),
		opt("vcs-status-name", text(&c.VCSStatusName, runner.DefaultStatusName).checked(func(s string) error {
			if s == "" || strings.ContainsAny(s, "/:\n\r") {
				return fmt.Errorf("--vcs-status-name must be a non-empty name without '/' or ':' (they separate the command and the project)")
			}
			return nil
		}), "prefix of commit status and check run names (atlantis/plan, ...); branch protection rules name them"),
		opt("disable-autoplan-label", text(&c.DisableAutoplanLabel, ""), "do not autoplan pull requests with this label (a plan comment still plans)"),
		opt("disable-unlock-label", text(&c.DisableUnlockLabel, ""), "refuse the unlock comment on pull requests with this label (the dashboard's unlock is governed by roles, not labels)"),
		opt("disable-automerge-label", text(&c.DisableAutomergeLabel, ""), "do not automerge pull requests with this label"),
		opt("silence-vcs-status-no-plans", boolean(&c.SilenceVCSStatusNoPlans, false), "set no commit status when autoplan finds no projects (default: 0/0 successes)"),
		opt("silence-vcs-status-no-projects", boolean(&c.SilenceVCSStatusNoProjects, false), "set no commit status when autoplan finds no projects, nor when a plan comment does and --silence-no-projects is set"),
		opt("hide-unchanged-plan-comments", boolean(&c.HideUnchangedPlanComments, false), "leave plans without changes out of plan comments about several projects"),
		opt("disable-markdown-folding", boolean(&c.DisableMarkdownFolding, false), "show Terraform's output in comments unfolded (no <details>)"),
		opt("enable-diff-markdown-format", boolean(&c.EnableDiffMarkdownFormat, true), "move Terraform's change markers (+, -, ~) to the start of plan output lines so GitHub colours them; =false shows the output as printed"),

		// Plan approval.
		opt("plan-approval", text(&c.PlanApproval, "").checked(func(s string) error {
			if _, err := runner.ParseApprovalPolicy(s); err != nil {
				return errors.New(atoll.ErrorMessage(err))
			}
			return nil
		}), "plans that must be approved in Atoll (dashboard or API) before apply: comma-separated *, a repository's full name (owner/repo, org/project/repo on Azure DevOps), or that followed by /PROJECT (name or dir), globs allowed (default with --demo: "+demo.PlanApproval+")"),
		opt("approval-ttl", duration(&c.ApprovalTTL, atoll.DefaultApprovalTTL).checked(func(d time.Duration) error {
			if d <= 0 {
				return fmt.Errorf("--approval-ttl must be positive")
			}
			return nil
		}), "how long a plan approval lasts"),
		opt("worker-lease", duration(&c.WorkerLease, dispatch.DefaultLease).checked(func(d time.Duration) error {
			if d < time.Second || d > time.Hour {
				return fmt.Errorf("--worker-lease must be between 1s and 1h")
			}
			return nil
		}), "how long a worker's claim on a job lasts without a heartbeat: a plan whose worker is silent longer is planned again, an apply is interrupted (workers heartbeat every third of it)"),
		opt("default-execution-pool", parsed(&c.DefaultExecutionPool, func(s string) (string, error) {
			if s == "" {
				return s, nil
			}
			return s, repocfg.CheckPool(s)
		}), "the execution pool of repositories whose repo config entry names none: a pool of workers, or one of execution_pools (default: the active node itself, "+atoll.PoolLocal+")"),
		opt("kube-namespace", text(&c.KubeNamespace, ""), "namespace of the Kubernetes Jobs of the pools the repo config runs on Kubernetes (execution_pools; default: the namespace of the server's own pod)"),
		opt("kubeconfig", text(&c.Kubeconfig, ""), "kubeconfig file of a server that runs outside the cluster it starts Kubernetes Jobs in (default: the in-cluster service account)"),
		opt("kube-context", text(&c.KubeContext, ""), "context of --kubeconfig to use (default: its current context)"),
		opt("kube-worker-image", text(&c.KubeWorkerImage, ""), "image of the Kubernetes Jobs' pods whose pool's pod template names none (an image of this Atoll version)"),
		opt("kube-server-url", text(&c.KubeServerURL, ""), "comma-separated URLs the Kubernetes Jobs' pods reach this server at, e.g. its Service's http://atoll.ci.svc:4141 (default: --public-url)"),
		opt("kube-schedule-timeout", duration(&c.KubeScheduleTimeout, kube.DefaultScheduleTimeout).checked(func(d time.Duration) error {
			if d < time.Second {
				return fmt.Errorf("--kube-schedule-timeout must be at least 1s")
			}
			return nil
		}), "how long a Kubernetes Job's pod may stay unschedulable before its job fails with the scheduler's reason"),
		opt("approval-four-eyes", boolean(&c.ApprovalFourEyes, false), "four-eyes plan approval: whoever triggered a plan cannot approve it either (the pull request's author never can)"),

		// Server-side repo config and policy checks. The config parses as
		// it is read, so that a bad one stops the server at start with its
		// line and key, before anything listens; the result is ServerConfig.
		opt("repo-config", parsed(&c.RepoConfig, func(path string) (string, error) {
			if c.RepoConfigJSON != "" {
				return "", errors.New("--repo-config and --repo-config-json cannot both be given")
			}
			data, err := readRepoConfig(path)
			if err != nil {
				return "", err
			}
			sc, err := repocfg.ParseServerConfig(path, data)
			if err != nil {
				return "", errors.New(repoConfigMessage(err))
			}
			c.ServerConfig = sc
			return path, nil
		}), "server-side repo config file (Atlantis's repos.yaml): what each repository's atlantis.yaml may set, and the requirements and workflows it gets"),
		opt("repo-config-json", parsed(&c.RepoConfigJSON, func(js string) (string, error) {
			if c.RepoConfig != "" {
				return "", errors.New("--repo-config and --repo-config-json cannot both be given")
			}
			sc, err := repocfg.ParseServerConfig("--repo-config-json", []byte(js))
			if err != nil {
				return "", errors.New(repoConfigMessage(err))
			}
			c.ServerConfig = sc
			return js, nil
		}), "server-side repo config as JSON, instead of --repo-config"),
		opt("enable-policy-checks", boolean(&c.EnablePolicyChecks, false),
			"after each plan, test it with conftest against the policy_sets of the server-side repo config's policies; failed sets block apply until owners approve_policies"),
		opt("conftest-bin", text(&c.ConftestBin, "conftest"), "the conftest binary policy checks run (a path, or a name looked up on PATH)"),
		opt("quiet-policy-checks", boolean(&c.QuietPolicyChecks, false), "leave a project's policy check section out of the plan comment when every set passed"),

		// Terraform versions.
		opt("default-tf-version", text(&c.DefaultTFVersion, ""), "Terraform version (or constraint) of projects without terraform_version: selected from --tf-bin-dir (or --terraform-bin), downloaded at start when missing (default: --terraform-bin, whatever its version)"),
		opt("tf-bin-dir", text(&c.TFBinDir, ""), "directory of the Terraform versions projects ask for with terraform_version, named as Atlantis names them: terraform1.5.7, tofu1.8.0 (default DATA_DIR/bin)"),
		opt("tf-download", boolean(&c.TFDownload, true), "download the Terraform (or OpenTofu) version a project asks for into --tf-bin-dir when it is not there"),
		opt("tf-download-url", text(&c.TFDownloadURL, tfinstall.DefaultTerraformURL), "release server Terraform is downloaded from, laid out like releases.hashicorp.com (hc-install's API base URL, index.json files included); its SHA256SUMS must be signed by HashiCorp's key"),
		opt("tofu-download-url", text(&c.TofuDownloadURL, tfinstall.DefaultTofuURL), "release server OpenTofu is downloaded from, laid out like its GitHub releases (v{VERSION}/tofu_{VERSION}_{OS}_{ARCH}.tar.gz); its SHA256SUMS must be signed by OpenTofu's key; other than the default, versions are listed from {URL}/api.json"),
		opt("tf-download-skip-verify", boolean(&c.TFDownloadSkipVerify, false), "install downloaded Terraform and OpenTofu versions without checking their SHA256SUMS signature or checksums, for mirrors that do not serve the vendors' signed sums; logged at start and in every job using such a binary"),
		aliased("default-tf-distribution", "tf-distribution", &field[string]{p: &c.TFDistribution, def: tfinstall.Terraform, kind: "value", format: func(s string) string { return s },
			parse: func(s string) (string, error) {
				if !slices.Contains([]string{tfinstall.Terraform, tfinstall.OpenTofu}, s) {
					return "", fmt.Errorf("%q is not terraform or opentofu", s)
				}
				return s, nil
			}}, "terraform or opentofu: the distribution of projects without terraform_distribution (default terraform)"),

		// Retention.
		retention("retain-logs", &c.Retention.LogLines, ret.LogLines, "keep a job's log this long after the job finished (0: forever)"),
		retention("retain-webhooks", &c.Retention.Webhooks, ret.Webhooks, "keep the record of a received webhook this long; duplicate deliveries are recognised within it (0: forever)"),
		retention("retain-events", &c.Retention.Events, ret.Events, "keep audit events this long (0: forever)"),
		retention("retain-plan-files", &c.Retention.PlanFiles, ret.PlanFiles, "keep the file of an applied or discarded plan this long; pending plans are always kept (0: forever)"),

		// High availability: without --replica-url the server is a single
		// node that replicates nowhere.
		opt("replica-url", text(&c.ReplicaURL, ""), "Litestream replica URL (s3://bucket/path?endpoint=…&region=…, file:///dir); enables the active/standby pair"),
		opt("advertise-url", text(&c.AdvertiseURL, ""), "how the other node reaches this one (default on Fly.io: its private address; else http://HOSTNAME:PORT)"),
		opt("lease-ttl", duration(&c.LeaseTTL, 15*time.Second), "time to live of the active node's lease, renewed every third of it"),
		opt("replica-access-key-id", text(&c.ReplicaAccessKeyID, ""), "access key id of an s3:// replica (kept apart from AWS_*, which Terraform inherits)"),
		secret("replica-secret-access-key", text(&c.ReplicaSecretAccessKey, ""), "secret access key of an s3:// replica"),

		// Notifications.
		opt("webhooks-config", text(&c.WebhooksConfig, ""), "YAML or JSON file whose top-level webhooks list (Atlantis's) says where apply results are sent; other keys are ignored, so an Atlantis --config file works"),
		secret("slack-token", text(&c.SlackToken, ""), "Slack bot token for webhooks of kind slack (secret)"),
		secret("webhook-http-headers", text(&c.WebhookHTTPHeaders, ""), `headers added to webhooks of kind http, as a JSON object of a string or an array of strings, e.g. {"Authorization":"Bearer x"} (secret)`),
	}
}

// formatTeamAllowlist is --gh-team-allowlist's text of a parsed list.
func formatTeamAllowlist(l runner.TeamAllowlist) string {
	pairs := make([]string, len(l))
	for i, r := range l {
		pairs[i] = r.Team + ":" + r.Command
	}
	return strings.Join(pairs, ",")
}

// setDefaults sets every field of the table to its default.
func (c *Config) setDefaults() {
	for _, o := range c.options() {
		o.value.reset()
	}
}

// flagSet registers the table on a new FlagSet: each option under its
// name and its alias, and each secret's --NAME-file, whose values go to
// files. It sets the defaults.
func (c *Config) flagSet(name string, opts []option, files map[string]*string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	for _, o := range opts {
		o.value.reset()
		fs.Var(o.value, o.name, o.usage)
		if o.alias != "" {
			target := o.name
			fs.Func(o.alias, "Atlantis's name of --"+target, func(v string) error { return fs.Set(target, v) })
		}
		if o.secret {
			files[o.name] = fs.String(o.name+"-file", "", "file holding --"+o.name+" (trailing newline trimmed)")
		}
	}
	fs.Usage = func() {
		if name == "" {
			fmt.Fprintf(fs.Output(), "Usage:\n")
		} else {
			fmt.Fprintf(fs.Output(), "Usage of %s:\n", name)
		}
		printUsage(fs.Output(), opts)
	}
	return fs
}

// usageEntry is a line of -h: a flag, an alias or a -file variant.
type usageEntry struct{ name, typ, usage, def string }

// printUsage lists the table's flags as Go's flag package does, sorted by
// name: an alias and a secret's -file variant are flags of their own.
func printUsage(w io.Writer, opts []option) {
	var entries []usageEntry
	for _, o := range opts {
		def := o.value.defaultText()
		if o.secret {
			def = "" // never printed
		}
		entries = append(entries, usageEntry{o.name, o.value.typeName(), o.usage, def})
		if o.alias != "" {
			entries = append(entries, usageEntry{o.alias, "value", "Atlantis's name of --" + o.name, ""})
		}
		if o.secret {
			entries = append(entries, usageEntry{o.name + "-file", "string", "file holding --" + o.name + " (trailing newline trimmed)", ""})
		}
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	for _, e := range entries {
		var b strings.Builder
		fmt.Fprintf(&b, "  -%s", e.name)
		if e.typ != "" {
			b.WriteString(" " + e.typ)
		}
		if b.Len() <= 4 {
			b.WriteString("\t")
		} else {
			b.WriteString("\n    \t")
		}
		b.WriteString(strings.ReplaceAll(e.usage, "\n", "\n    \t"))
		if e.def != "" {
			fmt.Fprintf(&b, " (default %s)", e.def)
		}
		fmt.Fprint(w, b.String(), "\n")
	}
}

// Parse reads args, then the environment for flags not given, then the
// secrets' files, and checks the result. A command line the flag package
// rejects is a usageError.
func (c *Config) Parse(args []string, getenv func(string) string) error {
	opts := c.options()
	files := map[string]*string{}
	fs := c.flagSet("atoll server", opts, files)
	if err := parseArgs(fs, args); err != nil {
		return err
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
	// Every registered name (options, aliases, -file variants) is read
	// from the environment, in the flag package's (sorted) order.
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
	for _, o := range opts {
		// An alias set together with its flag (on the command line or in
		// the environment): which one should win is not obvious.
		if o.alias != "" && set[o.alias] && set[o.name] {
			return fmt.Errorf("--%s is Atlantis's name of --%s: set one of them", o.alias, o.name)
		}
	}
	for _, o := range opts {
		if o.secret {
			if err := readSecretFile(fs, o.name, *files[o.name]); err != nil {
				return err
			}
		}
	}
	for _, o := range opts {
		if err := o.value.check(); err != nil {
			return err
		}
	}
	return c.validate(getenv)
}

// validate checks what the table's checks, each about one flag, cannot:
// flags that go together or exclude each other, and what they default to.
func (c *Config) validate(getenv func(string) string) error {
	if err := c.authConfig.validate(); err != nil {
		return err
	}
	if err := c.azureConfig.validate(); err != nil {
		return err
	}
	if c.EnableDriftRemediation && !c.EnableDriftDetection {
		return fmt.Errorf("--enable-drift-remediation requires --enable-drift-detection")
	}
	if (c.SSLCertFile == "") != (c.SSLKeyFile == "") {
		return fmt.Errorf("--ssl-cert-file and --ssl-key-file go together")
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

// readSecretFile sets the secret flag name from the file path, if any.
// Giving both (on the command line or in the environment) is an error.
func readSecretFile(fs *flag.FlagSet, name, path string) error {
	if path == "" {
		return nil
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
	return nil
}

// parseArgs parses a command's args with fs: -h is flag.ErrHelp, anything
// the flag package refuses or an argument that is not a flag is a
// usageError.
func parseArgs(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError{err: err, printed: true}
	}
	if fs.NArg() > 0 {
		return usageError{err: fmt.Errorf("unexpected argument %q: flags only", fs.Arg(0))}
	}
	return nil
}

// checkLogLevel refuses a --log-level slog does not know.
func checkLogLevel(s string) error {
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("--log-level %q: debug, info, warn or error", s)
	}
	return nil
}
