package main_test

import (
	"reflect"
	"strings"
	"testing"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// --allow-commands as in Atlantis: its default set, "all", duplicates
// folded, unknown names refused; ATOLL_ALLOW_COMMANDS too.
func TestAllowCommandsFlag(t *testing.T) {
	cases := []struct {
		args []string
		env  map[string]string
		want []string
		err  string
	}{
		{nil, nil, []string{"version", "plan", "apply", "unlock", "approve_policies", "cancel"}, ""},
		{[]string{"--allow-commands", "all"}, nil, []string{"version", "plan", "apply", "cancel", "unlock", "approve_policies", "import", "state"}, ""},
		{[]string{"--allow-commands", "plan, apply,plan"}, nil, []string{"plan", "apply"}, ""},
		{[]string{"--allow-commands", ""}, nil, []string{}, ""},
		{nil, map[string]string{"ATOLL_ALLOW_COMMANDS": "cancel,unlock"}, []string{"cancel", "unlock"}, ""},
		{[]string{"--allow-commands", "plan,policy_check"}, nil, nil, `unknown command "policy_check"`},
		{[]string{"--allow-commands", "Plan"}, nil, nil, `unknown command "Plan"`},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cfg := main.NewMain().Config
			err := cfg.Parse(append([]string{"--repo-allowlist", "github.com/acme/*"}, c.args...), envOf(c.env))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("Parse error = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.AllowCommands, c.want) {
				t.Fatalf("AllowCommands = %q, want %q", cfg.AllowCommands, c.want)
			}
		})
	}
}
