package runner

import (
	"time"

	"github.com/atollhq/atoll/repocfg"
)

// Config is the runner's settings: what the server's flags decide, built in
// one place by cmd/atoll and not changed once the runner starts.
type Config struct {
	Allowlist   Allowlist
	PublicURL   string // base of links in comments and statuses
	Node        string
	Version     string
	Parallelism int
	// AllowForkPRs lets pull requests from forks plan and apply. Off by
	// default, as in Atlantis: a fork's author could run code through
	// Terraform with the server's credentials.
	AllowForkPRs bool
	// HidePrevPlanComments hides (GitHub: minimizes; Azure DevOps: closes
	// the thread of) a pull request's earlier plan comments when a new plan
	// is posted: Atlantis's --hide-prev-plan-comments, plans only.
	HidePrevPlanComments bool
	// PullLabels: --disable-*-label and --silence-vcs-status-* (labels.go).
	PullLabels
	// PlanApproval says which plans must be approved in Atoll before they
	// are applied (--plan-approval); nil requires none.
	PlanApproval *ApprovalPolicy
	// AllowDraftPRs autoplans draft pull requests. Off by default, as
	// Atlantis's --allow-draft-prs.
	AllowDraftPRs bool
	// DisableAutoplan stops pull request events from planning
	// (--disable-autoplan); plan comments still plan.
	DisableAutoplan bool
	// Automerge, ParallelPlan and ParallelApply are what a repository gets
	// when its atlantis.yaml does not say (--automerge, --parallel-plan,
	// --parallel-apply), as in Atlantis.
	Automerge, ParallelPlan, ParallelApply bool
	// DisableRepoLocking (--disable-repo-locking) runs every project as
	// repo_locks mode disabled: no lock is taken or checked (lockmode.go).
	DisableRepoLocking bool
	// AutomergeMethod is how automerge merges when the apply comment does
	// not say (--automerge-method: merge, rebase or squash; "" is merge).
	AutomergeMethod string
	// FailOnPreWorkflowHookError stops a command when one of its pre
	// workflow hooks fails (--fail-on-pre-workflow-hook-error); otherwise
	// the failure is commented and the command goes on.
	FailOnPreWorkflowHookError bool
	// SilenceForkPRErrors and SilenceNoProjects keep the refusal of a
	// fork's pull request and a plan comment that finds no projects out of
	// the pull request (Atlantis's --silence-fork-pr-errors and
	// --silence-no-projects); they are still logged.
	SilenceForkPRErrors, SilenceNoProjects bool
	// DiscardApprovalOnPlan dismisses a pull request's approvals before a
	// plan comment's plans run (--discard-approval-on-plan; GitHub only).
	DiscardApprovalOnPlan bool
	// StatusName prefixes commit status contexts and check runs
	// (--vcs-status-name); "" is DefaultStatusName.
	StatusName string
	// StopTimeout is how long Stop lets running jobs finish.
	StopTimeout time.Duration
	// DriftTick is how often drift schedules are looked at (0: 10 s).
	DriftTick time.Duration
	// ServerConfig is the server-side repo config (--repo-config): what
	// each repository's atlantis.yaml may set, and the workflow and
	// requirements it gets otherwise; nil is Atlantis's default config.
	ServerConfig *repocfg.ServerConfig
	// TFDistribution is that of projects without terraform_distribution
	// (--tf-distribution; "" is terraform), DefaultTFVersion the version of
	// projects without terraform_version (--default-tf-version; "" runs
	// Terraform.Bin).
	TFDistribution   string
	DefaultTFVersion string
	// EmojiReaction is what command comments are reacted to with on hosts
	// with reactions (--emoji-reaction; "" reacts not). TeamAllowlist is
	// --gh-team-allowlist (nil checks nothing). See reaction.go and
	// teamallowlist.go.
	EmojiReaction string
	TeamAllowlist TeamAllowlist
	// RestrictFileList refuses a plan with -d or -p that targets what the
	// pull request does not modify (--restrict-file-list).
	RestrictFileList bool
}
