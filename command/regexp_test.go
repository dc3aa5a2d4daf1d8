package command_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// --enable-regexp-cmd reads -p as a regular expression over whole project
// names; one that does not compile is answered with usage. Without the
// flag -p is a name.
func TestEnableRegexpCmd(t *testing.T) {
	p := command.Parser{EnableRegexpCmd: true}
	cmd, err := p.Parse("atlantis plan -p stag.*")
	if err != nil || cmd.ProjectRegexp == nil {
		t.Fatalf("Parse: %+v, %v", cmd, err)
	}
	for name, want := range map[string]bool{"staging": true, "stage": true, "prestaging": false, "prod": false} {
		if got := cmd.ProjectRegexp.MatchString(name); got != want {
			t.Errorf("%q matches %q: %v, want %v", cmd.Project, name, got, want)
		}
	}
	alt, err := p.Parse("atlantis apply -p dev|prod")
	if err != nil || !alt.ProjectRegexp.MatchString("prod") || alt.ProjectRegexp.MatchString("xprod") || alt.ProjectRegexp.MatchString("devx") {
		t.Fatalf("an alternation matches whole names only: %+v, %v", alt, err)
	}
	_, err = p.Parse("atlantis plan -p stag(")
	if err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), "not a regular expression") {
		t.Fatalf("invalid regexp: %v", err)
	}
	plain, err := command.Parser{}.Parse("atlantis plan -p stag.*")
	if err != nil || plain.ProjectRegexp != nil || plain.Project != "stag.*" {
		t.Fatalf("without the flag: %+v, %v", plain, err)
	}
}
