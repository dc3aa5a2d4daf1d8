package markdown_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atollhq/atoll/runner/markdown"
)

// bigOutput is n numbered lines of plan-like output, about 100 bytes each.
func bigOutput(n int) (string, []string) {
	var lines []string
	for i := range n {
		lines = append(lines, fmt.Sprintf("      id%06d = \"%s\"", i, strings.Repeat("x", 70)))
	}
	return strings.Join(lines, "\n") + "\n", lines
}

// contentLines are the lines of pieces that come from the output.
func contentLines(pieces []string) []string {
	var got []string
	for _, p := range pieces {
		for _, l := range strings.Split(p, "\n") {
			if strings.HasPrefix(l, "      id") {
				got = append(got, l)
			}
		}
	}
	return got
}

func TestSplitLargePlan(t *testing.T) {
	out, lines := bigOutput(2300) // 207,000 bytes
	if len(out) < 200_000 {
		t.Fatalf("output only %d bytes", len(out))
	}
	pieces := markdown.Renderer{}.Results("plan", []markdown.ProjectResult{
		{Dir: "big", Command: "plan", Output: out + "\nPlan: 2300 to add, 0 to change, 0 to destroy.\n", HasChanges: true},
	}, marker)
	if len(pieces) != 4 {
		t.Errorf("got %d pieces, want 4", len(pieces))
	}
	checkPieces(t, pieces, markdown.DefaultMaxCommentLen)
	for i, p := range pieces[1:] {
		want := fmt.Sprintf("*(continued, part %d of %d)*", i+2, len(pieces))
		if !strings.HasPrefix(p, marker+"\n"+want) {
			t.Errorf("piece %d lacks %q", i+2, want)
		}
	}
	for i, p := range pieces[:len(pieces)-1] {
		if !strings.Contains(p, "continued in the next comment") {
			t.Errorf("piece %d does not say it continues", i+1)
		}
	}
	// Every piece shows its output as a diff, in a collapsed block.
	for i, p := range pieces {
		if !strings.Contains(p, "<details><summary>Show Output</summary>\n\n```diff\n") {
			t.Errorf("piece %d does not re-open the output block", i+1)
		}
	}
	if got := contentLines(pieces); strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("output lines not preserved: got %d lines, want %d", len(got), len(lines))
	}
	last := pieces[len(pieces)-1]
	mustContain(t, last, "Plan: 2300 to add", "`atlantis apply -d big`", "`atlantis unlock`")
}

func TestSplitLimits(t *testing.T) {
	out, lines := bigOutput(60)
	body := "Ran Plan for dir: `x` workspace: `default`\n\n<details><summary>Show Output</summary>\n\n```diff\n" +
		out + "```\n</details>\n\nPlan: 60 to add, 0 to change, 0 to destroy.\n"
	for _, limit := range []int{350, 500, 1000, 4096} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			pieces := markdown.Renderer{MaxCommentLen: limit}.Split(body, marker)
			if len(pieces) < 2 {
				t.Fatalf("no split at limit %d", limit)
			}
			checkPieces(t, pieces, limit)
			if got := contentLines(pieces); strings.Join(got, "\n") != strings.Join(lines, "\n") {
				t.Errorf("output lines not preserved: got %d, want %d", len(got), len(lines))
			}
		})
	}
}

func TestSplitFits(t *testing.T) {
	body := "hello\n"
	got := markdown.Renderer{MaxCommentLen: len(marker) + 1 + len(body)}.Split(body, marker)
	if len(got) != 1 || got[0] != marker+"\n"+body {
		t.Errorf("got %q", got)
	}
	if got := (markdown.Renderer{}).Split("", marker); len(got) != 1 || got[0] != marker+"\n" {
		t.Errorf("empty body: %q", got)
	}
}

func TestSplitTinyLimit(t *testing.T) {
	// Limits too small for the marker and part headers are raised rather
	// than producing invalid pieces or looping forever.
	out, lines := bigOutput(20)
	body := "<details><summary>Show Output</summary>\n\n```diff\n" + out + "```\n</details>\n"
	for _, limit := range []int{1, 10, 100} {
		pieces := markdown.Renderer{MaxCommentLen: limit}.Split(body, marker)
		if len(pieces) < 2 {
			t.Errorf("limit %d: %d pieces", limit, len(pieces))
		}
		checkPieces(t, pieces, 1<<20)
		if got := contentLines(pieces); len(got) < len(lines) {
			t.Errorf("limit %d: lost lines", limit)
		}
	}
}

func TestSplitLongLine(t *testing.T) {
	// A line longer than a comment is cut, without breaking UTF-8.
	line := strings.Repeat("ab€", 3000) // 15,000 bytes
	body := "before\n```\n" + line + "\n```\nafter\n"
	pieces := markdown.Renderer{MaxCommentLen: 2000}.Split(body, marker)
	checkPieces(t, pieces, 2000)
	var joined strings.Builder
	for _, p := range pieces {
		if !utf8.ValidString(p) {
			t.Error("piece is not valid UTF-8")
		}
		for _, l := range strings.Split(p, "\n") {
			if strings.HasPrefix(l, "ab") || strings.HasPrefix(l, "b€") || strings.HasPrefix(l, "€") {
				joined.WriteString(l)
			}
		}
	}
	if joined.String() != line {
		t.Errorf("long line not preserved: %d bytes back, want %d", joined.Len(), len(line))
	}
	mustContain(t, pieces[0], "before")
	mustContain(t, pieces[len(pieces)-1], "after")
}

func TestSplitManyParts(t *testing.T) {
	// Ten or more parts need two-digit part numbers; they must still fit.
	out, _ := bigOutput(200)
	body := "```\n" + out + "```\n"
	pieces := markdown.Renderer{MaxCommentLen: 1500}.Split(body, marker)
	if len(pieces) < 10 {
		t.Fatalf("got %d pieces, want at least 10", len(pieces))
	}
	checkPieces(t, pieces, 1500)
	mustContain(t, pieces[9], fmt.Sprintf("part 10 of %d", len(pieces)))
}
