package command

import (
	"path/filepath"
	"strings"
)

// varFileAllowed reports whether a comment may pass -var-file path: a
// relative path inside the checkout, or one under a directory of
// --var-file-allowlist (Atlantis's rule). Anything else could make
// Terraform read, and quote in its errors, a file of the server.
func (p Parser) varFileAllowed(path string) bool {
	clean := filepath.Clean(path)
	if !filepath.IsAbs(clean) && clean != ".." && !strings.HasPrefix(clean, "../") && !strings.HasPrefix(clean, "~") {
		return true
	}
	for _, dir := range p.VarFileAllowlist {
		if rel, err := filepath.Rel(dir, clean); err == nil && filepath.IsAbs(clean) && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// varFileDirs names the allowlisted directories for an error message.
func (p Parser) varFileDirs() string {
	if len(p.VarFileAllowlist) == 0 {
		return ""
	}
	return " or under " + strings.Join(p.VarFileAllowlist, ", ")
}
