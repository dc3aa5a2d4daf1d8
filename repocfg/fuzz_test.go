package repocfg_test

import (
	"errors"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

var fuzzWorkspace = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// FuzzParseConfig checks that Parse never panics, that every error is an
// EINVALID *atoll.Error (so it can be posted on the pull request as is) and
// that what it accepts keeps the promises the runner relies on. The seed
// corpus is in testdata/fuzz/FuzzParseConfig; `go test` runs it, fuzzing
// proper needs -fuzz.
func FuzzParseConfig(f *testing.F) {
	f.Add([]byte(referenceYAML))
	f.Add([]byte(lines(`version: 3`, `projects:`, `- &p {name: a, dir: a, depends_on: [b]}`, `- <<: *p`, `  name: b`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := repocfg.Parse(data)
		if err != nil {
			if cfg != nil {
				t.Fatalf("config and error together: %+v, %v", cfg, err)
			}
			var aerr *atoll.Error
			if !errors.As(err, &aerr) || aerr.Code != atoll.EINVALID {
				t.Fatalf("error is not an EINVALID *atoll.Error: %#v", err)
			}
			if !strings.HasPrefix(aerr.Message, "atlantis.yaml") {
				t.Fatalf("error does not name the file: %q", aerr.Message)
			}
			return
		}
		if cfg == nil || !cfg.Explicit || cfg.Workflows == nil || (cfg.Version != 2 && cfg.Version != 3) {
			t.Fatalf("accepted config = %+v", cfg)
		}
		names := map[string]bool{}
		for _, p := range cfg.Projects {
			if p.Dir == "" || path.Clean(p.Dir) != p.Dir || path.IsAbs(p.Dir) || strings.Contains(p.Dir, "..") {
				t.Fatalf("project dir %q is not clean and inside the repository", p.Dir)
			}
			if !fuzzWorkspace.MatchString(p.Workspace) {
				t.Fatalf("workspace %q", p.Workspace)
			}
			if p.Name != "" {
				if names[p.Name] {
					t.Fatalf("duplicate name %q", p.Name)
				}
				names[p.Name] = true
			}
			for _, r := range append(slices.Clone(p.ApplyRequirements), p.PlanRequirements...) {
				if !slices.Contains(repocfg.Requirements, r) {
					t.Fatalf("requirement %q", r)
				}
			}
			if p.Workflow != "" && p.Workflow != repocfg.DefaultWorkflow {
				if _, ok := cfg.Workflows[p.Workflow]; !ok {
					t.Fatalf("workflow %q is not defined", p.Workflow)
				}
			}
		}
		for _, w := range cfg.Warnings {
			if !strings.HasPrefix(w, "atlantis.yaml line ") || !strings.Contains(w, "is accepted but not acted on by Atoll yet") {
				t.Fatalf("warning %q", w)
			}
		}
	})
}
