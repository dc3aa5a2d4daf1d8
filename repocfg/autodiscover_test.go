package repocfg_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// Autodiscover modes, ignore_paths, the server's autodiscover winning over
// the file's, and per-project branch regexes, as in Atlantis.
func TestAutodiscoverModesAndBranch(t *testing.T) {
	tf := "resource \"terraform_data\" \"x\" {}\n"
	anyRepo := "repos:\n  - id: /.*/\n"
	tests := []struct {
		name, server, file, branch string
		changed, want              []string
	}{
		{"no file: auto discovers", "", "", "main",
			[]string{"a/main.tf", "b/main.tf"}, []string{"a:default", "b:default"}},
		{"listed projects: auto does not discover", "", lines(`version: 3`, `projects:`, `- dir: a`), "main",
			[]string{"a/main.tf", "b/main.tf"}, []string{"a:default"}},
		{"enabled discovers beside listed projects", "", lines(`version: 3`, `autodiscover: {mode: enabled}`, `projects:`, `- {name: pa, dir: a}`), "main",
			[]string{"a/main.tf", "b/main.tf"}, []string{"pa=a:default", "b:default"}},
		{"enabled: a listed dir is never rediscovered", "", lines(`version: 3`, `autodiscover: {mode: enabled}`, `projects:`, `- dir: a`, `  autoplan: {when_modified: ["*.tfvars"]}`), "main",
			[]string{"a/main.tf"}, nil},
		{"disabled discovers nothing", "", lines(`version: 3`, `autodiscover: {mode: disabled}`), "main",
			[]string{"a/main.tf"}, nil},
		{"ignore_paths", "", lines(`version: 3`, `autodiscover:`, `  ignore_paths: ["ignored/**"]`), "main",
			[]string{"ignored/x/main.tf", "b/main.tf"}, []string{"b:default"}},
		{"the server's mode wins", anyRepo + "    autodiscover: {mode: disabled}\n", lines(`version: 3`, `autodiscover: {mode: enabled}`), "main",
			[]string{"a/main.tf"}, nil},
		{"the server's block without a mode is auto", anyRepo + "    autodiscover: {ignore_paths: [c]}\n",
			lines(`version: 3`, `autodiscover: {mode: enabled}`, `projects:`, `- dir: a`), "main",
			[]string{"a/main.tf", "b/main.tf"}, []string{"a:default"}},
		{"the server enables it", anyRepo + "    autodiscover: {mode: enabled, ignore_paths: [c]}\n", lines(`version: 3`, `projects:`, `- dir: a`), "main",
			[]string{"a/main.tf", "b/main.tf", "c/main.tf"}, []string{"a:default", "b:default"}},
		{"--autodiscover-mode enabled", "default mode enabled", lines(`version: 3`, `projects:`, `- dir: a`), "main",
			[]string{"a/main.tf", "b/main.tf"}, []string{"a:default", "b:default"}},
		{"--autodiscover-mode disabled", "default mode disabled", "", "main",
			[]string{"a/main.tf"}, nil},
		{"the file's mode wins over --autodiscover-mode", "default mode disabled", lines(`version: 3`, `autodiscover: {mode: auto}`), "main",
			[]string{"a/main.tf"}, []string{"a:default"}},
		{"branch regex keeps matching projects", "", lines(`version: 3`, `projects:`, `- {dir: a, branch: /^main$/}`, `- {dir: b, branch: /^release-/}`, `- dir: c`), "main",
			[]string{"a/main.tf", "b/main.tf", "c/main.tf"}, []string{"a:default", "c:default"}},
		{"branch regex on another base", "", lines(`version: 3`, `projects:`, `- {dir: a, branch: /^main$/}`, `- {dir: b, branch: /^release-/}`), "release-1",
			[]string{"a/main.tf", "b/main.tf"}, []string{"b:default"}},
		{"no project left for the branch: auto discovers", "", lines(`version: 3`, `projects:`, `- {name: pa, dir: a, branch: /^release-/}`), "main",
			[]string{"a/main.tf", "b/main.tf"}, []string{"a:default", "b:default"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			defaultMode := ""
			if m, ok := strings.CutPrefix(tt.server, "default mode "); ok {
				defaultMode, tt.server = m, ""
			}
			files := map[string]string{"a/main.tf": tf, "b/main.tf": tf, "c/main.tf": tf, "ignored/x/main.tf": tf}
			if tt.file != "" {
				files["atlantis.yaml"] = tt.file
			}
			for name, body := range files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var sc *repocfg.ServerConfig
			if tt.server != "" {
				sc = server(t, tt.server)
			}
			if defaultMode != "" {
				sc = repocfg.DefaultServerConfig()
				sc.AutodiscoverMode = defaultMode // --autodiscover-mode
			}
			cfg, err := sc.Load(root, "github.com/acme/infra", tt.branch)
			if err != nil {
				t.Fatal(err)
			}
			if len(cfg.Warnings) != 0 {
				t.Errorf("warnings %q", cfg.Warnings)
			}
			got, err := repocfg.Modified(cfg, root, tt.changed)
			if err != nil {
				t.Fatal(err)
			}
			if g := labels(got); len(g) != len(tt.want) || len(g) > 0 && !reflect.DeepEqual(g, tt.want) {
				t.Errorf("projects %q, want %q", labels(got), tt.want)
			}
		})
	}
}
