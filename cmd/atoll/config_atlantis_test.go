package main_test

import (
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// An Atlantis deployment's flags and environment carry over: ATLANTIS_*
// variables are read when ATOLL_* ones are not set, Atlantis's names of
// Atoll's flags work, and an alias given with its flag is refused.
func TestAtlantisFlagsAndEnvironment(t *testing.T) {
	base := []string{"--repo-allowlist", "github.com/acme/*"}
	cases := []parseCase{
		{"ATLANTIS_ variables", nil, map[string]string{"ATLANTIS_GH_USER": "atlantis-bot", "ATLANTIS_PARALLEL_POOL_SIZE": "7", "ATLANTIS_AUTOMERGE": "true"},
			func(c *main.Config) bool { return c.GHUser == "atlantis-bot" && c.Parallelism == 7 && c.Automerge }, ""},
		{"ATOLL_ wins over ATLANTIS_", nil, map[string]string{"ATLANTIS_GH_USER": "old", "ATOLL_GH_USER": "new"},
			func(c *main.Config) bool { return c.GHUser == "new" }, ""},
		{"the command line wins over both", []string{"--gh-user", "cli"}, map[string]string{"ATLANTIS_GH_USER": "old", "ATOLL_GH_USER": "new"},
			func(c *main.Config) bool { return c.GHUser == "cli" }, ""},
		{"--atlantis-url", []string{"--atlantis-url", "https://atoll.example.com"}, nil,
			func(c *main.Config) bool { return c.PublicURL == "https://atoll.example.com" }, ""},
		{"--parallel-pool-size", []string{"--parallel-pool-size=9"}, nil, func(c *main.Config) bool { return c.Parallelism == 9 }, ""},
		{"Atlantis's flags", []string{"--automerge", "--parallel-plan", "--parallel-apply", "--disable-apply-all",
			"--fail-on-pre-workflow-hook-error", "--silence-fork-pr-errors", "--silence-no-projects"}, nil,
			func(c *main.Config) bool {
				return c.Automerge && c.ParallelPlan && c.ParallelApply && c.DisableApplyAll && c.FailOnPreWorkflowHookError &&
					c.SilenceForkPRErrors && c.SilenceNoProjects
			}, ""},
		{"alias and flag", []string{"--atlantis-url", "https://a", "--public-url", "https://b"}, nil, nil, "--atlantis-url is Atlantis's name of --public-url"},
		{"alias in the environment and flag", []string{"--parallelism", "3"}, map[string]string{"ATLANTIS_PARALLEL_POOL_SIZE": "15"}, nil, "--parallel-pool-size is Atlantis's name of --parallelism"},
		{"a bad ATLANTIS_ value names the variable", nil, map[string]string{"ATLANTIS_AUTOMERGE": "maybe"}, nil, "ATLANTIS_AUTOMERGE"},
		{"--blocked-extra-args and --var-file-allowlist", []string{"--blocked-extra-args", "-target, --replace", "--var-file-allowlist", "/srv/vars,/etc/tf/../vars"}, nil,
			func(c *main.Config) bool {
				return strings.Join(c.BlockedExtraArgs, " ") == "-target --replace" && strings.Join(c.VarFileAllowlist, " ") == "/srv/vars /etc/vars"
			}, ""},
		{"a blocked extra arg that is no flag", []string{"--blocked-extra-args", "target"}, nil, nil, "is not a terraform flag"},
		{"a certificate without its key", []string{"--ssl-cert-file", "/tmp/c.pem"}, nil, nil, "--ssl-cert-file and --ssl-key-file go together"},
		{"--automerge-method", []string{"--automerge-method", "squash"}, nil, func(c *main.Config) bool { return c.AutomergeMethod == "squash" }, ""},
		{"a bad --automerge-method", []string{"--automerge-method", "fast-forward"}, nil, nil, "--automerge-method must be merge, rebase or squash"},
		{"a status name with a slash", []string{"--vcs-status-name", "a/b"}, nil, nil, "--vcs-status-name must be"},
		{"an alias is checked like its flag", []string{"--parallel-pool-size", "0"}, nil, nil, "--parallelism must be between 1 and 256"},
	}
	runParseCases(t, base, cases)
}

// parseCase is one case of Config.Parse: base's arguments then args, with
// env, give a config that want accepts, or an error containing err.
type parseCase struct {
	name string
	args []string
	env  map[string]string
	want func(c *main.Config) bool
	err  string
}

// runParseCases runs cases; no error may quote one of secrets.
func runParseCases(t *testing.T, base []string, cases []parseCase, secrets ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var c main.Config
			err := c.Parse(append(append([]string{}, base...), tc.args...), envOf(tc.env))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Parse = %v; want an error containing %q", err, tc.err)
				}
				for _, secret := range secrets {
					if strings.Contains(err.Error(), secret) {
						t.Fatalf("the error quotes a secret: %v", err)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(&c) {
				t.Fatalf("config = %+v", c)
			}
		})
	}
}
