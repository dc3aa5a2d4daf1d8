package repocfg

import (
	"gopkg.in/yaml.v3"
)

// topLevelKeys are the keys Atlantis v0.47 accepts at the top of
// atlantis.yaml.
var topLevelKeys = keySet("version", "projects", "workflows", "policies", "autodiscover", "automerge",
	"parallel_apply", "parallel_plan", "delete_source_branch_on_merge", "emoji_reaction",
	"allowed_regexp_prefixes", "abort_on_execution_order_fail", "repo_locks", "silence_pr_comments")

// keySet builds a set of key names.
func keySet(keys ...string) map[string]bool {
	m := make(map[string]bool, len(keys))
	for _, k := range keys {
		m[k] = true
	}
	return m
}

// projectNodes remembers where a project's values were written, for the
// checks that look across projects after the whole file is decoded.
type projectNodes struct {
	node, name, workflow *yaml.Node
	dependsOn            []*yaml.Node // the items of depends_on
	dependsOnNames       []string
	path                 string
}

// config decodes the document node of an atlantis.yaml.
func (d *decoder) config(doc *yaml.Node) (*Config, error) {
	if doc.Kind == 0 || len(doc.Content) == 0 {
		// yaml.v3 yields an empty node for an empty or comment-only file.
		return nil, d.errorf(&yaml.Node{Line: 1}, "version", "is required (the file is empty)")
	}
	root := resolve(doc.Content[0])
	fs, err := d.fields(root, "")
	if err != nil {
		return nil, err
	}
	cfg := &Config{Workflows: map[string]Workflow{}}
	var nodes []projectNodes
	hasVersion := false
	for _, f := range fs {
		if isNull(f.val) && f.name != "version" && topLevelKeys[f.name] {
			continue // "key:" with no value leaves the default
		}
		switch f.name {
		case "version":
			hasVersion = true
			if cfg.Version, err = d.integer(f.val, f.name); err == nil && cfg.Version != 2 && cfg.Version != 3 {
				err = d.errorf(f.val, f.name, "must be 2 or 3, got %d", cfg.Version)
			}
		case "automerge":
			cfg.Automerge, err = d.boolPtr(f.val, f.name)
		case "parallel_plan":
			cfg.ParallelPlan, err = d.boolPtr(f.val, f.name)
		case "parallel_apply":
			cfg.ParallelApply, err = d.boolPtr(f.val, f.name)
		case "delete_source_branch_on_merge":
			cfg.DeleteSourceBranchOnMerge, err = d.boolPtr(f.val, f.name)
		case "abort_on_execution_order_fail":
			cfg.AbortOnExecutionOrderFail, err = d.boolean(f.val, f.name)
		case "allowed_regexp_prefixes":
			cfg.AllowedRegexpPrefixes, err = d.strList(f.val, f.name, nil)
		case "emoji_reaction":
			var s string
			if s, err = d.str(f.val, f.name); err == nil && s != "" {
				d.warn(f.key, f.name, "")
			}
		case "silence_pr_comments":
			// Atlantis checks the values only per project.
			cfg.SilencePRComments, err = d.strList(f.val, f.name, nil)
		case "repo_locks":
			cfg.RepoLocks, err = d.repoLocks(f, f.name)
			cfg.repoLocksLine = f.key.Line
		case "autodiscover":
			cfg.Autodiscover, err = d.autodiscover(f, f.name)
		case "policies":
			if err = d.policies(f.val, f.name); err == nil {
				d.warn(f.key, f.name, "policy checks come from the server-side config, with --enable-policy-checks")
			}
		case "projects":
			cfg.Projects, nodes, err = d.projects(f.val, f.name)
		case "workflows":
			cfg.Workflows, err = d.workflows(f.val, f.name)
			cfg.workflowsLine = f.key.Line
		case KeyDriftDetection:
			if !isNull(f.val) {
				cfg.Drift, err = d.driftDetection(f, f.name, true)
				d.overrides = append(d.overrides, override{key: KeyDriftDetection, path: f.name, line: f.key.Line})
			}
		case KeyExecutionPool:
			err = d.errorf(f.key, f.name, "is set per project (projects[].execution_pool), or for the repository in the server-side repo config; there is no top-level execution_pool")
		default:
			err = d.unknownKey(f, "")
		}
		if err != nil {
			return nil, err
		}
	}
	if !hasVersion {
		return nil, d.errorf(root, "version", "is required (use version: 3)")
	}
	if d.root != "" {
		if cfg.Projects, nodes, err = d.expandGlobs(cfg.Projects, nodes); err != nil {
			return nil, err
		}
	}
	if err := d.checkProjects(cfg, nodes); err != nil {
		return nil, err
	}
	if err := d.checkDependsOn(cfg, nodes); err != nil {
		return nil, err
	}
	if cfg.Version == 2 {
		if err := d.checkLegacyShell(); err != nil {
			return nil, err
		}
	}
	cfg.Warnings = d.warnings
	cfg.overrides = d.overrides
	return cfg, nil
}

// projects decodes the projects list.
func (d *decoder) projects(n *yaml.Node, path string) ([]Project, []projectNodes, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, nil, d.typeError(n, path, "a list of projects")
	}
	projects := make([]Project, 0, len(n.Content))
	nodes := make([]projectNodes, 0, len(n.Content))
	for i, item := range n.Content {
		p, pn, err := d.project(item, index(path, i))
		if err != nil {
			return nil, nil, err
		}
		projects = append(projects, p)
		nodes = append(nodes, pn)
	}
	return projects, nodes, nil
}
