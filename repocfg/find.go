package repocfg

import (
	"fmt"
	"os"
	"path"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/bmatcuk/doublestar/v4"
)

// Find returns the projects a comment command targets.
//
// A non-empty name (-p) selects the configured project of that name; dir and
// workspace are then ignored. It is an error if there is no such project, or
// no config to name projects in.
//
// Otherwise dir (-d, default ".") and workspace (-w, default "default")
// select the configured projects with that dir and workspace; when there are
// none, or no config, the dir is planned as an ad-hoc project with default
// settings, as Atlantis does.
//
// Either way, every returned project's dir must exist in repoRoot.
func Find(cfg *Config, repoRoot, name, dir, workspace string) ([]Project, error) {
	if name != "" {
		return findByName(cfg, repoRoot, name)
	}
	if dir == "" {
		dir = "."
	}
	if hasGlob(dir) {
		return findByPattern(cfg, repoRoot, dir, workspace)
	}
	clean, err := cleanDir(dir)
	if err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid directory: %v", err)
	}
	if workspace == "" {
		workspace = atoll.DefaultWorkspace
	}
	if err := checkWorkspace(workspace); err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid workspace: %v", err)
	}
	if err := mustExist(repoRoot, clean); err != nil {
		return nil, err
	}
	var out []Project
	if cfg != nil {
		for _, p := range cfg.Projects {
			if p.Dir == clean && p.Workspace == workspace {
				out = append(out, p.clone())
			}
		}
	}
	if len(out) == 0 {
		out = append(out, cfg.adHoc(clean, workspace))
	}
	return sortProjects(out), nil
}

// findByName resolves -p.
func findByName(cfg *Config, repoRoot, name string) ([]Project, error) {
	if cfg == nil || len(cfg.Projects) == 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "cannot select project %q by name: the repository's atlantis.yaml defines no projects", name)
	}
	for _, p := range cfg.Projects {
		if p.Name == name {
			if err := mustExist(repoRoot, p.Dir); err != nil {
				return nil, err
			}
			return []Project{p.clone()}, nil
		}
	}
	return nil, atoll.Errorf(atoll.EINVALID, "no project named %q in atlantis.yaml", name)
}

// mustExist fails with a user-facing error when dir is not a directory.
func mustExist(repoRoot, dir string) error {
	ok, err := isDir(repoRoot, dir)
	if err != nil {
		return err
	}
	if !ok {
		return atoll.Errorf(atoll.EINVALID, "directory %s does not exist", dir)
	}
	return nil
}

// findByPattern resolves a -d glob pattern, as Atlantis v0.47: the
// configured projects of the workspace whose dir it matches (doublestar)
// and exists; and, when cfg autodiscovers, the checkout's directories it
// matches that directly hold Terraform files (not through a symbolic link,
// not a configured project's dir, not ignored). Never a path outside the
// checkout. Matching nothing is an error (Atlantis plans nothing).
func findByPattern(cfg *Config, repoRoot, pattern, workspace string) ([]Project, error) {
	if workspace == "" {
		workspace = atoll.DefaultWorkspace
	}
	if err := checkWorkspace(workspace); err != nil {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid workspace: %v", err)
	}
	if strings.Contains(pattern, "..") || strings.HasPrefix(pattern, "/") || !doublestar.ValidatePattern(pattern) {
		return nil, atoll.Errorf(atoll.EINVALID, "invalid -d pattern %q", pattern)
	}
	var out []Project
	for _, p := range cfg.projects() {
		if ok, _ := doublestar.Match(pattern, p.Dir); !ok || p.Workspace != workspace {
			continue
		}
		exists, err := isDir(repoRoot, p.Dir)
		if err != nil {
			return nil, err
		}
		if exists {
			out = append(out, p.clone())
		}
	}
	if cfg.Discovers() {
		root := os.DirFS(repoRoot)
		matches, err := doublestar.Glob(root, pattern)
		if err != nil {
			return nil, atoll.Errorf(atoll.EINVALID, "invalid -d pattern %q: %v", pattern, err)
		}
		for _, m := range matches {
			m = path.Clean(m)
			if cfg.hasDir(m) || cfg.ignored(m) || linked(repoRoot, m) {
				continue
			}
			ok, err := isProjectDir(root, m)
			if err != nil {
				return nil, fmt.Errorf("repocfg: -d %s: %w", pattern, err)
			}
			if ok {
				out = append(out, cfg.adHoc(m, workspace))
			}
		}
	}
	if len(out) == 0 {
		return nil, atoll.Errorf(atoll.EINVALID, "no project matches -d %s in workspace %s", pattern, workspace)
	}
	return sortProjects(out), nil
}
