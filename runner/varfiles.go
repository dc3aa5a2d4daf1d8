package runner

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// checkoutRoot is the checkout a project dir belongs to: dir without the
// job's relative dir (clean, without ".."; see projectDir).
func checkoutRoot(dir, jobDir string) string {
	root := dir
	for _, elem := range strings.Split(filepath.ToSlash(filepath.Clean(jobDir)), "/") {
		if elem != "." && elem != "" {
			root = filepath.Dir(root)
		}
	}
	return root
}

// inside reports whether path, with every symbolic link resolved, is root
// or under it (root resolved too).
func inside(root, path string) (bool, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false, err
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false, err
	}
	rel, err := filepath.Rel(realRoot, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

// checkVarFiles refuses a -var-file among args that resolves outside the
// checkout through a symbolic link committed to the repository: the
// comment rule (command) checks the path as written, and only the
// checkout shows where it leads. Files under --var-file-allowlist pass.
func checkVarFiles(dir, jobDir string, args []string) error {
	root := checkoutRoot(dir, jobDir)
	for _, p := range command.VarFiles(args) {
		if filepath.IsAbs(p) {
			continue // only allowlisted absolute paths get this far
		}
		ok, err := inside(root, filepath.Join(dir, p))
		if errors.Is(err, fs.ErrNotExist) {
			continue // Terraform says the file is missing
		} else if err != nil {
			return err
		}
		if !ok {
			return atoll.Errorf(atoll.EINVALID, "-var-file %s leads outside the repository through a symbolic link.", codeSpan(p))
		}
	}
	return nil
}
