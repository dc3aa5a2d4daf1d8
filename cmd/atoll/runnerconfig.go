package main

import (
	"log/slog"
	"path/filepath"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/git"
	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/vcs"
)

// runnerConfig is the runner's settings, all of them, from c. publicURL is
// where links point (known once the server listens). Warnings about the
// server-side repo config go to log.
func (c *Config) runnerConfig(publicURL string, log *slog.Logger) (runner.Config, error) {
	approval, err := runner.ParseApprovalPolicy(c.PlanApproval)
	if err != nil {
		return runner.Config{}, err
	}
	sc, err := c.runnerServerConfig(log)
	if err != nil {
		return runner.Config{}, err
	}
	if sc != nil && sc.TeamAuthz != nil && len(c.GHTeamAllowlist) > 0 {
		log.Warn("the server-side repo config's team_authz decides who runs what: --gh-team-allowlist is ignored, as in Atlantis")
	}
	return runner.Config{
		Allowlist:            runner.ParseAllowlist(c.RepoAllowlist),
		PublicURL:            publicURL,
		Node:                 c.NodeID,
		Version:              Version,
		Parallelism:          c.Parallelism,
		AllowForkPRs:         c.AllowForkPRs,
		HidePrevPlanComments: c.HidePrevPlanComments || c.Demo,
		PullLabels: runner.PullLabels{
			DisableAutoplanLabel:       c.DisableAutoplanLabel,
			DisableUnlockLabel:         c.DisableUnlockLabel,
			DisableAutomergeLabel:      c.DisableAutomergeLabel,
			SilenceVCSStatusNoPlans:    c.SilenceVCSStatusNoPlans,
			SilenceVCSStatusNoProjects: c.SilenceVCSStatusNoProjects,
		},
		PlanApproval:               approval,
		AllowDraftPRs:              c.AllowDraftPRs,
		DisableAutoplan:            c.DisableAutoplan,
		Automerge:                  c.Automerge,
		ParallelPlan:               c.ParallelPlan,
		ParallelApply:              c.ParallelApply,
		DisableRepoLocking:         c.DisableRepoLocking,
		AutomergeMethod:            c.AutomergeMethod,
		FailOnPreWorkflowHookError: c.FailOnPreWorkflowHookError,
		SilenceForkPRErrors:        c.SilenceForkPRErrors,
		SilenceNoProjects:          c.SilenceNoProjects,
		DiscardApprovalOnPlan:      c.DiscardApprovalOnPlan,
		StatusName:                 c.VCSStatusName,
		StopTimeout:                c.StopTimeout,
		ServerConfig:               sc,
		TFDistribution:             c.TFDistribution,
		DefaultTFVersion:           c.DefaultTFVersion,
		EmojiReaction:              c.EmojiReaction,
		TeamAllowlist:              c.GHTeamAllowlist,
		RestrictFileList:           c.RestrictFileList,
		DriftTick:                  c.DriftTick,
	}, nil
}

// runnerServerConfig is the server-side repo config the runner uses: the
// one given (or the demo's, or nil for Atlantis's default), with
// --autodiscover-mode and --autoplan-file-list as its defaults. The config
// given is copied, not changed: it may be shared.
func (c *Config) runnerServerConfig(log *slog.Logger) (*repocfg.ServerConfig, error) {
	sc, err := c.serverConfig()
	if err != nil {
		return nil, err
	}
	if sc != nil {
		for _, w := range sc.Warnings {
			log.Warn("server-side repo config", "warning", w)
		}
	}
	list, err := repocfg.ParseAutoplanFileList(c.AutoplanFileList)
	if err != nil {
		return nil, err
	}
	if c.AutodiscoverMode == "" && list == nil && c.DefaultExecutionPool == "" {
		return sc, nil
	}
	if sc == nil {
		sc = repocfg.DefaultServerConfig()
	}
	out := *sc
	if c.AutodiscoverMode != "" {
		out.AutodiscoverMode = c.AutodiscoverMode
	}
	if list != nil {
		out.AutoplanFileList = list
	}
	out.DefaultExecutionPool = c.DefaultExecutionPool
	return &out, nil
}

// runnerDeps is what Run has made by the time it builds the runner.
type runnerDeps struct {
	dataDir, workDir string
	tfBin            string // --terraform-bin, resolved
	publicURL        string
	providers        map[string]vcs.Provider
	fence            *atoll.Fence // nil without a replica
}

// newRunner builds the runner: its Config (runnerConfig) and what it works
// with, every field set here. Nothing is set on it afterwards.
func (m *Main) newRunner(d runnerDeps) (*runner.Runner, error) {
	c := &m.Config
	cfg, err := c.runnerConfig(d.publicURL, m.Logger)
	if err != nil {
		return nil, err
	}
	policies, err := c.policyChecks(cfg.ServerConfig)
	if err != nil {
		return nil, err
	}
	installer, err := c.installer(d.dataDir, m.Logger)
	if err != nil {
		return nil, err
	}
	notifications := c.outbox()
	if notifications != nil {
		notifications.Sender.Fence = d.fence
	}
	// Runner.Start kills what a crashed process left recorded here.
	procReg := &procs.Registry{Dir: filepath.Join(d.workDir, "procs")}
	// Worker pools: the dispatcher is every pool's executor but local's.
	starters, err := c.kubeStarters(cfg.ServerConfig, d.publicURL)
	if err != nil {
		return nil, err
	}
	m.Dispatcher = &dispatch.Dispatcher{Store: m.DB, ServeGit: git.UploadPack, Lease: c.WorkerLease, Logger: m.Logger, Version: Version, Starters: starters}
	return &runner.Runner{
		Config:    cfg,
		DB:        m.DB,
		Providers: d.providers,
		Workdirs:  &git.Workdirs{Root: d.workDir, Strategy: c.CheckoutStrategy, Procs: procReg},
		Terraform: terraform.Runner{Bin: d.tfBin, Nice: 10, Env: m.terraformEnv(d.dataDir), Procs: procReg},
		Parser: command.Parser{ExecutableName: c.ExecutableName, VCSUser: c.GHUser, AllowCommands: c.allowed(), DisableApplyAll: c.DisableApplyAll,
			BlockedExtraArgs: c.BlockedExtraArgs, VarFileAllowlist: c.VarFileAllowlist, EnableRegexpCmd: c.EnableRegexpCmd},
		Markdown: markdown.Renderer{Executable: c.ExecutableName, QuietPolicyChecks: c.QuietPolicyChecks, RawPlanOutput: !c.EnableDiffMarkdownFormat,
			HideUnchangedPlans: c.HideUnchangedPlanComments, DisableFolding: c.DisableMarkdownFolding},
		Hub:           runner.NewHub(),
		Metrics:       m.Server.Metrics.Atlantis,
		Logger:        m.Logger,
		Procs:         procReg,
		Credentials:   m.Credentials,
		TFInstall:     installer,
		Policies:      policies,
		Notifications: notifications,
		Pools:         m.Dispatcher,
	}, nil
}
