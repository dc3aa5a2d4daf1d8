package repocfg_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/repocfg"
)

// TestRepoLocksPrecedence checks how the lock mode of a project is merged
// from the server config (repos[], last match wins; repo_locking: false
// disables), the file's top level and the project, with allowed_overrides
// gating the file, as Atlantis does when allowed_overrides lists
// repo_locking before repo_locks.
func TestRepoLocksPrecedence(t *testing.T) {
	both := "    allowed_overrides: [repo_locking, repo_locks]\n"
	tests := []struct {
		name    string
		server  string // repos entries after "repos:\n  - id: /.*/\n"
		file    string // atlantis.yaml; "" for none
		want    string // project a's mode (or the defaults' without a file)
		wantDef string // Defaults.RepoLocks; "" to skip
		warn    string // a warning that must be present
	}{
		{name: "default is on_plan", want: repocfg.LockOnPlan},
		{name: "server on_apply", server: "    repo_locks: {mode: on_apply}\n", want: repocfg.LockOnApply},
		{name: "server disabled", server: "    repo_locks: {mode: disabled}\n", want: repocfg.LockDisabled},
		{name: "server repo_locks without mode is on_plan", server: "    repo_locks: {mode: on_apply}\n  - id: github.com/acme/infra\n    repo_locks: {}\n", want: repocfg.LockOnPlan},
		{name: "later server entry wins", server: "    repo_locks: {mode: disabled}\n  - id: github.com/acme/infra\n    repo_locks: {mode: on_apply}\n", want: repocfg.LockOnApply},
		{name: "server repo_locking false beats repo_locks", server: "    repo_locking: false\n  - id: github.com/acme/infra\n    repo_locks: {mode: on_apply}\n", want: repocfg.LockDisabled},
		{name: "server repo_locking true keeps repo_locks", server: "    repo_locking: true\n    repo_locks: {mode: on_apply}\n", want: repocfg.LockOnApply},
		{name: "top level allowed", server: "    allowed_overrides: [repo_locks]\n",
			file: "version: 3\nrepo_locks: {mode: on_apply}\nprojects:\n- dir: a\n", want: repocfg.LockOnApply, wantDef: repocfg.LockOnApply},
		{name: "top level not allowed is ignored, with a warning", server: "    repo_locks: {mode: disabled}\n",
			file: "version: 3\nrepo_locks: {mode: on_apply}\nprojects:\n- dir: a\n", want: repocfg.LockDisabled, wantDef: repocfg.LockDisabled,
			warn: "atlantis.yaml line 2: `repo_locks` is ignored: the server-side repo config does not allow this repository to set it (it needs `allowed_overrides: [repo_locks]`); the mode is disabled"},
		{name: "project beats top level", server: both,
			file: "version: 3\nrepo_locks: {mode: on_apply}\nprojects:\n- dir: a\n  repo_locks: {mode: disabled}\n", want: repocfg.LockDisabled, wantDef: repocfg.LockOnApply},
		{name: "top level beats server", server: "    repo_locks: {mode: disabled}\n" + both,
			file: "version: 3\nrepo_locks: {mode: on_plan}\nprojects:\n- dir: a\n", want: repocfg.LockOnPlan},
		{name: "project repo_locking false disables", server: both,
			file: "version: 3\nprojects:\n- dir: a\n  repo_locking: false\n", want: repocfg.LockDisabled},
		{name: "project repo_locking true re-enables a disabled server", server: "    repo_locks: {mode: disabled}\n" + both,
			file: "version: 3\nprojects:\n- dir: a\n  repo_locking: true\n", want: repocfg.LockOnPlan},
		{name: "project repo_locking true keeps on_apply", server: "    repo_locks: {mode: on_apply}\n" + both,
			file: "version: 3\nprojects:\n- dir: a\n  repo_locking: true\n", want: repocfg.LockOnApply},
		{name: "repo_locks beats repo_locking in one project", server: both,
			file: "version: 3\nprojects:\n- dir: a\n  repo_locking: false\n  repo_locks: {mode: on_apply}\n", want: repocfg.LockOnApply},
		{name: "top-level repo_locks beats project repo_locking", server: both,
			file: "version: 3\nrepo_locks: {mode: on_apply}\nprojects:\n- dir: a\n  repo_locking: false\n", want: repocfg.LockOnApply},
		{name: "project repo_locks without mode is on_plan", server: "    repo_locks: {mode: disabled}\n" + both,
			file: "version: 3\nprojects:\n- dir: a\n  repo_locks: {}\n", want: repocfg.LockOnPlan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := server(t, "repos:\n  - id: /.*/\n"+tt.server)
			files := map[string]string{}
			if tt.file != "" {
				files["atlantis.yaml"] = tt.file
			}
			cfg, err := loadWith(t, sc, repoID, "main", files)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.Defaults.RepoLocks
			if tt.file != "" {
				got = project(t, cfg, "a").RepoLocks
			}
			if got != tt.want {
				t.Errorf("mode = %q, want %q", got, tt.want)
			}
			if tt.wantDef != "" && cfg.Defaults.RepoLocks != tt.wantDef {
				t.Errorf("defaults mode = %q, want %q", cfg.Defaults.RepoLocks, tt.wantDef)
			}
			all := strings.Join(cfg.Warnings, "\n")
			if tt.warn != "" && !strings.Contains(all, tt.warn) {
				t.Errorf("warnings %q lack %q", cfg.Warnings, tt.warn)
			}
			if tt.warn == "" && strings.Contains(all, "repo_lock") {
				t.Errorf("unexpected warnings %q", cfg.Warnings)
			}
		})
	}
}

// TestRepoLocksNeedAllowedOverrides checks that a project's repo_locks or
// repo_locking is refused unless allowed_overrides lists that key, and that
// invalid modes stay refused.
func TestRepoLocksNeedAllowedOverrides(t *testing.T) {
	tests := []struct {
		name, server, file, want string
	}{
		{"project repo_locks", "", "version: 3\nprojects:\n- dir: a\n  repo_locks: {mode: on_apply}\n",
			"atlantis.yaml line 4: projects[0].repo_locks: the server-side repo config does not allow this repository's config to set repo_locks"},
		{"project repo_locking, only repo_locks allowed", "    allowed_overrides: [repo_locks]\n", "version: 3\nprojects:\n- dir: a\n  repo_locking: false\n",
			"projects[0].repo_locking: the server-side repo config does not allow this repository's config to set repo_locking"},
		{"bad mode", "    allowed_overrides: [repo_locks]\n", "version: 3\nprojects:\n- dir: a\n  repo_locks: {mode: on_merge}\n",
			`projects[0].repo_locks.mode: "on_merge" is not one of disabled, on_plan, on_apply`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := server(t, "repos:\n  - id: /.*/\n    repo_locks: {mode: on_plan}\n"+tt.server)
			_, err := loadWith(t, sc, repoID, "main", map[string]string{"atlantis.yaml": tt.file})
			wantInvalid(t, err, tt.want)
		})
	}
	if _, err := repocfg.ParseServerConfig("repos.yaml", []byte("repos:\n  - id: /.*/\n    repo_locks: {mode: sometimes}\n")); err == nil ||
		!strings.Contains(err.Error(), `repos[0].repo_locks.mode: "sometimes" is not one of disabled, on_plan, on_apply`) {
		t.Errorf("server mode sometimes: err = %v", err)
	}
}
