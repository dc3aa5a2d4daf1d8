package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/vcs"
)

func TestHookLabel(t *testing.T) {
	for _, tc := range []struct {
		which string
		i     int
		h     repocfg.Hook
		want  string
	}{
		{"pre", 0, repocfg.Hook{}, "Pre workflow hook #0"},
		{"post", 2, repocfg.Hook{}, "Post workflow hook #2"},
		{"pre", 1, repocfg.Hook{Description: "generate"}, "generate"},
	} {
		if got := hookLabel(tc.which, tc.i, tc.h); got != tc.want {
			t.Errorf("hookLabel(%s, %d, %+v) = %q, want %q", tc.which, tc.i, tc.h, got, tc.want)
		}
	}
}

func TestHookStatusDescription(t *testing.T) {
	for _, tc := range []struct{ state, custom, want string }{
		{vcs.StatusPending, "", "in progress..."},
		{vcs.StatusSuccess, "", "succeeded."},
		{vcs.StatusFailure, "", "failed."},
		{vcs.StatusSuccess, "3 configs", "3 configs"},
	} {
		if got := hookStatusDescription(tc.state, tc.custom); got != tc.want {
			t.Errorf("hookStatusDescription(%s, %q) = %q, want %q", tc.state, tc.custom, got, tc.want)
		}
	}
}

func TestReadStatusFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s")
	if got := readStatusFile(p); got != "" {
		t.Fatalf("missing file: %q", got)
	}
	if err := os.WriteFile(p, []byte("\nall good\n\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readStatusFile(p); got != "all good" {
		t.Fatalf("readStatusFile = %q, want %q", got, "all good")
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("x", 1<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := readStatusFile(p); len(got) != hookStatusFileMax {
		t.Fatalf("a huge file: read %d bytes, want %d", len(got), hookStatusFileMax)
	}
}

func TestTruncateContext(t *testing.T) {
	short := "atlantis/pre_workflow_hook: x"
	if got := truncateContext(short); got != short {
		t.Fatalf("short context changed: %q", got)
	}
	a := truncateContext("atlantis/pre_workflow_hook: " + strings.Repeat("é", 300) + "a")
	b := truncateContext("atlantis/pre_workflow_hook: " + strings.Repeat("é", 300) + "b")
	if n := utf8.RuneCountInString(a); n != maxStatusContext {
		t.Fatalf("truncated to %d characters, want %d", n, maxStatusContext)
	}
	if a == b {
		t.Fatalf("two long contexts with the same beginning truncate to the same %q", a)
	}
}
