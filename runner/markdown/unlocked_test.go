package markdown_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/runner/markdown"
)

func TestUnlockedBy(t *testing.T) {
	r := markdown.Renderer{Executable: "atoll"}
	one := r.UnlockedBy("alice", "the dashboard", []string{"staging/default"}, "<!-- m -->")
	for _, want := range []string{"<!-- m -->\n", "**Unlocked by alice from the dashboard.**", "lock of `staging/default`", "`atoll plan`"} {
		if !strings.Contains(one, want) {
			t.Errorf("one lock: %q lacks %q", one, want)
		}
	}
	many := r.UnlockedBy("bob@acme.example", "the dashboard", []string{"a/default", "prod"}, "")
	if !strings.Contains(many, "Unlocked by bob@acme.example from the dashboard") || !strings.Contains(many, "- `a/default`\n- `prod`\n") {
		t.Errorf("two locks: %q", many)
	}
	// A name cannot smuggle Markdown, HTML or a mention into the comment.
	evil := r.UnlockedBy("<img src=x> **@all** [x](y)", "the dashboard", []string{"a"}, "")
	if !strings.HasPrefix(evil, "\n**Unlocked by imgsrcx@allxy from the dashboard.**") {
		t.Errorf("name not plain: %q", evil)
	}
}
