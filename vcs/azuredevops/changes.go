package azuredevops

import (
	"context"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/microsoft/azure-devops-go-api/azuredevops/v7/git"
)

// changesPage is how many changes one iteration-changes call asks for;
// Azure's default is 100 and its maximum 2000.
const changesPage = 2000

// ChangedFiles lists the paths the pull request touches: the changes of
// its latest iteration compared with the common commit (compareTo 0),
// which is the whole pull request. A rename yields both the old and the
// new path, since a project can be affected by a file moving out of it.
func (p *Provider) ChangedFiles(ctx context.Context, repo atoll.Repo, number int) ([]string, error) {
	gc, project, name, err := p.repoClient(ctx, repo)
	if err != nil {
		return nil, err
	}
	its, err := gc.GetPullRequestIterations(ctx, git.GetPullRequestIterationsArgs{Project: &project, RepositoryId: &name, PullRequestId: &number})
	if err != nil {
		return nil, apiError(err, "list iterations of %s#%d", repo.FullName(), number)
	}
	latest := 0
	for _, it := range deref(its) {
		latest = max(latest, deref(it.Id))
	}
	if latest == 0 {
		return nil, nil // no push yet: nothing changed
	}
	var paths []string
	seen := map[string]bool{}
	add := func(path string) {
		path = strings.TrimPrefix(path, "/")
		if path != "" && !seen[path] {
			seen[path] = true
			paths = append(paths, path)
		}
	}
	args := git.GetPullRequestIterationChangesArgs{Project: &project, RepositoryId: &name, PullRequestId: &number,
		IterationId: &latest, CompareTo: ptr(0), Top: ptr(changesPage), Skip: ptr(0)}
	for {
		page, err := gc.GetPullRequestIterationChanges(ctx, args)
		if err != nil {
			return nil, apiError(err, "list changes of %s#%d", repo.FullName(), number)
		}
		for _, c := range deref(page.ChangeEntries) {
			path, folder := changeItem(c.Item)
			if folder {
				continue
			}
			add(path)
			add(deref(c.OriginalPath))
			add(deref(c.SourceServerItem))
		}
		next := deref(page.NextSkip)
		if next <= *args.Skip || len(deref(page.ChangeEntries)) == 0 {
			break
		}
		args.Skip = ptr(next)
		if t := deref(page.NextTop); t > 0 {
			args.Top = ptr(t)
		}
	}
	return paths, nil
}

// changeItem reads a change's item, which the SDK leaves untyped: its
// path, and whether it is a folder (a tree) rather than a file.
func changeItem(item any) (path string, folder bool) {
	m, _ := item.(map[string]any)
	path, _ = m["path"].(string)
	isFolder, _ := m["isFolder"].(bool)
	objType, _ := m["gitObjectType"].(string)
	return path, isFolder || objType == "tree"
}
