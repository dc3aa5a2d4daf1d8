package runner

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/runner/markdown"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/azuredevops"
	"github.com/atollhq/atoll/vcs/github"
	"github.com/atollhq/atoll/vcs/local"
)

// Results are split at the host's own comment limit: Azure DevOps takes
// 150,000 characters a comment, GitHub 65,536; a host without one gets the
// renderer's default, and a lower limit set on the renderer stays.
func TestSecurityResultsSplitAtTheHostsLimit(t *testing.T) {
	for _, c := range []struct {
		host vcs.Provider
		set  int
		want int
	}{
		{&azuredevops.Provider{}, 0, 150_000},
		{&github.Provider{}, 0, 65_536},
		{&local.Provider{}, 0, markdown.DefaultMaxCommentLen},
		{&azuredevops.Provider{}, 1000, 1000},
		{&azuredevops.Provider{}, 200_000, 150_000},
	} {
		r := &Runner{Markdown: markdown.Renderer{MaxCommentLen: c.set}}
		body := "```\n" + strings.Repeat(strings.Repeat("x", 99)+"\n", c.want/50) + "```\n" // twice the limit
		pieces := r.reporter().markdownFor(c.host).Split(body, "<!-- m -->")
		longest := 0
		for _, p := range pieces {
			longest = max(longest, len(p))
		}
		if longest > c.want || longest < c.want*97/100 {
			t.Errorf("%T with MaxCommentLen %d: comments of up to %d bytes, want up to %d and close to it", c.host, c.set, longest, c.want)
		}
	}
}
