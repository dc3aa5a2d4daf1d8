package main

import (
	"fmt"
	"time"

	"github.com/atollhq/atoll/demo"
	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/store"
)

// Config is every flag of `atoll server`: the table of flags.go sets its
// fields (each flag is also read from the environment as
// ATOLL_<FLAG_IN_UPPER_SNAKE> when not given on the command line).
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
	// SSLCertFile and SSLKeyFile make Atoll serve https (tls.go).
	SSLCertFile, SSLKeyFile string
	EnableProfilingAPI      bool
	// EnableDriftDetection and EnableDriftRemediation turn on Atlantis's
	// /api/drift routes (--enable-drift-detection, --enable-drift-remediation).
	EnableDriftDetection   bool
	EnableDriftRemediation bool
	// DriftTick is how often the active node looks at the drift schedules
	// (--drift-tick; for tests: a schedule fires at most once a minute).
	DriftTick time.Duration

	GHUser          string
	GHToken         string
	GHWebhookSecret string
	GHHostname      string
	GHAPIURL        string
	GHAppID         int64
	GHAppKeyFile    string
	// GHAppKey is the GitHub App's PEM key itself (--gh-app-key), instead
	// of --gh-app-key-file: Atlantis deployments pass ATLANTIS_GH_APP_KEY.
	GHAppKey string
	GHChecks bool
	// GHAllowMergeableBypassApply: with branch protection requiring
	// <status-name>/apply, GitHub calls every unapplied pull request
	// "blocked", so the mergeable apply requirement could never pass.
	GHAllowMergeableBypassApply bool
	// IgnoreVCSStatusNames: several Atlantis-like servers on one repository
	// each require their own NAME/plan and NAME/apply, and with
	// --gh-allow-mergeable-bypass-apply the other servers' checks must not
	// block this one's apply.
	IgnoreVCSStatusNames string
	// EmojiReaction: --emoji-reaction, what accepted command comments are
	// reacted to with on GitHub ("" reacts not; Azure DevOps has no
	// reactions).
	EmojiReaction string
	// GHTeamAllowlist: --gh-team-allowlist, parsed.
	GHTeamAllowlist runner.TeamAllowlist

	TerraformBin     string
	DefaultTFVersion string
	ExecutableName   string
	CheckoutStrategy string
	Parallelism      int
	StopTimeout      time.Duration
	UseTFPluginCache bool
	APISecret        string
	NodeID           string
	Demo             bool
	DemoVCS          string // --demo-vcs: the host the demo repository is named after
	// PlanApproval and ApprovalTTL: which plans need an approval in Atoll
	// before apply, and how long one lasts.
	PlanApproval string
	ApprovalTTL  time.Duration
	// WorkerLease is a worker's claim's lease (--worker-lease).
	WorkerLease time.Duration
	// DriftParallelism bounds the drift checks that run at once
	// (--drift-parallelism).
	DriftParallelism int
	// DefaultExecutionPool is the pool of repositories whose repo config
	// entry names none (--default-execution-pool; "" is local).
	DefaultExecutionPool string
	// The Kubernetes Jobs of the pools the repo config gives a pod
	// template (execution_pools): their namespace (--kube-namespace; ""
	// is the in-cluster service account's), the client's config outside a
	// cluster (--kubeconfig, --kube-context), the image of templates that
	// name none (--kube-worker-image), the URLs their pods reach this
	// server at (--kube-server-url; "" is --public-url), and how long a pod
	// may stay unschedulable (--kube-schedule-timeout).
	KubeNamespace, Kubeconfig, KubeContext, KubeWorkerImage, KubeServerURL string
	KubeScheduleTimeout                                                    time.Duration
	// ApprovalFourEyes: a plan's trigger cannot approve it either.
	ApprovalFourEyes bool

	// Which comment commands run (commands.go) and what a comment may
	// pass or target.
	AllowCommands   []string // --allow-commands, parsed; never nil
	DisableApply    bool
	DisableAutoplan bool
	DisableApplyAll bool
	// BlockedExtraArgs and VarFileAllowlist, parsed (comma-separated).
	BlockedExtraArgs []string
	VarFileAllowlist []string
	// EnableRegexpCmd: --enable-regexp-cmd, -p/--project is a regular
	// expression over project names.
	EnableRegexpCmd bool
	// RestrictFileList: --restrict-file-list, a plan with -d or -p must
	// target what the pull request modifies.
	RestrictFileList bool

	// What a repository gets by default and what is said on the pull
	// request, under Atlantis's names.
	Automerge                  bool
	AutomergeMethod            string
	ParallelPlan               bool
	ParallelApply              bool
	DiscardApprovalOnPlan      bool
	FailOnPreWorkflowHookError bool
	SilenceForkPRErrors        bool
	SilenceNoProjects          bool
	VCSStatusName              string
	DisableAutoplanLabel       string
	DisableUnlockLabel         string
	DisableAutomergeLabel      string
	SilenceVCSStatusNoPlans    bool
	SilenceVCSStatusNoProjects bool
	HideUnchangedPlanComments  bool
	DisableMarkdownFolding     bool
	// EnableDiffMarkdownFormat is on by default in Atoll, off in Atlantis.
	EnableDiffMarkdownFormat bool
	// DisableRepoLocking: --disable-repo-locking, every project as
	// repo_locks mode disabled whatever the repo configs say.
	DisableRepoLocking bool
	// AutodiscoverMode: --autodiscover-mode; "" is auto.
	AutodiscoverMode string
	// AutoplanFileList is "" unless set: autodiscovery then keeps its
	// built-in rule (Terraform configuration and variable files).
	AutoplanFileList string

	Retention store.Retention // --retain-* (retention.go)

	authConfig      // --admin-password, --oidc-* (auth.go)
	azureConfig     // --azuredevops-* (azuredevops.go)
	repoConfig      // --repo-config, --repo-config-json (repoconfig.go)
	terraformConfig // --tf-bin-dir, --tf-download, --tf-distribution (terraform.go)
	policyConfig    // --enable-policy-checks, --conftest-bin (policy.go)
	notifyConfig    // --webhooks-config, --slack-token, --webhook-http-headers (notifyflags.go)

	// The active/standby pair (ha.go).
	ReplicaURL   string
	AdvertiseURL string
	LeaseTTL     time.Duration
	// Keys of an S3 replica, apart from AWS_*: Terraform inherits AWS_*
	// variables, and a pull request must never reach the replica.
	ReplicaAccessKeyID     string
	ReplicaSecretAccessKey string
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
