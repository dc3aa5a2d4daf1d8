package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/atollhq/atoll/runner"
)

// atlantisConfig holds Atlantis's server flags that change what a
// repository gets by default or what is said on the pull request, under
// their Atlantis names.
type atlantisConfig struct {
	Automerge                  bool
	AutomergeMethod            string
	ParallelPlan               bool
	ParallelApply              bool
	DisableApplyAll            bool
	DiscardApprovalOnPlan      bool
	FailOnPreWorkflowHookError bool
	SilenceForkPRErrors        bool
	SilenceNoProjects          bool
	VCSStatusName              string
	// BlockedExtraArgs and VarFileAllowlist, parsed (comma-separated).
	BlockedExtraArgs   []string
	VarFileAllowlist   []string
	UseTFPluginCache   bool
	EnableProfilingAPI bool
	// GHAppKey is the GitHub App's PEM key itself (--gh-app-key), instead
	// of --gh-app-key-file: Atlantis deployments pass ATLANTIS_GH_APP_KEY.
	GHAppKey string
	// SSLCertFile and SSLKeyFile make Atoll serve https (tls.go).
	SSLCertFile, SSLKeyFile string
}

func atlantisFlags(fs *flag.FlagSet, c *atlantisConfig) {
	fs.BoolVar(&c.Automerge, "automerge", false, "merge a pull request once all its plans are applied, unless its atlantis.yaml sets automerge")
	fs.StringVar(&c.AutomergeMethod, "automerge-method", "", "how automerge merges unless the apply comment says --auto-merge-method: merge, rebase or squash (default merge)")
	fs.BoolVar(&c.ParallelPlan, "parallel-plan", false, "plan a request's projects in parallel, unless atlantis.yaml sets parallel_plan")
	fs.BoolVar(&c.ParallelApply, "parallel-apply", false, "apply a request's projects in parallel, unless atlantis.yaml sets parallel_apply")
	fs.BoolVar(&c.DisableApplyAll, "disable-apply-all", false, "refuse an apply comment that names no project, directory or workspace")
	fs.BoolVar(&c.DiscardApprovalOnPlan, "discard-approval-on-plan", false, "dismiss a pull request's approvals (GitHub reviews) before a plan comment's plans run")
	fs.BoolVar(&c.FailOnPreWorkflowHookError, "fail-on-pre-workflow-hook-error", false, "do not run a command when one of its pre workflow hooks fails (default: comment the failure and go on)")
	fs.BoolVar(&c.SilenceForkPRErrors, "silence-fork-pr-errors", false, "do not comment on pull requests from forks that are refused (without --allow-fork-prs)")
	fs.StringVar(&c.VCSStatusName, "vcs-status-name", runner.DefaultStatusName, "prefix of commit status and check run names (atlantis/plan, ...); branch protection rules name them")
	fs.Func("blocked-extra-args", "comma-separated terraform flag prefixes comments may not pass after --, next to -chdir and -plugin-dir (always blocked)", func(v string) error {
		c.BlockedExtraArgs = splitList(v)
		for _, f := range c.BlockedExtraArgs {
			if !strings.HasPrefix(f, "-") || strings.Trim(f, "-") == "" {
				return fmt.Errorf("%q is not a terraform flag (it starts with -)", f)
			}
		}
		return nil
	})
	fs.Func("var-file-allowlist", "comma-separated directories (made absolute) whose files comments may pass to -var-file, next to files inside the repository", func(v string) error {
		c.VarFileAllowlist = splitList(v)
		for i, d := range c.VarFileAllowlist {
			abs, err := filepath.Abs(d)
			if err != nil {
				return err
			}
			c.VarFileAllowlist[i] = abs
		}
		return nil
	})
	fs.StringVar(&c.GHAppKey, "gh-app-key", "", "the GitHub App's PEM private key itself, instead of --gh-app-key-file (best from the environment: ATOLL_GH_APP_KEY or ATLANTIS_GH_APP_KEY)")
	fs.StringVar(&c.SSLCertFile, "ssl-cert-file", "", "serve https with this PEM certificate (chain first to last); read again when it changes")
	fs.StringVar(&c.SSLKeyFile, "ssl-key-file", "", "the PEM private key of --ssl-cert-file")
	fs.BoolVar(&c.EnableProfilingAPI, "enable-profiling-api", false, "serve net/http/pprof under /debug/pprof/ to admins")
	fs.BoolVar(&c.UseTFPluginCache, "use-tf-plugin-cache", true, "share downloaded providers between runs in DATA_DIR/plugin-cache (TF_PLUGIN_CACHE_DIR)")
	fs.BoolVar(&c.SilenceNoProjects, "silence-no-projects", false, "do not comment when a plan comment finds no projects")
}

// flagAliases are Atlantis's names of Atoll's flags. An alias sets its
// flag; giving both is an error.
var flagAliases = map[string]string{
	"atlantis-url":            "public-url",
	"parallel-pool-size":      "parallelism",
	"default-tf-distribution": "tf-distribution",
}

func aliasFlags(fs *flag.FlagSet) {
	for alias, name := range flagAliases {
		fs.Func(alias, "Atlantis's name of --"+name, func(v string) error { return fs.Set(name, v) })
	}
}

// envValue is a flag's value from the environment: ATOLL_<FLAG>, else
// Atlantis's ATLANTIS_<FLAG>, so that an Atlantis deployment's environment
// carries over. It names the variable it read.
func envValue(name string, getenv func(string) string) (value, from string) {
	suffix := strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
	for _, prefix := range []string{"ATOLL_", "ATLANTIS_"} {
		if v := getenv(prefix + suffix); v != "" {
			return v, prefix + suffix
		}
	}
	return "", ""
}

func (c *atlantisConfig) validate() error {
	switch c.AutomergeMethod {
	case "", "merge", "rebase", "squash":
	default:
		return fmt.Errorf("--automerge-method must be merge, rebase or squash, not %q", c.AutomergeMethod)
	}
	if (c.SSLCertFile == "") != (c.SSLKeyFile == "") {
		return fmt.Errorf("--ssl-cert-file and --ssl-key-file go together")
	}
	if c.VCSStatusName == "" || strings.ContainsAny(c.VCSStatusName, "/:\n\r") {
		return fmt.Errorf("--vcs-status-name must be a non-empty name without '/' or ':' (they separate the command and the project)")
	}
	return nil
}

// checkAliases refuses an alias set together with its flag (on the command
// line or in the environment): which one should win is not obvious.
func checkAliases(set map[string]bool) error {
	for alias, name := range flagAliases {
		if set[alias] && set[name] {
			return fmt.Errorf("--%s is Atlantis's name of --%s: set one of them", alias, name)
		}
	}
	return nil
}
