package repocfg

import (
	"path"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/bmatcuk/doublestar/v4"
)

// matchesAny reports whether any of files is selected by a project's
// when_modified patterns.
func matchesAny(dir string, patterns, files []string) (bool, error) {
	for _, f := range files {
		ok, err := whenModified(dir, patterns, f)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// whenModified applies .dockerignore semantics, which Atlantis documents for
// when_modified: patterns are relative to the project dir (so "../modules/**"
// reaches a sibling), the last matching pattern wins, "!" excludes, and a
// pattern that matches a directory matches everything below it.
func whenModified(dir string, patterns []string, file string) (bool, error) {
	matched := false
	for _, p := range patterns {
		exclude := strings.HasPrefix(p, "!")
		// Joining cleans "project/../modules/**" to "modules/**", which is
		// what lets patterns leave the project dir.
		full := path.Join(dir, strings.TrimPrefix(p, "!"))
		ok, err := matchSelfOrParent(full, file)
		if err != nil {
			return false, atoll.Errorf(atoll.EINVALID, "when_modified pattern %q is not a valid glob", p)
		}
		if ok {
			matched = !exclude
		}
	}
	return matched, nil
}

// matchSelfOrParent matches file and then each of its parent dirs.
func matchSelfOrParent(pattern, file string) (bool, error) {
	for p := file; p != "." && p != "/" && p != ""; p = path.Dir(p) {
		ok, err := doublestar.Match(pattern, p)
		if ok || err != nil {
			return ok, err
		}
	}
	return false, nil
}

// cleanFiles normalises changed-file paths from a VCS to clean relative
// paths (Azure DevOps, for one, reports "/dir/file"), dropping any that
// would point outside the repository.
func cleanFiles(files []string) []string {
	out := make([]string, 0, len(files))
	for _, f := range files {
		f = path.Clean(strings.TrimPrefix(f, "/"))
		if f == "." || f == ".." || strings.HasPrefix(f, "../") {
			continue
		}
		out = append(out, f)
	}
	return out
}
