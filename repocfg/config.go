package repocfg

import (
	"regexp"
	"slices"
)

// Config is a parsed atlantis.yaml.
type Config struct {
	Version int
	// Automerge, ParallelPlan and ParallelApply are nil when the file does
	// not set them: the server's defaults (--automerge, --parallel-plan,
	// --parallel-apply) apply, as in Atlantis.
	Automerge     *bool
	ParallelPlan  *bool
	ParallelApply *bool
	// AbortOnExecutionOrderFail stops a plan or apply after the first
	// execution_order_group with a failure: later groups do not run.
	AbortOnExecutionOrderFail bool
	// DeleteSourceBranchOnMerge is the file's top-level
	// delete_source_branch_on_merge (nil: not set). Merge folds it into
	// each project's.
	DeleteSourceBranchOnMerge *bool
	// RepoLocks is the file's top-level repo_locks mode ("" when not set);
	// Merge folds it into each project's RepoLocks when the server allows
	// repo_locks.
	RepoLocks string
	// SilencePRComments is the file's top-level silence_pr_comments (nil:
	// not set). Merge folds it into each project's.
	SilencePRComments []string
	Projects          []Project
	Workflows         map[string]Workflow // never nil; keyed by workflow name
	Explicit          bool                // true when read from a file, false when autodiscovered
	// Warnings lists, in file order, the keys whose values ask for
	// something Atoll does not do yet (emoji_reaction, branch, ...), one
	// message each, e.g. "atlantis.yaml line 7: `emoji_reaction` is accepted
	// but not acted on by Atoll yet". They are not errors: the file parses
	// as in Atlantis, and the caller tells the pull request once.
	Warnings []string
	// Autodiscover is the file's autodiscover block, or after Merge the
	// one in force (the server's wins); nil means mode auto.
	Autodiscover *Autodiscover
	// Drift is the file's top-level drift_detection (Atoll's; nil: not
	// set), or after Merge the block in force: the file's where the server
	// allows drift_detection, else the server's (nil: neither sets one).
	// Its Branch "" is the repository's default branch.
	Drift *DriftSettings
	// Defaults are what a project the file does not list (autodiscovered,
	// or planned with -d) gets; set from the server-side repo config.
	Defaults ProjectDefaults
	// PreWorkflowHooks and PostWorkflowHooks come from the server-side
	// repo config entries matching the repository and base branch.
	PreWorkflowHooks  []Hook
	PostWorkflowHooks []Hook
	// AllowedRegexpPrefixes, when not empty, are the prefixes a -p regular
	// expression (--enable-regexp-cmd) must start with to select more
	// than one project.
	AllowedRegexpPrefixes []string
	// AutoplanFileList, when not nil, are the doublestar globs over
	// repo-relative paths (--autoplan-file-list) deciding which changed
	// files autodiscover their directory; nil keeps the built-in rule
	// (see discover).
	AutoplanFileList []string

	// overrides are the project keys the file sets that the server must
	// allow (allowed_overrides), and workflowsLine where workflows is.
	overrides     []override
	workflowsLine int
	repoLocksLine int
	file          string
}

// ProjectDefaults are the server-side settings of a project that sets none.
type ProjectDefaults struct {
	Workflow           string // "" is the default workflow
	ApplyRequirements  []string
	PlanRequirements   []string
	ImportRequirements []string
	// DeleteSourceBranchOnMerge: the server's, or the file's top-level.
	DeleteSourceBranchOnMerge bool
	// RepoLocks is the lock mode (LockOnPlan, LockOnApply, LockDisabled):
	// the server's, or the file's top-level when the server allows it.
	RepoLocks string
	// SilencePRComments: the server's.
	SilencePRComments []string
	// ExecutionPool: the server's execution_pool; "" is local.
	ExecutionPool string
}

// override is a key written in a project that allowed_overrides governs.
type override struct {
	key, path, value string
	line             int
}

// Project is one configured (or discovered) Terraform root.
type Project struct {
	Name             string
	Dir              string // cleaned, slash-separated, relative; "." for the repo root
	Workspace        string // "default" unless configured
	TerraformVersion string // as written: a version ("v1.5.7") or a constraint ("~> 1.5")
	// TerraformDistribution is "terraform" or "opentofu"; "" means the
	// server's --tf-distribution.
	TerraformDistribution string
	Workflow              string // "" means the default workflow
	Autoplan              Autoplan
	ApplyRequirements     []string // each one of Requirements
	PlanRequirements      []string // each one of Requirements
	ImportRequirements    []string // each one of Requirements
	// ExecutionOrderGroup orders a request's projects: lower groups run
	// first, a group starts once the one before it ended.
	ExecutionOrderGroup int
	// Branch, when set, limits the project to pull requests whose base
	// branch it matches (the file's /regex/); others do not see it.
	Branch *regexp.Regexp
	// DependsOn names the projects (of the same file) that must succeed
	// first: in the same request, and for an apply, also in earlier ones.
	DependsOn []string
	// DeleteSourceBranchOnMerge deletes the head branch when automerge
	// merges the pull request. As parsed, nil when the project does not
	// set it; after ServerConfig.Merge, never nil: the project's value
	// (when allowed_overrides lets it), else the file's top-level one, else
	// the server's.
	DeleteSourceBranchOnMerge *bool
	// CustomPolicyCheck is the project's custom_policy_check (nil: not
	// set); after ServerConfig.Merge, nil unless allowed_overrides lets the
	// project set it. nil means the server's setting.
	CustomPolicyCheck *bool
	// PolicyCheck is the project's policy_check (nil: not set); after
	// ServerConfig.Merge, nil unless allowed_overrides lets the project
	// set it. nil means the server's setting for the repository.
	PolicyCheck *bool
	// RepoLocking is the deprecated repo_locking as parsed (nil: not set).
	// RepoLocks is the lock mode: as parsed, "" when the project does not
	// set repo_locks; after ServerConfig.Merge, never "" (see
	// ServerConfig.Merge for the precedence).
	RepoLocking *bool
	RepoLocks   string
	// SilencePRComments names the commands (plan, apply) whose results for
	// the project are left out of the pull request's comments. As parsed,
	// nil when the project does not set it; after ServerConfig.Merge, the
	// project's (when allowed_overrides lets it), else the file's
	// top-level one (likewise), else the server's.
	SilencePRComments []string
	// ExecutionPool is the pool whose workers run the project's jobs. As
	// parsed, the project's execution_pool ("" when not set); after
	// ServerConfig.Merge, the project's (when allowed_overrides lists
	// execution_pool), else the server's, with "" for local (atoll.PoolLocal,
	// the default).
	ExecutionPool string
}

// Autoplan says whether and when a project is planned automatically.
type Autoplan struct {
	Enabled bool
	// WhenModified holds .dockerignore-style doublestar globs relative to the
	// project dir; "../" may reach outside it and "!" excludes.
	WhenModified []string
}

// Workflow is a named custom workflow. A nil stage means "use the default
// steps"; a non-nil empty one means "run nothing", as in Atlantis.
type Workflow struct {
	Name string
	// FromRepo is set on a workflow that came from the repository's own
	// file (where allow_custom_workflows lets it), not from the server:
	// its extra_args are held to the same rule as a comment's.
	FromRepo    bool
	Plan        []Step
	Apply       []Step
	PolicyCheck []Step // parsed, not run by Atoll
	Import      []Step
	StateRm     []Step
}

// Step is one raw workflow step, e.g. "init", {run: "make"} or
// {plan: {extra_args: [...]}}. A scalar value (run: cmd, multienv: cmd) is
// kept as Args["command"]; a mapping value is kept as decoded.
type Step struct {
	Name string
	Args map[string]any
}

// Requirements are the values allowed in apply/plan/import_requirements.
var Requirements = []string{"approved", "mergeable", "undiverged"}

// DefaultWhenModified is the autoplan glob list of a project that sets none;
// it matches Atlantis's default.
var DefaultWhenModified = []string{"**/*.tf*", "**/terragrunt.hcl", "**/.terraform.lock.hcl"}

// DefaultWorkflow is the workflow name a project may use without defining it.
const DefaultWorkflow = "default"

// newProject returns a project with Atlantis's defaults.
func newProject(dir, workspace string) Project {
	return Project{
		Dir:       dir,
		Workspace: workspace,
		Autoplan:  Autoplan{Enabled: true, WhenModified: append([]string(nil), DefaultWhenModified...)},
	}
}

// adHoc returns a project the file does not list, with the defaults.
func (c *Config) adHoc(dir, workspace string) Project {
	p := newProject(dir, workspace)
	if c != nil {
		p.Workflow = c.Defaults.Workflow
		p.ApplyRequirements = append([]string(nil), c.Defaults.ApplyRequirements...)
		p.PlanRequirements = append([]string(nil), c.Defaults.PlanRequirements...)
		p.ImportRequirements = append([]string(nil), c.Defaults.ImportRequirements...)
		p.DeleteSourceBranchOnMerge = boolPtr(c.Defaults.DeleteSourceBranchOnMerge)
		p.RepoLocks = c.Defaults.RepoLocks
		p.SilencePRComments = slices.Clone(c.Defaults.SilencePRComments)
		p.ExecutionPool = c.Defaults.ExecutionPool
	}
	return p
}

// clone returns a copy that shares no slices with p, so callers of Select and
// Find cannot modify the parsed config through the result.
func (p Project) clone() Project {
	p.Autoplan.WhenModified = append([]string(nil), p.Autoplan.WhenModified...)
	p.ApplyRequirements = append([]string(nil), p.ApplyRequirements...)
	p.PlanRequirements = append([]string(nil), p.PlanRequirements...)
	p.ImportRequirements = append([]string(nil), p.ImportRequirements...)
	p.DependsOn = append([]string(nil), p.DependsOn...)
	p.SilencePRComments = slices.Clone(p.SilencePRComments)
	if p.DeleteSourceBranchOnMerge != nil {
		p.DeleteSourceBranchOnMerge = boolPtr(*p.DeleteSourceBranchOnMerge)
	}
	if p.RepoLocking != nil {
		p.RepoLocking = boolPtr(*p.RepoLocking)
	}
	return p
}

// Setting is an optional boolean of the file (Automerge, ParallelPlan,
// ParallelApply): its value, or def, the server's, when it is not set.
func Setting(v *bool, def bool) bool {
	if v == nil {
		return def
	}
	return *v
}
func boolPtr(b bool) *bool { return &b }

// Autodiscover is an autodiscover block: Mode is auto (discover projects
// only when the file lists none), enabled (also beside listed projects,
// in dirs none of them has) or disabled (never); IgnorePaths are doublestar
// globs of project dirs never discovered.
type Autodiscover struct {
	Mode        string
	IgnorePaths []string
}
