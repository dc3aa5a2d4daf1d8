package templates

import (
	"strings"
	"testing"
	"time"
)

func TestPerfScratch(t *testing.T) {
	for name, body := range map[string]string{
		"open-close-line": strings.Repeat("<details></details>", 4000),
		"opens-line":      strings.Repeat("<details>", 8000),
		"closes":          strings.Repeat("<details>\n", 16) + strings.Repeat("</details>", 8000),
		"backticks":       strings.Repeat("`", 65536),
		"backtick-runs":   strings.Repeat("` ``", 16000),
		"stars":           strings.Repeat("*", 65536),
		"summary":         "<details>" + strings.Repeat("<summary>a</summary>", 3000),
		"lines":           strings.Repeat("a\n", 32000),
		"fences":          strings.Repeat("```\n", 16000),
		"list":            strings.Repeat("* x\n", 16000),
	} {
		start := time.Now()
		render(t, body)
		t.Logf("%s: %v", name, time.Since(start))
	}
}
