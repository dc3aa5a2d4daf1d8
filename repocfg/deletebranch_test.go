package repocfg_test

import (
	"strings"
	"testing"
)

// delete_source_branch_on_merge: the server's repos[] value, overridden by
// atlantis.yaml's top level (no allowed_overrides needed, as in Atlantis),
// overridden by a project's (only with allowed_overrides).
func TestDeleteSourceBranchOnMergePrecedence(t *testing.T) {
	const projects = "version: 3\nprojects:\n- dir: a\n- dir: b\n"
	cases := []struct {
		name, server, file string
		wantA, wantB       bool
		wantDefault        bool
		wantErr            string
	}{
		{name: "nothing set", server: "repos:\n- id: /.*/\n", file: projects},
		{name: "server", server: "repos:\n- id: /.*/\n  delete_source_branch_on_merge: true\n", file: projects,
			wantA: true, wantB: true, wantDefault: true},
		{name: "later server entry wins", server: "repos:\n- id: /.*/\n  delete_source_branch_on_merge: true\n- id: github.com/acme/infra\n  delete_source_branch_on_merge: false\n", file: projects},
		{name: "file top level over server", server: "repos:\n- id: /.*/\n  delete_source_branch_on_merge: true\n",
			file: "delete_source_branch_on_merge: false\n" + projects},
		{name: "file top level without server", server: "repos:\n- id: /.*/\n",
			file: "delete_source_branch_on_merge: true\n" + projects, wantA: true, wantB: true, wantDefault: true},
		{name: "project refused", server: "repos:\n- id: /.*/\n",
			file: "version: 3\nprojects:\n- dir: a\n  delete_source_branch_on_merge: true\n", wantErr: "allowed_overrides: [delete_source_branch_on_merge]"},
		{name: "project allowed", server: "repos:\n- id: /.*/\n  allowed_overrides: [delete_source_branch_on_merge]\n",
			file: "version: 3\nprojects:\n- dir: a\n  delete_source_branch_on_merge: true\n- dir: b\n", wantA: true},
		{name: "project false over top level", server: "repos:\n- id: /.*/\n  allowed_overrides: [delete_source_branch_on_merge]\n",
			file: "delete_source_branch_on_merge: true\nversion: 3\nprojects:\n- dir: a\n  delete_source_branch_on_merge: false\n- dir: b\n", wantB: true, wantDefault: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := loadWith(t, server(t, tc.server), repoID, "main", map[string]string{"atlantis.yaml": tc.file})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v; want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for dir, want := range map[string]bool{"a": tc.wantA, "b": tc.wantB} {
				p := project(t, cfg, dir)
				if p.DeleteSourceBranchOnMerge == nil || *p.DeleteSourceBranchOnMerge != want {
					t.Errorf("project %s: DeleteSourceBranchOnMerge = %v; want %v", dir, p.DeleteSourceBranchOnMerge, want)
				}
			}
			if cfg.Defaults.DeleteSourceBranchOnMerge != tc.wantDefault {
				t.Errorf("Defaults.DeleteSourceBranchOnMerge = %v; want %v", cfg.Defaults.DeleteSourceBranchOnMerge, tc.wantDefault)
			}
		})
	}
}
