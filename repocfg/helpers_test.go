package repocfg_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// lines joins YAML lines so that test cases can count line numbers.
func lines(ls ...string) string { return strings.Join(ls, "\n") + "\n" }

// writeRepo creates files (with placeholder content) under a temp dir; a
// name ending in "/" creates an empty directory.
func writeRepo(t *testing.T, files ...string) string {
	t.Helper()
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, filepath.FromSlash(f))
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("# "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// mustParse parses YAML that the test expects to be valid.
func mustParse(t *testing.T, yaml string) *repocfg.Config {
	t.Helper()
	cfg, err := repocfg.Parse([]byte(yaml))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return cfg
}

// wantInvalid checks that err is an EINVALID *atoll.Error whose message
// contains every fragment.
func wantInvalid(t *testing.T, err error, fragments ...string) {
	t.Helper()
	var e *atoll.Error
	if !errors.As(err, &e) {
		t.Fatalf("error = %v (%T), want *atoll.Error", err, err)
	}
	if e.Code != atoll.EINVALID {
		t.Errorf("code = %q, want %q (message %q)", e.Code, atoll.EINVALID, e.Message)
	}
	for _, f := range fragments {
		if !strings.Contains(e.Message, f) {
			t.Errorf("message %q does not contain %q", e.Message, f)
		}
	}
}

// labels renders projects compactly for comparisons.
func labels(ps []repocfg.Project) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		s := p.Dir + ":" + p.Workspace
		if p.Name != "" {
			s = p.Name + "=" + s
		}
		out = append(out, s)
	}
	return out
}

// exported copies the exported fields of a Config, which is what tests
// compare: the unexported ones record where keys were written.
func exported(c *repocfg.Config) repocfg.Config {
	return repocfg.Config{Version: c.Version, Automerge: c.Automerge, ParallelPlan: c.ParallelPlan,
		ParallelApply: c.ParallelApply, AbortOnExecutionOrderFail: c.AbortOnExecutionOrderFail, Projects: c.Projects, Workflows: c.Workflows, Explicit: c.Explicit,
		Warnings: c.Warnings, Defaults: c.Defaults, PreWorkflowHooks: c.PreWorkflowHooks, PostWorkflowHooks: c.PostWorkflowHooks}
}
