package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/atollhq/atoll/runner"
	ghp "github.com/atollhq/atoll/vcs/github"
)

// githubExtrasConfig is the part of Config with Atlantis's GitHub flags of
// the same names that react to and restrict comments.
type githubExtrasConfig struct {
	// EmojiReaction: --emoji-reaction, what accepted command comments are
	// reacted to with on GitHub ("" reacts not; Azure DevOps has no
	// reactions).
	EmojiReaction string
	// GHTeamAllowlist: --gh-team-allowlist, parsed.
	GHTeamAllowlist runner.TeamAllowlist
}

func githubExtrasFlags(fs *flag.FlagSet, c *githubExtrasConfig) {
	fs.Func("emoji-reaction", "react to each command comment Atoll accepts with this GitHub reaction: "+strings.Join(ghp.Reactions, ", ")+
		" (default none; Azure DevOps comments get none)", func(s string) error {
		s = strings.TrimSpace(s)
		if s != "" && !slices.Contains(ghp.Reactions, s) {
			return fmt.Errorf("unknown GitHub reaction %q: use one of %s", s, strings.Join(ghp.Reactions, ", "))
		}
		c.EmojiReaction = s
		return nil
	})
	fs.Func("gh-team-allowlist", "comma-separated TEAM:COMMAND pairs: only members of TEAM (a team slug of the repository's GitHub organization, or *) may run COMMAND (a comment command, or *) "+
		"by commenting on GitHub pull requests, e.g. dev:plan,ops:apply,devops:* (default *:*, no check)", func(s string) error {
		list, err := runner.ParseTeamAllowlist(s)
		c.GHTeamAllowlist = list
		return err
	})
}

// configure hands the settings to the runner.
func (c *githubExtrasConfig) configure(r *runner.Runner) {
	r.EmojiReaction, r.TeamAllowlist = c.EmojiReaction, c.GHTeamAllowlist
}
