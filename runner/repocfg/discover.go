package repocfg

import (
	"path"
	"strings"

	"github.com/atollhq/atoll"
)

// discover finds projects without a config, following Atlantis:
//
//   - only changes to *.tf, *.tf.json, *.tfvars and *.tfvars.json count;
//   - a changed file's directory is a project (workspace default) if it holds
//     *.tf or *.tf.json files;
//   - a change anywhere under a "modules" directory plans the directory that
//     contains "modules" instead (the first such element of the path), if
//     that holds Terraform files: a module is not a root module;
//   - a change in an "env" directory without Terraform files (e.g.
//     env/prod.tfvars) plans the parent directory.
func discover(repoRoot string, files []string) ([]Project, error) {
	has := tfCache{root: repoRoot, seen: map[string]bool{}}
	found := map[string]bool{}
	var out []Project
	for _, f := range files {
		if !isTerraformChange(path.Base(f)) {
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
