package repocfg

import (
	"regexp"
	"slices"
	"strings"
)

// ServerConfig is a parsed server-side repo config (Atlantis's repos.yaml,
// --repo-config or --repo-config-json): which repositories may set what in
// their atlantis.yaml, and the settings they get when they do not.
type ServerConfig struct {
	// Repos are the entries in file order after the default entry
	// (DefaultServerRepo), which always comes first: a later matching
	// entry overrides an earlier one key by key.
	Repos []ServerRepo
	// Workflows are the server's workflows by name; always holds
	// "default" (the built-in steps) unless the file redefines it.
	Workflows map[string]Workflow
	// Policies are the conftest policy sets (nil: none configured).
	Policies *Policies
	// TeamAuthz is the external authorization command (nil: none).
	TeamAuthz *TeamAuthz
	// ExecutionPools are the pools run by Atoll itself rather than by
	// their own workers (execution_pools, Atoll's own key), by name.
	ExecutionPools map[string]ExecutionPool
	// Warnings are the keys parsed and checked but not acted on by Atoll,
	// one message each, as in Config.Warnings.
	Warnings []string
	// AutodiscoverMode is the mode when neither a matching entry nor the
	// repository's file sets autodiscover (--autodiscover-mode); "" is auto.
	AutodiscoverMode string
	// AutoplanFileList is --autoplan-file-list, copied by Load into
	// Config.AutoplanFileList; nil keeps the built-in rule.
	AutoplanFileList []string
	// DefaultExecutionPool is the pool of repositories no matching entry
	// gives one (--default-execution-pool); "" is local.
	DefaultExecutionPool string
}

// ServerRepo is one entry of repos. Nil slices and pointers mean "not
// set here": an earlier entry's value (or the default) stands.
type ServerRepo struct {
	ID          string         // exact host/owner/name; "" when IDRegex is set
	IDRegex     *regexp.Regexp // from id: /regex/
	BranchRegex *regexp.Regexp // from branch: /regex/; nil matches every branch
	// RepoConfigFile is the path of the repository's config file; "" is
	// atlantis.yaml.
	RepoConfigFile            string
	Workflow                  *string
	PlanRequirements          []string
	ApplyRequirements         []string
	ImportRequirements        []string
	AllowedOverrides          []string
	AllowedWorkflows          []string
	AllowCustomWorkflows      *bool
	DeleteSourceBranchOnMerge *bool
	RepoLocking               *bool
	RepoLocksMode             *string
	PolicyCheck               *bool
	CustomPolicyCheck         *bool
	SilencePRComments         []string
	ExecutionPool             *string       // execution_pool (Atoll's): nil is not set; see CheckPool
	Autodiscover              *Autodiscover // nil: not set
	// Drift is drift_detection (Atoll's): nil is not set. The last
	// matching entry that sets it wins whole (see DriftFor).
	Drift             *DriftSettings
	PreWorkflowHooks  []Hook
	PostWorkflowHooks []Hook
	Line              int // where the entry starts; 0 for the default entry
}

// Hook is one pre_ or post_workflow_hooks entry.
type Hook struct {
	Run         string
	Description string
	Shell       string
	ShellArgs   string
	// Commands are the commands the hook runs for (Atlantis's comma
	// separated `commands`); empty runs it for every command.
	Commands []string
}

// RunsFor reports whether the hook runs around command (plan, apply, ...).
func (h Hook) RunsFor(command string) bool {
	return len(h.Commands) == 0 || slices.Contains(h.Commands, command)
}

// Override keys a server may list in allowed_overrides.
const (
	KeyPlanRequirements          = "plan_requirements"
	KeyApplyRequirements         = "apply_requirements"
	KeyImportRequirements        = "import_requirements"
	KeyWorkflow                  = "workflow"
	KeyDeleteSourceBranchOnMerge = "delete_source_branch_on_merge"
	KeyRepoLocking               = "repo_locking"
	KeyRepoLocks                 = "repo_locks"
	KeyPolicyCheck               = "policy_check"
	KeyCustomPolicyCheck         = "custom_policy_check"
	KeySilencePRComments         = "silence_pr_comments"
	// KeyExecutionPool is Atoll's own: Atlantis has no execution pools.
	KeyExecutionPool = "execution_pool"
)

// OverrideKeys are the values allowed_overrides accepts: Atlantis's, and
// Atoll's execution_pool and drift_detection.
var OverrideKeys = []string{KeyPlanRequirements, KeyApplyRequirements, KeyImportRequirements, KeyWorkflow,
	KeyDeleteSourceBranchOnMerge, KeyRepoLocking, KeyRepoLocks, KeyPolicyCheck, KeyCustomPolicyCheck, KeySilencePRComments,
	KeyExecutionPool, KeyDriftDetection}

// DefaultServerRepo is the entry every server config starts with, and all
// of the config when none is given: Atlantis's defaults. Repositories may
// override nothing and define no workflows, and there are no requirements.
func DefaultServerRepo() ServerRepo {
	f := false
	wf := DefaultWorkflow
	mode := "on_plan"
	return ServerRepo{
		IDRegex:                   regexp.MustCompile(".*"),
		BranchRegex:               regexp.MustCompile(".*"),
		Workflow:                  &wf,
		PlanRequirements:          []string{},
		ApplyRequirements:         []string{},
		ImportRequirements:        []string{},
		AllowedOverrides:          []string{},
		AllowedWorkflows:          []string{},
		AllowCustomWorkflows:      &f,
		DeleteSourceBranchOnMerge: &f,
		RepoLocksMode:             &mode,
		PolicyCheck:               &f,
		CustomPolicyCheck:         &f,
	}
}

// DefaultServerConfig is the server config in force when none is given.
func DefaultServerConfig() *ServerConfig {
	return &ServerConfig{Repos: []ServerRepo{DefaultServerRepo()},
		Workflows: map[string]Workflow{DefaultWorkflow: {Name: DefaultWorkflow}}}
}

// IDMatches reports whether the entry applies to the repository id
// (host/owner/name).
func (r ServerRepo) IDMatches(id string) bool {
	if r.IDRegex != nil {
		return r.IDRegex.MatchString(id)
	}
	return r.ID == id
}

// IDString is the id as written.
func (r ServerRepo) IDString() string {
	if r.IDRegex != nil {
		return "/" + r.IDRegex.String() + "/"
	}
	return r.ID
}

// regexValue returns the regex of a "/regex/" value, and whether it is one.
func regexValue(s string) (string, bool) {
	if len(s) >= 2 && strings.HasPrefix(s, "/") && strings.HasSuffix(s, "/") {
		return s[1 : len(s)-1], true
	}
	return "", false
}

// serverTopKeys are the top-level keys of a server config. metrics and
// external_stores configure Atlantis itself; they are checked to be
// mappings and otherwise ignored, with a warning.
var serverTopKeys = keySet("repos", "workflows", "policies", "metrics", "team_authz", "external_stores", "execution_pools")

// serverRepoKeys are the keys of a repos entry.
var serverRepoKeys = keySet("id", "branch", "repo_config_file", "workflow", "plan_requirements",
	"apply_requirements", "import_requirements", "allowed_overrides", "allowed_workflows",
	"allow_custom_workflows", "pre_workflow_hooks", "post_workflow_hooks", "delete_source_branch_on_merge",
	"repo_locking", "repo_locks", "policy_check", "custom_policy_check", "silence_pr_comments", "autodiscover",
	"execution_pool", "drift_detection")

// hookKeys are the keys of a workflow hook.
var hookKeys = keySet("run", "description", "shell", "shellArgs", "commands")
