package repocfg

import (
	"cmp"
	"slices"

	"github.com/bmatcuk/doublestar/v4"
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
// These are the configured projects whose when_modified patterns match a
// changed file and whose dir exists in repoRoot (a project whose dir the
// pull request deleted cannot be planned), and, when autodiscovery is on
// (see Config.Discovers), the projects discovered as described on
// discover in dirs no configured project has and ignore_paths does not
// match.
func Modified(cfg *Config, repoRoot string, changedFiles []string) ([]Project, error) {
	files := cleanFiles(changedFiles)
	var out []Project
	for _, p := range cfg.projects() {
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
	found, err := cfg.discovered(repoRoot, files)
	if err != nil {
		return nil, err
	}
	for _, p := range found {
		out = append(out, cfg.adHoc(p.Dir, p.Workspace))
	}
	return sortProjects(out), nil
}

// Discovers reports whether projects are autodiscovered, as Atlantis's
// autodiscover mode: auto (the default) when the config lists no
// projects, enabled always, disabled never.
func (cfg *Config) Discovers() bool {
	mode := "auto"
	if cfg != nil && cfg.Autodiscover != nil {
		mode = cfg.Autodiscover.Mode
	}
	switch mode {
	case "enabled":
		return true
	case "disabled":
		return false
	}
	return len(cfg.projects()) == 0
}

func (cfg *Config) autoplanFileList() []string {
	if cfg == nil {
		return nil
	}
	return cfg.AutoplanFileList
}

func (cfg *Config) projects() []Project {
	if cfg == nil {
		return nil
	}
	return cfg.Projects
}

// discovered returns the projects files autodiscover, when cfg discovers:
// not those in a configured project's dir (it wins, even when its
// when_modified did not match) nor those ignore_paths matches.
func (cfg *Config) discovered(repoRoot string, files []string) ([]Project, error) {
	if !cfg.Discovers() {
		return nil, nil
	}
	found, err := discover(repoRoot, files, cfg.autoplanFileList())
	if err != nil {
		return nil, err
	}
	out := found[:0]
	for _, p := range found {
		if !cfg.hasDir(p.Dir) && !cfg.ignored(p.Dir) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (cfg *Config) hasDir(dir string) bool {
	for _, p := range cfg.projects() {
		if p.Dir == dir {
			return true
		}
	}
	return false
}

// ignored reports whether autodiscover.ignore_paths matches dir.
func (cfg *Config) ignored(dir string) bool {
	if cfg == nil || cfg.Autodiscover == nil {
		return false
	}
	for _, pat := range cfg.Autodiscover.IgnorePaths {
		if doublestar.MatchUnvalidated(pat, dir) {
			return true
		}
	}
	return false
}

// Affected reports whether files, changed on the base branch, concern the
// project (name, dir, workspace); the undiverged requirement asks it. As in
// Atlantis: a configured project is concerned when its when_modified
// patterns match one of the files (autoplan enabled or not), or by any file
// when it has no patterns; a discovered project when the files autodiscover
// its dir; an ad-hoc dir of a config that lists other projects, by the
// default when_modified patterns.
func Affected(cfg *Config, repoRoot, name, dir, workspace string, changedFiles []string) (bool, error) {
	files := cleanFiles(changedFiles)
	if len(files) == 0 {
		return false, nil
	}
	for _, p := range cfg.projects() {
		if p.Name == name && p.Dir == dir && p.Workspace == workspace {
			if len(p.Autoplan.WhenModified) == 0 {
				return true, nil
			}
			return matchesAny(p.Dir, p.Autoplan.WhenModified, files)
		}
	}
	if len(cfg.projects()) == 0 {
		found, err := discover(repoRoot, files, cfg.autoplanFileList())
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
