package repocfg

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// isDir reports whether dir (clean, relative) is a directory in repoRoot.
func isDir(repoRoot, dir string) (bool, error) {
	st, err := os.Stat(filepath.Join(repoRoot, filepath.FromSlash(dir)))
	if absent(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("repocfg: %w", err)
	}
	return st.IsDir(), nil
}

// hasTerraform reports whether dir in repoRoot directly holds Terraform
// configuration (*.tf or *.tf.json), i.e. could be a root module.
func hasTerraform(repoRoot, dir string) (bool, error) {
	entries, err := os.ReadDir(filepath.Join(repoRoot, filepath.FromSlash(dir)))
	if absent(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("repocfg: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() && isTerraformConfig(e.Name()) {
			return true, nil
		}
	}
	return false, nil
}

// absent reports errors that mean "not there": missing, or a path element
// that is a file (a project dir deleted and replaced by a file).
func absent(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}

// isTerraformConfig reports Terraform and OpenTofu configuration files.
func isTerraformConfig(name string) bool {
	for _, ext := range []string{".tf", ".tf.json", ".tofu", ".tofu.json"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// isTerraformChange reports files whose change can alter a plan of their
// directory: configuration and variable files.
func isTerraformChange(name string) bool {
	return isTerraformConfig(name) || strings.HasSuffix(name, ".tfvars") || strings.HasSuffix(name, ".tfvars.json")
}
