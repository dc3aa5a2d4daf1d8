package repocfg

import (
	"path"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/bmatcuk/doublestar/v4"
)

// discover finds projects without a config, following Atlantis:
//
//   - only changes to *.tf, *.tf.json, *.tofu, *.tofu.json, *.tfvars and
//     *.tfvars.json count, or, when fileList is not nil
//     (--autoplan-file-list), to files one of its globs matches;
//   - a changed file's directory is a project (workspace default) if it holds
//     *.tf or *.tf.json files;
//   - a change anywhere under a "modules" directory plans the directory that
//     contains "modules" instead (the first such element of the path), if
//     that holds Terraform files: a module is not a root module;
//   - a change in an "env" directory without Terraform files (e.g.
//     env/prod.tfvars) plans the parent directory.
func discover(repoRoot string, files, fileList []string) ([]Project, error) {
	has := tfCache{root: repoRoot, seen: map[string]bool{}}
	found := map[string]bool{}
	var out []Project
	for _, f := range files {
		if !autoplanFile(f, fileList) {
			continue
		}
		dir, ok, err := projectDir(&has, path.Dir(f))
		if err != nil {
			return nil, err
		}
		if ok && !found[dir] {
			found[dir] = true
			out = append(out, newProject(dir, atoll.DefaultWorkspace))
		}
	}
	return sortProjects(out), nil
}

// projectDir maps the directory of a changed file to the root module it
// belongs to; ok is false when there is none.
func projectDir(has *tfCache, dir string) (string, bool, error) {
	elems := strings.Split(dir, "/")
	for i, e := range elems {
		if e == "modules" {
			parent := "."
			if i > 0 {
				parent = strings.Join(elems[:i], "/")
			}
			ok, err := has.check(parent)
			return parent, ok, err
		}
	}
	if ok, err := has.check(dir); ok || err != nil {
		return dir, ok, err
	}
	if path.Base(dir) == "env" {
		parent := path.Dir(dir)
		ok, err := has.check(parent)
		return parent, ok, err
	}
	return dir, false, nil
}

// tfCache memoises hasTerraform, since a pull request often changes many
// files in the same few directories.
type tfCache struct {
	root string
	seen map[string]bool
}

func (c *tfCache) check(dir string) (bool, error) {
	if ok, hit := c.seen[dir]; hit {
		return ok, nil
	}
	ok, err := hasTerraform(c.root, dir)
	if err != nil {
		return false, err
	}
	c.seen[dir] = ok
	return ok, nil
}

// autoplanFile reports whether a change to f (repo-relative) can autoplan
// its directory: a match of one of fileList's globs, or, when fileList is
// nil, a Terraform configuration or variable file.
func autoplanFile(f string, fileList []string) bool {
	if fileList == nil {
		return isTerraformChange(path.Base(f))
	}
	for _, pat := range fileList {
		if doublestar.MatchUnvalidated(pat, f) {
			return true
		}
	}
	return false
}

// ParseAutoplanFileList splits --autoplan-file-list (comma-separated
// doublestar globs) and checks each; "" yields nil, the built-in rule.
func ParseAutoplanFileList(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out []string
	for _, pat := range strings.Split(s, ",") {
		pat = strings.TrimSpace(pat)
		switch {
		case pat == "":
			continue
		case strings.HasPrefix(pat, "!"):
			return nil, atoll.Errorf(atoll.EINVALID, "--autoplan-file-list: exclusion %q is not supported", pat)
		case !doublestar.ValidatePattern(pat):
			return nil, atoll.Errorf(atoll.EINVALID, "--autoplan-file-list: invalid pattern %q", pat)
		}
		out = append(out, pat)
	}
	if out == nil {
		return nil, atoll.Errorf(atoll.EINVALID, "--autoplan-file-list: no patterns in %q", s)
	}
	return out, nil
}
