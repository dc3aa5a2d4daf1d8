package runner

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/repocfg"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/vcs"
	"github.com/atollhq/atoll/vcs/local"
)

// runTeamAuthz follows Atlantis's contract: args, then command, owner/repo
// and owner/team per team; allowed only by "pass" (any case) on the last
// line of a successful run; otherwise the last line is the reason.
func TestRunTeamAuthz(t *testing.T) {
	tmp := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &Runner{Logger: logger, Terraform: terraform.Runner{Procs: &procs.Registry{Dir: filepath.Join(tmp, "procs")},
		Env: []string{"SERVER_EXTRA=tf-only"}, RunEnv: []string{"GIT_GRANT=secret-grant"}}}
	w := &work{log: logger, req: &atoll.Request{User: "bob"},
		repo: &atoll.Repo{Owner: "acme", Name: "infra"},
		pull: &atoll.Pull{Number: 42, HeadRef: "feature", BaseRef: "main", Author: "alice"}}
	argvFile := filepath.Join(tmp, "argv")
	sh := func(script string) *repocfg.TeamAuthz {
		// The configured command is a shell here; Atoll adds none of its own.
		return &repocfg.TeamAuthz{Command: "/bin/sh", Args: []string{"-c", `printf '%s|' "$@" > ` + argvFile + `; echo >> ` + argvFile + `; env >> ` + argvFile + "; " + script, "authz", "--flag"}}
	}
	for _, tc := range []struct {
		name, script string
		ok           bool
		reason, err  string
	}{
		{"pass", "echo pass", true, "", ""},
		{"pass any case, last line", "echo checking; echo PaSs", true, "", ""},
		{"reason on the last line", "echo pass; echo 'apply needs ops'", false, "apply needs ops", ""},
		{"nothing printed", "true", false, "", ""},
		{"failure denies even with pass", "echo pass; exit 3", false, "", "exit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ok, reason, err := r.runTeamAuthz(t.Context(), w, sh(tc.script), "apply", []string{"ops", "devs"}, authzTarget{project: "prod", dir: "production", workspace: "default"})
			if ok != tc.ok || reason != tc.reason || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("got %v %q %v; want %v %q error %q", ok, reason, err, tc.ok, tc.reason, tc.err)
			}
			b, _ := os.ReadFile(argvFile)
			got := string(b)
			if !strings.HasPrefix(got, "--flag|apply|acme/infra|acme/ops|acme/devs|\n") {
				t.Fatalf("argv: %q", got)
			}
			for _, want := range []string{"PROJECT_NAME=prod", "REPO_REL_PATH=production", "USER_NAME=bob", "COMMAND_NAME=apply", "PULL_NUM=42"} {
				if !strings.Contains(got, want+"\n") {
					t.Fatalf("env lacks %s:\n%s", want, got)
				}
			}
			if strings.Contains(got, "secret-grant") || strings.Contains(got, "tf-only") {
				t.Fatalf("the run's grant or Terraform's extra settings reached team_authz:\n%s", got)
			}
		})
	}

	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	if ok, _, err := r.runTeamAuthz(ctx, w, sh("sleep 20; echo pass"), "plan", nil, authzTarget{}); ok || err == nil {
		t.Fatalf("a command that does not finish: ok=%v err=%v, want refused with an error", ok, err)
	}
}

// A cancel comment acts at intake: under team_authz the command is asked
// there, so that someone it refuses cancels nothing.
func TestIntakeAuthz(t *testing.T) {
	tmp := t.TempDir()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	a := &repocfg.TeamAuthz{Command: "/bin/sh", Args: []string{"-c", `[ "$USER_NAME" = mallory ] && echo no || echo pass`, "authz"}}
	r := &Runner{
		Logger:    logger,
		Providers: map[string]vcs.Provider{"test": &local.Provider{}},
		Terraform: terraform.Runner{Procs: &procs.Registry{Dir: filepath.Join(tmp, "procs")}},
		Config:    Config{ServerConfig: &repocfg.ServerConfig{TeamAuthz: a}},
	}
	ev := func(user string) *vcs.Event {
		return &vcs.Event{Kind: vcs.EventComment, Repo: atoll.Repo{VCS: "test", Owner: "acme", Name: "infra"}, Pull: atoll.Pull{Number: 1}, User: user}
	}
	if !r.intakeTeamAllows(t.Context(), ev("alice"), "cancel") {
		t.Fatal("alice's cancel was refused")
	}
	if r.intakeTeamAllows(t.Context(), ev("mallory"), "cancel") {
		t.Fatal("mallory's cancel was allowed")
	}
}
