package repocfg_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

// FuzzParseServerConfig checks that ParseServerConfig never panics, that
// every error is an EINVALID *atoll.Error naming the file, and that an
// accepted config keeps what Merge relies on: the default entry first,
// every entry with an id, known overrides and requirements, workflows
// that exist, valid execution pools, and a repo_config_file inside the
// repository. The seed corpus is in testdata/fuzz/FuzzParseServerConfig.
func FuzzParseServerConfig(f *testing.F) {
	f.Add([]byte(allServerKeys))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := repocfg.ParseServerConfig("repos.yaml", data)
		if err != nil {
			var aerr *atoll.Error
			if sc != nil || !errors.As(err, &aerr) || aerr.Code != atoll.EINVALID || !strings.HasPrefix(aerr.Message, "repos.yaml") {
				t.Fatalf("config %+v, error %#v", sc, err)
			}
			return
		}
		if _, ok := sc.Workflows[repocfg.DefaultWorkflow]; !ok || len(sc.Repos) == 0 || sc.Repos[0].IDString() != "/.*/" {
			t.Fatalf("accepted config lacks the defaults: %+v", sc)
		}
		for _, r := range sc.Repos {
			if r.ID == "" && r.IDRegex == nil {
				t.Fatalf("entry without id: %+v", r)
			}
			for _, o := range r.AllowedOverrides {
				if !slices.Contains(repocfg.OverrideKeys, o) {
					t.Fatalf("override %q", o)
				}
			}
			for _, req := range slices.Concat(r.ApplyRequirements, r.PlanRequirements, r.ImportRequirements) {
				if !slices.Contains(repocfg.Requirements, req) {
					t.Fatalf("requirement %q", req)
				}
			}
			for _, w := range append(slices.Clone(r.AllowedWorkflows), deref(r.Workflow)) {
				if _, ok := sc.Workflows[w]; w != "" && !ok {
					t.Fatalf("workflow %q is not defined", w)
				}
			}
			if f := r.RepoConfigFile; strings.HasPrefix(f, "/") || slices.Contains(strings.FieldsFunc(f, func(c rune) bool { return c == '/' || c == '\\' }), "..") {
				t.Fatalf("repo_config_file %q leaves the repository", f)
			}
			if r.ExecutionPool != nil && repocfg.CheckPool(*r.ExecutionPool) != nil {
				t.Fatalf("execution_pool %q", *r.ExecutionPool)
			}
			for _, h := range slices.Concat(r.PreWorkflowHooks, r.PostWorkflowHooks) {
				if strings.TrimSpace(h.Run) == "" {
					t.Fatalf("hook without a command: %+v", h)
				}
			}
		}
		// Merging the accepted config with no repository file never fails.
		if _, err := sc.Merge("github.com/acme/infra", nil); err != nil {
			t.Fatalf("merge: %v", err)
		}
	})
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
