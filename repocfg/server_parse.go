package repocfg

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ParseServerConfig parses a server-side repo config (YAML, or JSON, which
// is YAML) read from the file name (used in messages). Unknown keys and
// invalid values are *atoll.Error EINVALID errors naming the file, line
// and key path, e.g. "repos.yaml line 4: repos[0].allowed_overrides[1]:
// ...". The result starts with DefaultServerRepo, as in Atlantis.
func ParseServerConfig(name string, data []byte) (*ServerConfig, error) {
	if len(data) > maxFileSize {
		return nil, (&decoder{file: name}).errorf(&yaml.Node{Line: 1}, "", "larger than %d bytes", maxFileSize)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, syntaxError(name, err)
	}
	d := &decoder{file: name}
	sc := DefaultServerConfig()
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return sc, nil // an empty file is the default config
	}
	fs, err := d.fields(doc.Content[0], "")
	if err != nil {
		return nil, err
	}
	var repos *yaml.Node
	for _, f := range fs {
		if isNull(f.val) && serverTopKeys[f.name] {
			continue
		}
		switch f.name {
		case "repos":
			repos = f.val // decoded after workflows, which entries refer to
		case "workflows":
			var ws map[string]Workflow
			if ws, err = d.workflows(f.val, f.name); err == nil {
				for k, w := range ws {
					sc.Workflows[k] = w
				}
			}
		case "policies":
			sc.Policies, err = d.serverPolicies(f.val, f.name)
		case "team_authz":
			sc.TeamAuthz, err = d.teamAuthz(f.val, f.name)
		case "execution_pools":
			sc.ExecutionPools, err = d.executionPools(f.val, f.name)
		case "metrics", "external_stores":
			if _, err = d.fields(f.val, f.name); err == nil {
				d.warn(f.key, f.name, "")
			}
		default:
			err = d.unknownKey(f, "")
		}
		if err != nil {
			return nil, err
		}
	}
	if repos != nil && !isNull(repos) {
		n := resolve(repos)
		if n.Kind != yaml.SequenceNode {
			return nil, d.typeError(n, "repos", "a list of repository entries")
		}
		for i, item := range n.Content {
			r, err := d.serverRepo(item, index("repos", i), sc.Workflows)
			if err != nil {
				return nil, err
			}
			sc.Repos = append(sc.Repos, r)
		}
	}
	sc.Warnings = d.warnings
	return sc, nil
}

// serverRepo decodes one entry of repos; workflows are the server's, which
// workflow and allowed_workflows must name.
func (d *decoder) serverRepo(n *yaml.Node, p string, workflows map[string]Workflow) (ServerRepo, error) {
	n = resolve(n)
	r := ServerRepo{Line: n.Line}
	fs, err := d.fields(n, p)
	if err != nil {
		return r, err
	}
	hasID := false
	var pool *yaml.Node // execution_pool, checked once the id is known
	for _, f := range fs {
		fp := join(p, f.name)
		if isNull(f.val) && serverRepoKeys[f.name] && f.name != "id" {
			continue
		}
		switch f.name {
		case "id":
			hasID = true
			var id string
			if id, err = d.str(f.val, fp); err == nil {
				if id == "" {
					err = d.errorf(resolve(f.val), fp, "must not be empty")
				} else if re, ok := regexValue(id); ok {
					r.IDRegex, err = d.regex(f.val, fp, re)
				} else {
					r.ID = id
				}
			}
		case "branch":
			var b string
			if b, err = d.str(f.val, fp); err == nil && b != "" {
				re, ok := regexValue(b)
				if !ok {
					err = d.errorf(resolve(f.val), fp, "must be a regex between slashes, e.g. /^main$/")
				} else {
					r.BranchRegex, err = d.regex(f.val, fp, re)
				}
			}
		case "repo_config_file":
			if r.RepoConfigFile, err = d.str(f.val, fp); err == nil {
				err = d.check(f.val, fp, r.RepoConfigFile, checkRepoConfigFile)
			}
		case "workflow":
			var w string
			if w, err = d.str(f.val, fp); err == nil {
				if _, ok := workflows[w]; !ok {
					err = d.errorf(resolve(f.val), fp, "workflow %q is not defined in workflows%s", w, defined(workflows))
				}
				r.Workflow = &w
			}
		case "plan_requirements":
			r.PlanRequirements, err = d.strList(f.val, fp, d.requirement)
		case "apply_requirements":
			r.ApplyRequirements, err = d.strList(f.val, fp, d.requirement)
		case "import_requirements":
			r.ImportRequirements, err = d.strList(f.val, fp, d.requirement)
		case "allowed_overrides":
			r.AllowedOverrides, err = d.strList(f.val, fp, func(item *yaml.Node, ip, s string) error {
				return d.check(item, ip, s, oneOf(OverrideKeys))
			})
		case "allowed_workflows":
			r.AllowedWorkflows, err = d.strList(f.val, fp, func(item *yaml.Node, ip, s string) error {
				if _, ok := workflows[s]; !ok {
					return d.errorf(item, ip, "workflow %q is not defined in workflows%s", s, defined(workflows))
				}
				return nil
			})
		case "allow_custom_workflows":
			r.AllowCustomWorkflows, err = d.boolPtr(f.val, fp)
		case "delete_source_branch_on_merge":
			r.DeleteSourceBranchOnMerge, err = d.boolPtr(f.val, fp)
		case "repo_locking":
			r.RepoLocking, err = d.boolPtr(f.val, fp)
		case "repo_locks":
			var mode string
			if mode, err = d.repoLocks(f, fp); err == nil {
				r.RepoLocksMode = &mode
			}
		case "policy_check":
			r.PolicyCheck, err = d.boolPtr(f.val, fp) // see PolicyCheckFor
		case "custom_policy_check":
			r.CustomPolicyCheck, err = d.boolPtr(f.val, fp) // see CustomPolicyCheckFor
		case "silence_pr_comments":
			r.SilencePRComments, err = d.strList(f.val, fp, func(item *yaml.Node, ip, s string) error {
				return d.check(item, ip, s, oneOf(SilenceStages))
			})
		case "execution_pool":
			var name string
			if name, err = d.str(f.val, fp); err == nil {
				r.ExecutionPool, pool = &name, f.val
			}
		case "autodiscover":
			r.Autodiscover, err = d.autodiscover(f, fp)
		case KeyDriftDetection:
			r.Drift, err = d.driftDetection(f, fp, false)
		case "pre_workflow_hooks":
			r.PreWorkflowHooks, err = d.hooks(f.val, fp)
		case "post_workflow_hooks":
			r.PostWorkflowHooks, err = d.hooks(f.val, fp)
		default:
			err = d.unknownKey(f, p)
		}
		if err != nil {
			return r, err
		}
	}
	if !hasID {
		return r, d.errorf(n, p, "id is required (host/owner/name, or /regex/)")
	}
	if r.IDRegex == nil && r.ID == "" {
		return r, d.errorf(n, join(p, "id"), "is required (host/owner/name, or /regex/)")
	}
	if dr := r.Drift; dr != nil && dr.Branch != "" && r.BranchRegex != nil && !r.BranchRegex.MatchString(dr.Branch) {
		return r, d.errorf(&yaml.Node{Line: dr.Line}, join(p, "drift_detection.branch"), "%q is not served by the entry: its branch regex /%s/ does not match it", dr.Branch, r.BranchRegex)
	}
	if pool != nil {
		if err := CheckPool(*r.ExecutionPool); err != nil {
			return r, d.errorf(resolve(pool), join(p, "execution_pool"), "repository %s: %v", r.IDString(), err)
		}
	}
	return r, nil
}

// regex compiles the inside of a /regex/ value.
func (d *decoder) regex(n *yaml.Node, p, re string) (*regexp.Regexp, error) {
	c, err := regexp.Compile(re)
	if err != nil {
		return nil, d.errorf(resolve(n), p, "invalid regex: %v", err)
	}
	return c, nil
}

// boolPtr decodes a boolean that may be left unset.
func (d *decoder) boolPtr(n *yaml.Node, p string) (*bool, error) {
	b, err := d.boolean(n, p)
	if err != nil {
		return nil, err
	}
	return &b, nil
}

// hooks decodes a list of workflow hooks: {run: cmd, description, shell,
// shellArgs, commands}.
func (d *decoder) hooks(n *yaml.Node, p string) ([]Hook, error) {
	n = resolve(n)
	if n.Kind != yaml.SequenceNode {
		return nil, d.typeError(n, p, "a list of hooks")
	}
	out := make([]Hook, 0, len(n.Content))
	for i, item := range n.Content {
		ip := index(p, i)
		fs, err := d.fields(item, ip)
		if err != nil {
			return nil, err
		}
		var h Hook
		for _, f := range fs {
			fp := join(ip, f.name)
			if !hookKeys[f.name] {
				return nil, d.unknownKey(f, ip)
			}
			s, err := d.text(f.val, fp)
			if err != nil {
				return nil, err
			}
			switch f.name {
			case "run":
				h.Run = s
			case "description":
				h.Description = s
			case "shell":
				h.Shell = s
			case "shellArgs":
				h.ShellArgs = s
			case "commands":
				for _, c := range strings.Split(s, ",") {
					if c = strings.TrimSpace(c); c != "" {
						h.Commands = append(h.Commands, c)
					}
				}
			}
		}
		if strings.TrimSpace(h.Run) == "" {
			return nil, d.errorf(resolve(item), ip, "run is required (the command to run)")
		}
		out = append(out, h)
	}
	return out, nil
}

// checkRepoConfigFile keeps repo_config_file inside the checkout.
func checkRepoConfigFile(s string) error {
	switch {
	case s == "":
		return nil
	case strings.HasPrefix(s, "/") || strings.HasPrefix(s, `\`) || (len(s) > 1 && s[1] == ':'):
		return errors.New("must be a path inside the repository, not an absolute path")
	case slices.Contains(strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }), ".."):
		//lint:ignore ST1005 ".." is the text users must remove, not punctuation
		return errors.New("must not contain ..")
	case path.Clean(s) == "." || strings.HasSuffix(s, "/"):
		return fmt.Errorf("%q is not a file path", s)
	}
	return nil
}
