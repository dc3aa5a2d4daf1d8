package repocfg

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
)

// ErrBranchNotServed is wrapped by Load when the entry matching the
// repository sets a branch regex the pull request's base branch does not
// match: Atlantis ignores such pull requests.
var ErrBranchNotServed = errors.New("base branch not served by the server-side repo config")

// serverSettings are the server-side values in force for one repository,
// each from the last matching entry that sets it (Atlantis's
// getMatchingCfg).
type serverSettings struct {
	workflow                           string
	planReqs, applyReqs, importReqs    []string
	allowedOverrides, allowedWorkflows []string
	allowCustomWorkflows               bool
	deleteSourceBranch                 bool
	// repoLocks is the server's lock mode: repo_locks, or disabled when
	// the deprecated repo_locking is false (it wins, as in Atlantis).
	repoLocks         string
	silencePRComments []string
	executionPool     string // "" when no entry sets execution_pool, nor the server a default
}

// settings resolves the keys for the repository id (host/owner/name).
func (s *ServerConfig) settings(id string) serverSettings {
	out := serverSettings{repoLocks: LockOnPlan, executionPool: s.DefaultExecutionPool}
	repoLocking := true
	for _, r := range s.Repos {
		if !r.IDMatches(id) {
			continue
		}
		if r.Workflow != nil {
			out.workflow = *r.Workflow
		}
		if r.PlanRequirements != nil {
			out.planReqs = r.PlanRequirements
		}
		if r.ApplyRequirements != nil {
			out.applyReqs = r.ApplyRequirements
		}
		if r.ImportRequirements != nil {
			out.importReqs = r.ImportRequirements
		}
		if r.AllowedOverrides != nil {
			out.allowedOverrides = r.AllowedOverrides
		}
		if r.AllowedWorkflows != nil {
			out.allowedWorkflows = r.AllowedWorkflows
		}
		if r.AllowCustomWorkflows != nil {
			out.allowCustomWorkflows = *r.AllowCustomWorkflows
		}
		if r.DeleteSourceBranchOnMerge != nil {
			out.deleteSourceBranch = *r.DeleteSourceBranchOnMerge
		}
		if r.SilencePRComments != nil {
			out.silencePRComments = r.SilencePRComments
		}
		if r.ExecutionPool != nil {
			out.executionPool = *r.ExecutionPool
		}
		if r.RepoLocking != nil {
			repoLocking = *r.RepoLocking
		}
		if r.RepoLocksMode != nil {
			out.repoLocks = *r.RepoLocksMode
		}
	}
	if !repoLocking {
		out.repoLocks = LockDisabled
	}
	return out
}

// autodiscover is the autodiscover block of the last entry matching id
// that sets one, or nil.
func (s *ServerConfig) autodiscover(id string) *Autodiscover {
	var a *Autodiscover
	for _, r := range s.Repos {
		if r.IDMatches(id) && r.Autodiscover != nil {
			a = r.Autodiscover
		}
	}
	return a
}

// matching returns the last entry matching the repository id; the default
// entry matches every id.
func (s *ServerConfig) matching(id string) ServerRepo {
	for _, r := range slices.Backward(s.Repos) {
		if r.IDMatches(id) {
			return r
		}
	}
	return DefaultServerRepo()
}

// ConfigFile returns the repository's config file path as set by the last
// entry matching id, or "" for atlantis.yaml (as in Atlantis, an earlier
// entry's repo_config_file is not inherited).
func (s *ServerConfig) ConfigFile(id string) string { return s.matching(id).RepoConfigFile }

// BranchServed reports whether pull requests into baseBranch are served
// for id: the last matching entry's branch regex, if any, must match.
func (s *ServerConfig) BranchServed(id, baseBranch string) bool {
	re := s.matching(id).BranchRegex
	return re == nil || baseBranch == "" || re.MatchString(baseBranch)
}

// Hooks returns the pre and post workflow hooks of every entry matching
// id and baseBranch, in file order.
func (s *ServerConfig) Hooks(id, baseBranch string) (pre, post []Hook) {
	for _, r := range s.Repos {
		if r.IDMatches(id) && (r.BranchRegex == nil || r.BranchRegex.MatchString(baseBranch)) {
			pre = append(pre, r.PreWorkflowHooks...)
			post = append(post, r.PostWorkflowHooks...)
		}
	}
	return pre, post
}

// Load reads the repository's config file at root (repo_config_file, or
// atlantis.yaml; a root atlantis.yml is refused, see MisnamedFile), checks it against what the server allows
// the repository (id: host/owner/name) and returns the merged config. A
// nil s is DefaultServerConfig. The result is never nil: without a file,
// autodiscovered projects get the server's settings.
func (s *ServerConfig) Load(root, id, baseBranch string) (*Config, error) {
	if s == nil {
		s = DefaultServerConfig()
	}
	if !s.BranchServed(id, baseBranch) {
		return nil, errors.Join(atoll.Errorf(atoll.EINVALID, "The server-side repo config does not serve pull requests into %s for %s: its branch regex does not match.", baseBranch, id), ErrBranchNotServed)
	}
	names := FileNames
	if f := s.ConfigFile(id); f != "" {
		if err := checkRepoConfigFile(f); err != nil {
			return nil, atoll.Errorf(atoll.EINVALID, "repo_config_file %s: %v", f, err)
		}
		names = []string{f}
	}
	if err := checkMisnamed(root, names[0]); err != nil {
		return nil, err
	}
	var cfg *Config
	for _, name := range names {
		data, err := readFile(filepath.Join(root, filepath.FromSlash(name)))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		} else if err != nil {
			return nil, err
		}
		d := &decoder{file: name, root: root, serverWorkflows: s.Workflows}
		if cfg, err = d.parse(data); err != nil {
			return nil, err
		}
		break
	}
	out, err := s.Merge(id, cfg)
	if err != nil {
		return nil, err
	}
	out.PreWorkflowHooks, out.PostWorkflowHooks = s.Hooks(id, baseBranch)
	out.AutoplanFileList = s.AutoplanFileList
	out.Projects = forBranch(out.Projects, baseBranch)
	return out, nil
}

// forBranch keeps, as Atlantis, the projects without a branch regex and
// those whose regex matches the pull request's base branch ("" keeps all).
func forBranch(ps []Project, baseBranch string) []Project {
	if baseBranch == "" {
		return ps
	}
	out := ps[:0]
	for _, p := range ps {
		if p.Branch == nil || p.Branch.MatchString(baseBranch) {
			out = append(out, p)
		}
	}
	return out
}

// Merge checks cfg (nil when the repository has no config file) against
// what the server allows the repository id and returns a copy whose
// projects carry the merged workflow and requirements, and whose Workflows
// are the server's (plus the file's when allow_custom_workflows is true).
// A key the server does not allow is an EINVALID error naming it and its
// line. A nil s is DefaultServerConfig.
func (s *ServerConfig) Merge(id string, cfg *Config) (*Config, error) {
	if s == nil {
		s = DefaultServerConfig()
	}
	set := s.settings(id)
	if cfg != nil {
		if err := set.check(cfg, s.Workflows); err != nil {
			return nil, err
		}
	}
	out := &Config{}
	if cfg != nil {
		*out = *cfg
		out.Warnings = slices.Clone(cfg.Warnings)
	}
	out.Workflows = make(map[string]Workflow, len(s.Workflows))
	for k, w := range s.Workflows {
		out.Workflows[k] = w
	}
	if cfg != nil && set.allowCustomWorkflows {
		for k, w := range cfg.Workflows {
			w.FromRepo = true
			out.Workflows[k] = w
		}
	}
	serverWorkflow := set.workflow
	if serverWorkflow == DefaultWorkflow {
		serverWorkflow = ""
	}
	// As in Atlantis, the file's top-level delete_source_branch_on_merge
	// needs no allowed_overrides; a project's does (check refused it).
	deleteBranch := set.deleteSourceBranch
	if cfg != nil && cfg.DeleteSourceBranchOnMerge != nil {
		deleteBranch = *cfg.DeleteSourceBranchOnMerge
	}
	// As Atlantis: the server's autodiscover, when an entry matching the
	// repository sets one, wins over the file's, which wins over
	// --autodiscover-mode.
	if a := s.autodiscover(id); a != nil {
		out.Autodiscover = a
	} else if out.Autodiscover == nil && s.AutodiscoverMode != "" {
		out.Autodiscover = &Autodiscover{Mode: s.AutodiscoverMode}
	}
	// A top-level repo_locks counts only where the server allows
	// repo_locks; Atlantis ignores it silently otherwise, Atoll says so.
	repoLocks := set.repoLocks
	if cfg != nil && cfg.RepoLocks != "" {
		if set.allowed(KeyRepoLocks) {
			repoLocks = cfg.RepoLocks
		} else {
			out.Warnings = append(out.Warnings, fmt.Sprintf("%s line %d: `repo_locks` is ignored: the server-side repo config does not allow this repository to set it (it needs `allowed_overrides: [repo_locks]`); the mode is %s",
				fileOf(cfg), cfg.repoLocksLine, set.repoLocks))
		}
	}
	out.Drift = s.mergeDrift(id, set, cfg)
	out.Defaults = ProjectDefaults{Workflow: serverWorkflow,
		ApplyRequirements: slices.Clone(set.applyReqs), PlanRequirements: slices.Clone(set.planReqs),
		ImportRequirements: slices.Clone(set.importReqs), DeleteSourceBranchOnMerge: deleteBranch, RepoLocks: repoLocks,
		SilencePRComments: slices.Clone(set.silencePRComments), ExecutionPool: poolOf(set.executionPool)}
	if cfg != nil {
		out.Projects = make([]Project, len(cfg.Projects))
		for i, p := range cfg.Projects {
			p = p.clone()
			if p.Workflow == "" || !set.allowed(KeyWorkflow) {
				p.Workflow = serverWorkflow
			}
			if p.ApplyRequirements == nil || !set.allowed(KeyApplyRequirements) {
				p.ApplyRequirements = slices.Clone(set.applyReqs)
			}
			if p.PlanRequirements == nil || !set.allowed(KeyPlanRequirements) {
				p.PlanRequirements = slices.Clone(set.planReqs)
			}
			if p.ImportRequirements == nil || !set.allowed(KeyImportRequirements) {
				p.ImportRequirements = slices.Clone(set.importReqs)
			}
			if p.DeleteSourceBranchOnMerge == nil || !set.allowed(KeyDeleteSourceBranchOnMerge) {
				p.DeleteSourceBranchOnMerge = boolPtr(deleteBranch)
			}
			if !set.allowed(KeyCustomPolicyCheck) {
				p.CustomPolicyCheck = nil // the server's setting
			}
			if !set.allowed(KeyPolicyCheck) {
				p.PolicyCheck = nil // the server's setting
			}
			p.RepoLocks = set.projectLocks(p, repoLocks, cfg.RepoLocks != "")
			p.SilencePRComments = set.silenceFor(p, cfg)
			if p.ExecutionPool == "" || !set.allowed(KeyExecutionPool) {
				p.ExecutionPool = set.executionPool
			}
			p.ExecutionPool = poolOf(p.ExecutionPool)
			out.Projects[i] = p
		}
	}
	return out, nil
}

// projectLocks is the lock mode of project p, as Atlantis merges it when
// allowed_overrides lists repo_locking before repo_locks: the server's
// mode, then the project's deprecated repo_locking (false: disabled; true:
// on_plan if the server's was disabled), then the file's top-level
// repo_locks (already in fileMode when topSet), then the project's
// repo_locks. Atlantis applies the two keys in allowed_overrides order;
// Atoll always lets repo_locks, the newer key, win.
func (set serverSettings) projectLocks(p Project, fileMode string, topSet bool) string {
	mode := set.repoLocks
	if p.RepoLocking != nil && set.allowed(KeyRepoLocking) {
		switch {
		case !*p.RepoLocking:
			mode = LockDisabled
		case mode == LockDisabled:
			mode = LockOnPlan
		}
	}
	if topSet && set.allowed(KeyRepoLocks) {
		mode = fileMode
	}
	if p.RepoLocks != "" && set.allowed(KeyRepoLocks) {
		mode = p.RepoLocks
	}
	return mode
}

// silenceFor is a listed project's silence_pr_comments, as in Atlantis:
// with allowed_overrides listing the key, the project's, else the file's
// top-level one; otherwise (and when neither sets it) the server's.
func (set serverSettings) silenceFor(p Project, cfg *Config) []string {
	switch {
	case !set.allowed(KeySilencePRComments):
	case p.SilencePRComments != nil:
		return p.SilencePRComments
	case cfg.SilencePRComments != nil:
		return slices.Clone(cfg.SilencePRComments)
	}
	return slices.Clone(set.silencePRComments)
}

// poolOf is the resolved execution pool of a written one: "" for
// atoll.PoolLocal, so that jobs name the local pool one way only.
func poolOf(pool string) string {
	if pool == atoll.PoolLocal {
		return ""
	}
	return pool
}

// allowed reports whether allowed_overrides lists key.
func (set serverSettings) allowed(key string) bool { return slices.Contains(set.allowedOverrides, key) }

// check refuses what the repository's file may not set, first problem in
// file order, as Atlantis's ValidateRepoCfg does.
func (set serverSettings) check(cfg *Config, server map[string]Workflow) error {
	d := &decoder{file: fileOf(cfg)}
	for _, o := range cfg.overrides {
		if !set.allowed(o.key) {
			return atoll.Errorf(atoll.EINVALID, "%s line %d: %s: the server-side repo config does not allow this repository's config to set %s: it needs `allowed_overrides: [%s]` for the repository",
				d.file, o.line, o.path, o.key, o.key)
		}
	}
	if len(cfg.Workflows) > 0 && !set.allowCustomWorkflows {
		return atoll.Errorf(atoll.EINVALID, "%s line %d: workflows: the server-side repo config does not allow this repository to define custom workflows: it needs `allow_custom_workflows: true` for the repository",
			d.file, cfg.workflowsLine)
	}
	for _, o := range cfg.overrides {
		if o.key != KeyWorkflow {
			continue
		}
		_, inRepo := cfg.Workflows[o.value]
		_, inServer := server[o.value]
		if !inRepo && !inServer {
			return atoll.Errorf(atoll.EINVALID, "%s line %d: %s: workflow %q is not defined in the repository's or the server's workflows", d.file, o.line, o.path, o.value)
		}
		if len(set.allowedWorkflows) == 0 || (set.allowCustomWorkflows && inRepo) {
			continue
		}
		if !slices.Contains(set.allowedWorkflows, o.value) {
			return atoll.Errorf(atoll.EINVALID, "%s line %d: %s: workflow %q is not allowed for this repository by the server-side repo config (allowed_workflows: [%s])",
				d.file, o.line, o.path, o.value, strings.Join(set.allowedWorkflows, ", "))
		}
	}
	return nil
}

// fileOf names the file cfg was read from, for messages.
func fileOf(cfg *Config) string {
	if cfg.file != "" {
		return cfg.file
	}
	return FileNames[0]
}
