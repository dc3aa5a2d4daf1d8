package repocfg

import (
	"github.com/atollhq/atoll"
	"gopkg.in/yaml.v3"
	"regexp"
	"slices"
)

// projectKeys are the keys Atlantis defines for a project.
var projectKeys = keySet("name", "branch", "dir", "workspace", "execution_order_group",
	"delete_source_branch_on_merge", "repo_locking", "repo_locks", "custom_policy_check", "autoplan",
	"terraform_version", "terraform_distribution", "depends_on", "apply_requirements",
	"plan_requirements", "import_requirements", "workflow", "silence_pr_comments", "policy_check",
	"execution_pool") // execution_pool is Atoll's

// overridable are the project keys a server-side repo config must list
// in allowed_overrides for atlantis.yaml to set them.
var overridable = keySet(OverrideKeys...)

// project decodes one entry of the projects list.
func (d *decoder) project(n *yaml.Node, path string) (Project, projectNodes, error) {
	n = resolve(n)
	pn := projectNodes{node: n, path: path}
	fs, err := d.fields(n, path)
	if err != nil {
		return Project{}, pn, err
	}
	p := newProject("", atoll.DefaultWorkspace)
	hasDir := false
	for _, f := range fs {
		fp := join(path, f.name)
		if isNull(f.val) && projectKeys[f.name] {
			if f.name == "dir" {
				return p, pn, d.errorf(f.val, fp, "is required")
			}
			continue // unset: keep the default
		}
		if overridable[f.name] {
			d.overrides = append(d.overrides, override{key: f.name, path: fp, line: f.key.Line, value: resolve(f.val).Value})
		}
		switch f.name {
		case "name":
			pn.name = resolve(f.val)
			if p.Name, err = d.str(f.val, fp); err == nil {
				err = d.check(f.val, fp, p.Name, checkName)
			}
		case "dir":
			hasDir = true
			var raw string
			if raw, err = d.str(f.val, fp); err == nil {
				p.Dir, err = configDir(raw)
				err = d.wrap(f.val, fp, err)
			}
		case "workspace":
			if p.Workspace, err = d.str(f.val, fp); err == nil {
				if p.Workspace == "" {
					p.Workspace = atoll.DefaultWorkspace // as in Atlantis
				}
				err = d.check(f.val, fp, p.Workspace, checkWorkspace)
			}
		case "terraform_version":
			if p.TerraformVersion, err = d.str(f.val, fp); err == nil {
				err = d.check(f.val, fp, p.TerraformVersion, checkTerraformVersion)
			}
		case "workflow":
			pn.workflow = resolve(f.val)
			p.Workflow, err = d.str(f.val, fp)
		case "autoplan":
			p.Autoplan, err = d.autoplan(f.val, fp)
		case "apply_requirements":
			p.ApplyRequirements, err = d.strList(f.val, fp, d.requirement)
		case "plan_requirements":
			p.PlanRequirements, err = d.strList(f.val, fp, d.requirement)
		case "import_requirements":
			p.ImportRequirements, err = d.strList(f.val, fp, d.requirement)
		case "branch":
			var b string
			if b, err = d.str(f.val, fp); err == nil {
				if err = d.check(f.val, fp, b, checkBranch); err == nil {
					p.Branch = regexp.MustCompile(b[1 : len(b)-1]) // checkBranch compiled it
				}
			}
		case "terraform_distribution":
			if p.TerraformDistribution, err = d.str(f.val, fp); err == nil {
				err = d.check(f.val, fp, p.TerraformDistribution, oneOf(Distributions))
			}
		case "execution_order_group":
			p.ExecutionOrderGroup, err = d.integer(f.val, fp)
		case "delete_source_branch_on_merge":
			p.DeleteSourceBranchOnMerge, err = d.boolPtr(f.val, fp)
		case "custom_policy_check":
			p.CustomPolicyCheck, err = d.boolPtr(f.val, fp)
		case "policy_check":
			p.PolicyCheck, err = d.boolPtr(f.val, fp)
		case "repo_locking":
			p.RepoLocking, err = d.boolPtr(f.val, fp)
		case "repo_locks":
			p.RepoLocks, err = d.repoLocks(f, fp)
		case "execution_pool":
			if p.ExecutionPool, err = d.str(f.val, fp); err == nil {
				err = d.check(f.val, fp, p.ExecutionPool, CheckPool)
			}
		case "depends_on":
			pn.dependsOnNames, err = d.strList(f.val, fp, func(item *yaml.Node, _, _ string) error {
				pn.dependsOn = append(pn.dependsOn, item)
				return nil
			})
			p.DependsOn = slices.Clone(pn.dependsOnNames)
		case "silence_pr_comments":
			p.SilencePRComments, err = d.strList(f.val, fp, func(item *yaml.Node, p, s string) error {
				return d.check(item, p, s, oneOf(SilenceStages))
			})
		default:
			err = d.unknownKey(f, path)
		}
		if err != nil {
			return p, pn, err
		}
	}
	if !hasDir {
		return p, pn, d.errorf(n, path, "dir is required (use \".\" for the repository root)")
	}
	if p.Name != "" && hasGlob(p.Dir) {
		// As Atlantis's ParseRepoCfg (which expands dir globs before it
		// validates), the entry stands for one project per matching
		// directory, and none of them takes the name: several projects
		// cannot share it.
		d.warn(pn.name, join(path, "name"), "a glob dir expands to projects without a name, as in Atlantis")
		p.Name = ""
	}
	return p, pn, nil
}

// autoplan decodes a project's autoplan mapping; keys left out keep the
// defaults (enabled, DefaultWhenModified).
func (d *decoder) autoplan(n *yaml.Node, path string) (Autoplan, error) {
	a := Autoplan{Enabled: true, WhenModified: append([]string(nil), DefaultWhenModified...)}
	fs, err := d.fields(n, path)
	if err != nil {
		return a, err
	}
	for _, f := range fs {
		fp := join(path, f.name)
		if isNull(f.val) && (f.name == "enabled" || f.name == "when_modified") {
			continue
		}
		switch f.name {
		case "enabled":
			a.Enabled, err = d.boolean(f.val, fp)
		case "when_modified":
			a.WhenModified, err = d.strList(f.val, fp, func(item *yaml.Node, p, s string) error {
				return d.check(item, p, s, checkGlob)
			})
		default:
			err = d.unknownKey(f, path)
		}
		if err != nil {
			return a, err
		}
	}
	return a, nil
}

// requirement checks one apply/plan/import requirement.
func (d *decoder) requirement(item *yaml.Node, path, s string) error {
	return d.check(item, path, s, checkRequirement)
}

// check runs a value checker and locates its failure at n.
func (d *decoder) check(n *yaml.Node, path, s string, fn func(string) error) error {
	return d.wrap(n, path, fn(s))
}

// wrap locates a checker's error at n; nil stays nil.
func (d *decoder) wrap(n *yaml.Node, path string, err error) error {
	if err == nil {
		return nil
	}
	return d.errorf(resolve(n), path, "%s", err.Error())
}
