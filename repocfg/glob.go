package repocfg

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// projectIndicators are the files that make a directory a project for a
// dir glob, as in Atlantis.
var projectIndicators = []string{"*.tf", "*.tf.json", "*.tofu", "*.tofu.json", "terragrunt.hcl"}

// expandGlobs replaces each project whose dir is a glob pattern with one
// project per directory of the checkout that matches it and directly holds
// Terraform files, in path order, as Atlantis v0.47 does. A pattern that
// matches nothing yields no project.
func (d *decoder) expandGlobs(projects []Project, nodes []projectNodes) ([]Project, []projectNodes, error) {
	var outP []Project
	var outN []projectNodes
	root := os.DirFS(d.root)
	for i, p := range projects {
		if !hasGlob(p.Dir) {
			outP, outN = append(outP, p), append(outN, nodes[i])
			continue
		}
		matches, err := doublestar.Glob(root, p.Dir)
		if err != nil {
			return nil, nil, d.errorf(nodes[i].node, join(nodes[i].path, "dir"), "%v", err)
		}
		for _, m := range matches {
			if linked(d.root, m) {
				continue // a pattern must not lead out of the checkout
			}
			ok, err := isProjectDir(root, m)
			if err != nil {
				return nil, nil, fmt.Errorf("repocfg: expand %s: %w", p.Dir, err)
			}
			if !ok {
				continue
			}
			e := p.clone()
			e.Dir = path.Clean(m)
			outP, outN = append(outP, e), append(outN, nodes[i])
		}
	}
	return outP, outN, nil
}

// isProjectDir reports whether dir is a directory holding a project
// indicator file.
func isProjectDir(root fs.FS, dir string) (bool, error) {
	if dir == "" || dir == ".." || strings.HasPrefix(dir, "../") {
		return false, nil
	}
	st, err := fs.Stat(root, dir)
	if absent(err) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	if !st.IsDir() {
		return false, nil
	}
	entries, err := fs.ReadDir(root, dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		for _, ind := range projectIndicators {
			if ok, _ := path.Match(ind, e.Name()); ok {
				return true, nil
			}
		}
	}
	return false, nil
}

// linked reports whether any element of dir (relative to root) is a
// symbolic link, or cannot be inspected.
func linked(root, dir string) bool {
	p := root
	for _, elem := range strings.Split(dir, "/") {
		p = filepath.Join(p, elem)
		st, err := os.Lstat(p)
		if err != nil || st.Mode()&fs.ModeSymlink != 0 {
			return true
		}
	}
	return false
}
