package command_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/command"
)

// -var-file in a comment names a file inside the checkout or under
// --var-file-allowlist (Atlantis's rule): Terraform would otherwise read a
// server file and quote it in its errors.
func TestVarFileAllowlist(t *testing.T) {
	p := command.Parser{VarFileAllowlist: []string{"/etc/atoll/vars"}}
	for _, tc := range []struct {
		comment string
		refused bool
	}{
		{"atlantis plan -- -var-file=prod.tfvars", false},
		{"atlantis plan -- -var-file env/prod.tfvars", false},
		{"atlantis plan -- --var-file=./a/../b.tfvars", false},
		{"atlantis plan -- -var-file=/etc/atoll/vars/prod.tfvars", false},
		{"atlantis plan -- -var-file=/etc/passwd", true},
		{"atlantis plan -- -var-file /etc/atoll/vars/../secret.tfvars", true},
		{"atlantis plan -- -var-file=/etc/atoll/varsx/a.tfvars", true},
		{"atlantis plan -- -var-file=../other/prod.tfvars", true},
		{"atlantis plan -- --var-file=a/../../x.tfvars", true},
		{"atlantis plan -- -var-file=~/secrets.tfvars", true},
		{"atlantis plan -- -var-file=..", true},
		{"atlantis apply -- -var-file=/etc/passwd", true},
		{"atlantis plan -- -var=x=/etc/passwd", false},
	} {
		cmd, err := p.Parse(tc.comment)
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(), "-var-file")):
			t.Errorf("%q: got %+v, %v; want refused", tc.comment, cmd, err)
		case !tc.refused && (err != nil || cmd == nil):
			t.Errorf("%q: got %v; want parsed", tc.comment, err)
		}
	}
	if _, err := (command.Parser{}).Parse("atlantis plan -- -var-file=/etc/atoll/vars/prod.tfvars"); err == nil {
		t.Error("without an allowlist an absolute -var-file was accepted")
	}
}

// --blocked-extra-args narrows the flags comments may pass; the flags no
// server allows are refused whatever it says (tfargs_test.go).
func TestBlockedExtraArgs(t *testing.T) {
	p := command.Parser{BlockedExtraArgs: []string{"-target", "--replace"}}
	for _, tc := range []struct {
		comment string
		refused bool
	}{
		{"atlantis plan -- -target=module.x", true},
		{"atlantis plan -- --TARGET=module.x", true},
		{"atlantis plan -- -replace=aws_instance.x", true},
		{"atlantis plan -- -refresh=false", false},
	} {
		cmd, err := p.Parse(tc.comment)
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(), "is not allowed on this server")):
			t.Errorf("%q: got %+v, %v; want refused", tc.comment, cmd, err)
		case !tc.refused && err != nil:
			t.Errorf("%q: got %v; want parsed", tc.comment, err)
		}
	}
	if _, err := (command.Parser{}).Parse("atlantis plan -- -target=module.x"); err != nil {
		t.Errorf("without --blocked-extra-args -target was refused: %v", err)
	}
}
