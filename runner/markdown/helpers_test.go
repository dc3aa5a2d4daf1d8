package markdown_test

import (
	"strings"
	"testing"
)

const marker = "<!-- atoll:pull=42 -->"

// checkBalanced fails unless every code fence and <details> block that opens
// in piece also closes in it.
func checkBalanced(t *testing.T, piece string) {
	t.Helper()
	fence, details := "", 0
	for _, line := range strings.Split(piece, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) && strings.Trim(trimmed, "`") == "" {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			fence = trimmed[:len(trimmed)-len(strings.TrimLeft(trimmed, "`"))]
			continue
		}
		details += strings.Count(line, "<details>") - strings.Count(line, "</details>")
		if details < 0 {
			t.Errorf("</details> without <details> in:\n%s", piece)
			return
		}
	}
	if fence != "" {
		t.Errorf("unclosed %s fence in piece:\n%s", fence, tail(piece))
	}
	if details != 0 {
		t.Errorf("%d unclosed <details> in piece:\n%s", details, tail(piece))
	}
}

func tail(s string) string {
	if len(s) > 600 {
		return "…" + s[len(s)-600:]
	}
	return s
}

func checkPieces(t *testing.T, pieces []string, limit int) {
	t.Helper()
	for i, p := range pieces {
		if len(p) > limit {
			t.Errorf("piece %d is %d bytes, over %d", i+1, len(p), limit)
		}
		if !strings.HasPrefix(p, marker+"\n") {
			t.Errorf("piece %d does not start with the marker", i+1)
		}
		checkBalanced(t, p)
	}
}

func mustContain(t *testing.T, s string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			t.Errorf("missing %q in:\n%s", w, s)
		}
	}
}

func mustNotContain(t *testing.T, s string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(s, w) {
			t.Errorf("unexpected %q in:\n%s", w, s)
		}
	}
}
