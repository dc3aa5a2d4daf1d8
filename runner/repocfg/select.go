package repocfg

import (
	"cmp"
	"slices"
)

// Select returns the projects that a change to changedFiles (repo-relative
// paths) should autoplan, sorted by dir, workspace and name: the projects
// Modified returns, less those with autoplan disabled.
func Select(cfg *Config, repoRoot string, changedFiles []string) ([]Project, error) {
	projects, err := Modified(cfg, repoRoot, changedFiles)
	if err != nil {
		return nil, err
	}
	out := projects[:0]
	for _, p := range projects {
		if p.Autoplan.Enabled {
			out = append(out, p)
		}
	}
	return out, nil
}

// Modified returns the projects that changedFiles (repo-relative paths)
// modify, sorted by dir, workspace and name. This is what a plan comment
// without -d, -w or -p plans: as in Atlantis, it includes projects whose
// autoplan is disabled.
//
// With a config that lists projects, those are the projects whose
// when_modified patterns match a changed file and whose dir exists in
// repoRoot (a project whose dir the pull request deleted cannot be
// planned). Otherwise projects are autodiscovered as described on discover.
func Modified(cfg *Config, repoRoot string, changedFiles []string) ([]Project, error) {
	files := cleanFiles(changedFiles)
	if cfg == nil || len(cfg.Projects) == 0 {
		found, err := discover(repoRoot, files)
		for i, p := range found {
			found[i] = cfg.adHoc(p.Dir, p.Workspace)
		}
		return found, err
	}
	var out []Project
	for _, p := range cfg.Projects {
		ok, err := matchesAny(p.Dir, p.Autoplan.WhenModified, files)
		if err != nil {
			return nil, err
		}
		if !ok {
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
	return sortProjects(out), nil
}

// Affected reports whether files, changed on the base branch, concern the
// project (name, dir, workspace); the undiverged requirement asks it. As in
// Atlantis: a configured project is concerned when its when_modified
// patterns match one of the files (autoplan enabled or not), or by any file
// when it has no patterns; without configured projects, when the files
// autodiscover its dir; an ad-hoc dir of a config that lists other
// projects, by the default when_modified patterns.
func Affected(cfg *Config, repoRoot, name, dir, workspace string, changedFiles []string) (bool, error) {
	files := cleanFiles(changedFiles)
	if len(files) == 0 {
		return false, nil
	}
	if cfg == nil || len(cfg.Projects) == 0 {
		found, err := discover(repoRoot, files)
		if err != nil {
			return false, err
		}
		for _, p := range found {
			if p.Dir == dir {
				return true, nil
			}
		}
		return false, nil
	}
	for _, p := range cfg.Projects {
		if p.Name == name && p.Dir == dir && p.Workspace == workspace {
			if len(p.Autoplan.WhenModified) == 0 {
				return true, nil
			}
			return matchesAny(p.Dir, p.Autoplan.WhenModified, files)
		}
	}
	return matchesAny(dir, DefaultWhenModified, files)
}

// sortProjects orders projects by dir, workspace and name, dropping exact
// duplicates, so results are stable for comments and job creation.
func sortProjects(ps []Project) []Project {
	slices.SortFunc(ps, func(a, b Project) int {
		return cmp.Or(cmp.Compare(a.Dir, b.Dir), cmp.Compare(a.Workspace, b.Workspace), cmp.Compare(a.Name, b.Name))
	})
	return slices.CompactFunc(ps, func(a, b Project) bool {
		return a.Dir == b.Dir && a.Workspace == b.Workspace && a.Name == b.Name
	})
}
