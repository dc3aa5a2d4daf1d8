package repocfg_test

import (
	"slices"
	"strings"
	"testing"
)

// silence_pr_comments, as Atlantis merges it: the server's repos[] value;
// with allowed_overrides listing the key, a project's, else the file's top
// level. Without it the top level is ignored and a project's is refused.
// Projects the file does not list get the server's.
func TestSilencePRCommentsPrecedence(t *testing.T) {
	const projects = "version: 3\nprojects:\n- dir: a\n- dir: b\n"
	const allowed = "repos:\n- id: /.*/\n  allowed_overrides: [silence_pr_comments]\n"
	cases := []struct {
		name, server, file string
		wantA, wantB       []string
		wantDefault        []string
		wantErr            string
	}{
		{name: "nothing set", server: "repos:\n- id: /.*/\n", file: projects},
		{name: "server", server: "repos:\n- id: /.*/\n  silence_pr_comments: [plan]\n", file: projects,
			wantA: []string{"plan"}, wantB: []string{"plan"}, wantDefault: []string{"plan"}},
		{name: "top level ignored without allowed_overrides", server: "repos:\n- id: /.*/\n  silence_pr_comments: [plan]\n",
			file: "silence_pr_comments: [apply]\n" + projects, wantA: []string{"plan"}, wantB: []string{"plan"}, wantDefault: []string{"plan"}},
		{name: "top level allowed", server: allowed + "  silence_pr_comments: [plan]\n",
			file: "silence_pr_comments: [apply]\n" + projects, wantA: []string{"apply"}, wantB: []string{"apply"}, wantDefault: []string{"plan"}},
		{name: "project refused", server: "repos:\n- id: /.*/\n",
			file: "version: 3\nprojects:\n- dir: a\n  silence_pr_comments: [plan]\n", wantErr: "allowed_overrides: [silence_pr_comments]"},
		{name: "project over top level", server: allowed,
			file:  "silence_pr_comments: [apply]\nversion: 3\nprojects:\n- dir: a\n  silence_pr_comments: [plan, apply]\n- dir: b\n  silence_pr_comments: []\n",
			wantA: []string{"plan", "apply"}},
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
			for dir, want := range map[string][]string{"a": tc.wantA, "b": tc.wantB} {
				if got := project(t, cfg, dir).SilencePRComments; !slices.Equal(got, want) {
					t.Errorf("project %s: SilencePRComments = %q; want %q", dir, got, want)
				}
			}
			if got := cfg.Defaults.SilencePRComments; !slices.Equal(got, tc.wantDefault) {
				t.Errorf("Defaults.SilencePRComments = %q; want %q", got, tc.wantDefault)
			}
			for _, w := range cfg.Warnings {
				if strings.Contains(w, "silence_pr_comments") {
					t.Errorf("warning: %s", w)
				}
			}
		})
	}
}
