package markdown_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atollhq/atoll/runner/markdown"
)

// A 5 MB plan output is posted in as few comments as the host's limit
// allows: each but the last filled close to the limit, none over it, every
// code fence and <details> block balanced in each, the output intact. The
// probe saw 122 comments alternating 64 KB and 300 bytes.
func TestSecurityCommentPacking(t *testing.T) {
	const size = 5 << 20
	shapes := map[string]func(i int) string{
		"short lines":          func(i int) string { return fmt.Sprintf("    id%07d = %q\n", i, strings.Repeat("z", i%150)) },
		"lines over the limit": func(i int) string { return fmt.Sprintf("%07d%s\n", i, strings.Repeat("y", 65_800)) },
		"lines of 3 KB":        func(i int) string { return fmt.Sprintf("%07d%s\n", i, strings.Repeat("w", 3000)) },
		"lines of 40 KB":       func(i int) string { return fmt.Sprintf("%07d%s\n", i, strings.Repeat("v", 40_000)) },
		"one line":             func(i int) string { return fmt.Sprintf("%07d%s", i, strings.Repeat("u", size)) },
		"mixed":                func(i int) string { return fmt.Sprintf("%07d%s\n", i, strings.Repeat("é", (i*7919)%20_000)) },
	}
	// GitHub's limit (the default) and Azure DevOps'.
	for _, limit := range []int{65_536, 150_000} {
		for name, line := range shapes {
			t.Run(fmt.Sprintf("%s at %d", name, limit), func(t *testing.T) {
				var b strings.Builder
				for i := 0; b.Len() < size; i++ {
					b.WriteString(line(i))
				}
				out := b.String() + "\nPlan: 1 to add, 0 to change, 0 to destroy.\n"
				pieces := markdown.Renderer{MaxCommentLen: limit}.Results("plan", []markdown.ProjectResult{
					{Dir: "big", Command: "plan", Output: out, HasChanges: true},
				}, marker)
				if most := (len(out)+limit-1)/limit + 2; len(pieces) > most {
					t.Errorf("%d bytes in %d comments, want at most %d", len(out), len(pieces), most)
				}
				checkPieces(t, pieces, limit)
				for i, p := range pieces[:len(pieces)-1] {
					if len(p) < limit*97/100 {
						t.Errorf("comment %d of %d is %d bytes, under 97%% of %d", i+1, len(pieces), len(p), limit)
					}
					if n := utf8.RuneCountInString(p); n > limit {
						t.Errorf("comment %d is %d characters, over %d", i+1, n, limit)
					}
				}
				// The output comes back whole: the lines of the diff block,
				// re-joined where a long line was cut.
				var got strings.Builder
				for _, p := range pieces {
					_, rest, _ := strings.Cut(p, "```diff\n")
					if body, _, ok := strings.Cut("\n"+rest, "\n```\n"); ok {
						got.WriteString(body)
					}
				}
				if strings.ReplaceAll(got.String(), "\n", "") != strings.ReplaceAll(out, "\n", "") {
					t.Errorf("the output is not intact: %d bytes back of %d", got.Len(), len(out))
				}
			})
		}
	}
}
