package repocfg

import (
	"cmp"
	"slices"
)

// Select returns the projects that a change to changedFiles (repo-relative
// paths) should autoplan, sorted by dir, workspace and name.
//
// With a config that lists projects, those are the projects with autoplan
// enabled whose when_modified patterns match a changed file and whose dir
// exists in repoRoot (a project whose dir the pull request deleted cannot be
// planned). Otherwise projects are autodiscovered as described on discover.
func Select(cfg *Config, repoRoot string, changedFiles []string) ([]Project, error) {
	files := cleanFiles(changedFiles)
	if cfg == nil || len(cfg.Projects) == 0 {
		return discover(repoRoot, files)
	}
	var out []Project
	for _, p := range cfg.Projects {
		if !p.Autoplan.Enabled {
			continue
		}
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
