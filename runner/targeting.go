package runner

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
	"github.com/atollhq/atoll/repocfg"
)

// findTargeted resolves a command's -p, -d and -w. With
// --enable-regexp-cmd, -p is a regular expression over project names;
// with --restrict-file-list, a targeted plan must target what the pull
// request modifies, as in Atlantis.
func (r *Runner) findTargeted(ctx context.Context, w *work, cfg *repocfg.Config, root string, cmd *command.Command) ([]repocfg.Project, error) {
	var projects []repocfg.Project
	var err error
	if cmd.ProjectRegexp != nil {
		projects, err = repocfg.FindByRegexp(cfg, root, cmd.ProjectRegexp, cmd.Project)
	} else {
		projects, err = repocfg.Find(cfg, root, cmd.Project, cmd.Dir, cmd.Workspace)
	}
	if err != nil || !r.RestrictFileList || cmd.Name != command.Plan {
		return projects, err
	}
	files, err := w.vcs.ChangedFiles(ctx, *w.repo, w.pull.Number)
	if err != nil {
		return nil, fmt.Errorf("list the pull request's files: %w", err)
	}
	return restrictToModified(cmd, projects, files)
}

// restrictToModified is --restrict-file-list, as Atlantis: a plan with -d
// needs a file modified directly in that directory; one with -p needs
// every modified file to lie directly in a directory of the projects it
// names, and a -p regular expression keeps the projects with a modified
// file. -w alone is not restricted.
func restrictToModified(cmd *command.Command, projects []repocfg.Project, files []string) ([]repocfg.Project, error) {
	modified := map[string]bool{}
	for _, f := range files {
		modified[path.Dir(path.Clean(f))] = true
	}
	switch {
	case cmd.Dir != "":
		if !modified[cmd.Dir] {
			return nil, atoll.Errorf(atoll.EINVALID, "the dir %q is not in the plan list of this pull request: with --restrict-file-list, a plan with -d must name a directory the pull request modifies files in", cmd.Dir)
		}
	case cmd.Project != "":
		dirs := map[string]bool{}
		for _, p := range projects {
			dirs[p.Dir] = true
		}
		var outside []string
		for _, f := range files {
			if d := path.Dir(path.Clean(f)); !dirs[d] && !slices.Contains(outside, d) {
				outside = append(outside, d)
			}
		}
		if len(outside) > 0 {
			return nil, atoll.Errorf(atoll.EINVALID, "the following directories are modified in this pull request but are not in the requested project (--restrict-file-list): %s",
				"`"+strings.Join(outside, "`, `")+"`")
		}
		if cmd.ProjectRegexp != nil && len(projects) > 1 {
			projects = slices.DeleteFunc(projects, func(p repocfg.Project) bool { return !modified[p.Dir] })
			if len(projects) == 0 {
				return nil, atoll.Errorf(atoll.EINVALID, "no modified files match requested project %q", cmd.Project)
			}
		}
	}
	return projects, nil
}
