package main

import "flag"

// ignoreStatusConfig holds Atlantis's --ignore-vcs-status-names: several
// Atlantis-like servers on one repository each require their own
// NAME/plan and NAME/apply, and with --gh-allow-mergeable-bypass-apply the
// other servers' checks must not block this one's apply.
type ignoreStatusConfig struct {
	IgnoreVCSStatusNames string
}

func ignoreStatusFlags(fs *flag.FlagSet, c *ignoreStatusConfig) {
	fs.StringVar(&c.IgnoreVCSStatusNames, "ignore-vcs-status-names", "",
		"comma-separated status names of other Atlantis-like servers; with --gh-allow-mergeable-bypass-apply their required checks (NAME, NAME/...) do not block (GitHub only)")
}

// ignoredStatusNames is the list, spaces trimmed and empty names dropped
// (an empty name would match contexts starting with "/").
func (c *ignoreStatusConfig) ignoredStatusNames() []string {
	return splitList(c.IgnoreVCSStatusNames)
}
