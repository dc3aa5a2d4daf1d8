package repocfg_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// --enable-regexp-cmd: -p selects the named projects whose whole name
// matches; allowed_regexp_prefixes limits the patterns selecting several.
func TestFindByRegexp(t *testing.T) {
	repo := writeRepo(t, "dev/a/main.tf", "dev/b/main.tf", "prod/main.tf")
	cfg := mustParse(t, lines(
		`version: 3`,
		`allowed_regexp_prefixes: [dev-]`,
		`projects:`,
		`- name: dev-a`,
		`  dir: dev/a`,
		`- name: dev-b`,
		`  dir: dev/b`,
		`- name: prod`,
		`  dir: prod`,
		`- dir: prod`,
		`  workspace: other`,
	))
	for _, tc := range []struct {
		pattern string
		want    string // dirs, comma-separated
		wantErr string
	}{
		{"dev-.*", "dev/a,dev/b", ""},
		{"dev-a", "dev/a", ""},
		{"prod", "prod", ""},
		{"pro", "", `no project in atlantis.yaml has a name matching "pro"`},
		{".*", "", `".*" matches 3 projects, and atlantis.yaml's allowed_regexp_prefixes (dev-)`},
		{"(dev-a|prod)", "", "matches 2 projects"},
	} {
		re := regexp.MustCompile("^(?:" + tc.pattern + ")$")
		got, err := repocfg.FindByRegexp(cfg, repo, re, tc.pattern)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.pattern, err, tc.wantErr)
			}
			continue
		}
		var dirs []string
		for _, p := range got {
			dirs = append(dirs, p.Dir)
		}
		if err != nil || strings.Join(dirs, ",") != tc.want {
			t.Errorf("%q: got %v, %v; want %s", tc.pattern, dirs, err, tc.want)
		}
	}
	open := mustParse(t, lines(`version: 3`, `projects:`, `- name: dev-a`, `  dir: dev/a`, `- name: prod`, `  dir: prod`))
	if got, err := repocfg.FindByRegexp(open, repo, regexp.MustCompile("^(?:.*)$"), ".*"); err != nil || len(got) != 2 {
		t.Errorf("without allowed_regexp_prefixes any pattern may select several: %v, %v", got, err)
	}
}
