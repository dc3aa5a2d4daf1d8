package main

import "flag"

// bypassConfig holds Atlantis's --gh-allow-mergeable-bypass-apply: with
// branch protection requiring <status-name>/apply, GitHub calls every
// unapplied pull request "blocked", so the mergeable apply requirement
// could never pass.
type bypassConfig struct {
	GHAllowMergeableBypassApply bool
}

func bypassFlags(fs *flag.FlagSet, c *bypassConfig) {
	fs.BoolVar(&c.GHAllowMergeableBypassApply, "gh-allow-mergeable-bypass-apply", false,
		"GitHub: count a blocked pull request mergeable when reviews are settled and only the <vcs-status-name>/apply checks among the required checks have not passed (reads branch protection and rulesets)")
}
