package repocfg

import (
	"github.com/atollhq/atoll"
	"gopkg.in/yaml.v3"
)

// projectKeys are the keys Atlantis defines for a project.
var projectKeys = keySet("name", "branch", "dir", "workspace", "execution_order_group",
	"delete_source_branch_on_merge", "repo_locking", "repo_locks", "custom_policy_check", "autoplan",
	"terraform_version", "terraform_distribution", "depends_on", "apply_requirements",
	"plan_requirements", "import_requirements", "workflow", "silence_pr_comments", "policy_check")

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
				p.Dir, err = cleanDir(raw)
				err = d.wrap(f.val, fp, err)
			}
		case "workspace":
			if p.Workspace, err = d.str(f.val, fp); err == nil {
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
			_, err = d.strList(f.val, fp, d.requirement) // accepted, ignored
		case "branch", "terraform_distribution":
			_, err = d.str(f.val, fp) // accepted, ignored
		case "execution_order_group":
			_, err = d.integer(f.val, fp) // accepted, ignored
		case "delete_source_branch_on_merge", "repo_locking", "custom_policy_check":
			_, err = d.boolean(f.val, fp) // accepted, ignored
		case "depends_on", "silence_pr_comments":
			_, err = d.strList(f.val, fp, nil) // accepted, ignored
		case "repo_locks", "policy_check":
			err = d.anyValue(f.val, fp) // accepted, ignored; shape varies by Atlantis version
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

// anyValue accepts any well-formed value; it exists so ignored keys whose
// schema Atoll does not model still go through alias resolution.
func (d *decoder) anyValue(n *yaml.Node, path string) error {
	var v any
	if err := resolve(n).Decode(&v); err != nil {
		return d.errorf(n, path, "%v", err)
	}
	return nil
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
