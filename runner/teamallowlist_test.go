package runner_test

import (
	"testing"

	"github.com/atollhq/atoll/runner"
)

func TestTeamAllowlistAllows(t *testing.T) {
	list, err := runner.ParseTeamAllowlist(" dev:plan, Ops:APPLY ,devops:*,*:version,")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		teams []string
		cmd   string
		want  bool
	}{
		{[]string{"dev"}, "plan", true},
		{[]string{"dev"}, "apply", false},
		{[]string{"ops"}, "apply", true},
		{[]string{"OPS"}, "apply", true}, // slugs compare without case
		{[]string{"ops"}, "plan", false},
		{[]string{"devops"}, "unlock", true},
		{nil, "version", true}, // a "*" team rule needs no team
		{nil, "plan", false},
		{[]string{"docs", "dev"}, "plan", true},
		{[]string{"developers"}, "plan", false},
	}
	for _, tc := range cases {
		if got := list.Allows(tc.teams, tc.cmd); got != tc.want {
			t.Errorf("Allows(%v, %s) = %v; want %v", tc.teams, tc.cmd, got, tc.want)
		}
	}
	if empty, err := runner.ParseTeamAllowlist(""); err != nil || empty != nil {
		t.Errorf("empty list = %v, %v; want nil (no check)", empty, err)
	}
	for _, bad := range []string{"dev", "dev:", ":plan", "dev:deploy", "dev:plan:apply"} {
		if _, err := runner.ParseTeamAllowlist(bad); err == nil {
			t.Errorf("ParseTeamAllowlist(%q) accepted", bad)
		}
	}
}
