package runner

import (
	"strings"
)

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}

func title(s string) string {
	if s == "" {
		return s
	} else if s == "state_rm" {
		return "State rm"
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// redactPaths hides the server's directory layout from user-facing text.
func redactPaths(s, root string) string {
	if root == "" {
		return s
	}
	return strings.ReplaceAll(s, root, "<workdir>")
}

func projectLabel(dir, workspace, name string) string {
	if name != "" {
		return name
	}
	return dir + "/" + workspace
}
