package command_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// hostileArgs are the words after "--" that the outside probe used to
// write files and divert state, in every spelling Go's flag package (which
// Terraform and OpenTofu parse their flags with) reads as the same flag,
// and the other flags no comment may carry. Each must be refused with a
// reply containing want. terraform's argv tests show, against a
// model of Terraform's own flag sets, what the first ones would have done.
var hostileArgs = []struct {
	command, args, want string
}{
	// The plan file: Terraform keeps the last -out, Atoll's came first.
	{"plan", "-out=/tmp/x", "Atoll sets -out itself"},
	{"plan", "--out=/tmp/x", "Atoll sets -out itself"},
	{"plan", "-out /tmp/x", "Atoll sets -out itself"},
	{"plan", "--out /tmp/x", "Atoll sets -out itself"},
	{"plan", "-OUT=/tmp/x", "Atoll sets -out itself"},
	{"plan", "-Out /tmp/x", "Atoll sets -out itself"},
	{"plan", "-target=a.b -out=/tmp/x", "Atoll sets -out itself"},
	{"plan", "'-out=/tmp/a b'", "Atoll sets -out itself"},
	// State and its backup.
	{"apply", "-state-out=/tmp/x.tfstate -backup=/tmp/y", "move Terraform's state"},
	{"apply", "--state-out /tmp/x.tfstate", "move Terraform's state"},
	{"apply", "-backup=/tmp/y", "move Terraform's state"},
	{"plan", "-state=/tmp/other.tfstate", "move Terraform's state"},
	{"plan", "-STATE=/tmp/other.tfstate", "move Terraform's state"},
	{"import", "-state-out=/tmp/x", "move Terraform's state"},
	{"state", "-backup=/tmp/y", "move Terraform's state"},
	{"state", "-state /tmp/x", "move Terraform's state"},
	// Other files written or read.
	{"plan", "-generate-config-out=/tmp/gen.tf", "write files"},
	{"plan", "-json-into=/tmp/x", "write files"},
	{"plan", "-install-autocomplete", "write files"},
	{"plan", "-plugin-dir=/tmp/evil", "read configuration or plugins"},
	{"import", "-config=/etc", "read configuration or plugins"},
	{"plan", "-target-file=/etc/passwd", "read configuration or plugins"},
	{"plan", "-chdir=/tmp", "another directory"},
	{"plan", "--chdir /tmp", "another directory"},
	{"plan", "-var-file=/etc/passwd", "is not allowed: name a file inside the repository"},
	{"plan", "-var-file ../../secret.tfvars", "is not allowed"},
	// Settings Atoll owns.
	{"plan", "-input=true", "Atoll sets -input itself"},
	{"plan", "-lock=false", "Atoll sets -lock itself"},
	{"apply", "-lock=false", "Atoll sets -lock itself"},
	{"plan", "-no-color", "Atoll sets -no-color itself"},
	{"plan", "-detailed-exitcode", "Atoll sets -detailed-exitcode itself"},
	{"apply", "-auto-approve", "Atoll sets -auto-approve itself"},
	{"plan", "-json", "JSON"},
	{"plan", "-show-sensitive", "sensitive values"},
	{"plan", "-v", "command line"},
	{"plan", "-help", "command line"},
	// Words Terraform would read as positional arguments: a path to apply.
	{"apply", "/tmp/other.tfplan", "not a flag"},
	{"plan", "-- -out=/tmp/x", `a second "--"`},
	{"plan", "-", "not a flag"},
	{"plan", "''", "not a flag"},
	{"plan", "-refresh false", "not a flag"},
	// Malformed flags and values.
	{"plan", "---out=/tmp/x", "not a flag Terraform can read"},
	{"plan", "-=x", "not a flag Terraform can read"},
	{"plan", "-target", "-target needs a value"},
	{"plan", "-target -out=/tmp/x", "-target needs a value"},
	{"plan", "-target=", "-target needs a value"},
	{"plan", "-destroy=maybe", "takes true or false"},
	{"plan", "-Target=a.b", "Terraform's flags are lower case"},
	// Flags of another command.
	{"apply", "-target=a.b", "not a flag of terraform apply"},
	{"state", "-var=a=b", "not a flag of terraform state rm"},
	{"import", "-destroy", "not a flag of terraform import"},
	{"plan", "-upgrade", "not a flag of terraform plan"},
	// Control characters reach the log as they are.
	{"plan", "'-var=a=\x1b[31mred'", "control characters"},
	{"plan", "-var 'a=\x1b]8;;http://evil\x07x'", "control characters"},
	{"plan", "'-target=a\x00b'", "control characters"},
}

// comment is the comment that passes args to command.
func comment(cmd, args string) string {
	switch cmd {
	case "import":
		return "atlantis import a.b id -- " + args
	case "state":
		return "atlantis state rm a.b -- " + args
	}
	return "atlantis " + cmd + " -- " + args
}

func TestSecurityTerraformArgsRefused(t *testing.T) {
	for _, tc := range hostileArgs {
		c := comment(tc.command, tc.args)
		cmd, err := defaultParser.Parse(c)
		if err == nil {
			t.Errorf("%q parsed as %+v; want it refused", c, cmd)
			continue
		}
		if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(atoll.ErrorMessage(err), tc.want) {
			t.Errorf("%q: reply %q, want one containing %q", c, atoll.ErrorMessage(err), tc.want)
		}
		// The reply quotes what it refuses with Go escapes, so no control
		// character typed in a comment reaches the reply either.
		if strings.ContainsAny(atoll.ErrorMessage(err), "\x1b\x00\x07") {
			t.Errorf("%q: reply repeats a control character: %q", c, atoll.ErrorMessage(err))
		}
	}
}

// The flags experienced users pass after "--" still work, in every
// spelling Terraform reads.
func TestTerraformArgsAccepted(t *testing.T) {
	for _, tc := range []struct{ command, args string }{
		{"plan", "-target=aws_instance.web -refresh=false"},
		{"plan", "--target aws_instance.web --destroy"},
		{"plan", `-var 'a=b c' -var "x=\"y\"" -var-file=env/prod.tfvars`},
		{"plan", "-var-file env/prod.tfvars -replace=a.b -parallelism=3 -lock-timeout=5m"},
		{"plan", "-refresh-only -compact-warnings -exclude=module.x -concise"},
		{"plan", "-var x=-1"},
		{"apply", "-parallelism 2 -lock-timeout=30s"},
		{"apply", "-var=a=b"},
		{"import", "-var a=b -var-file=x.tfvars -lock-timeout=1m"},
		{"state", "-dry-run -lock-timeout=1m"},
	} {
		c := comment(tc.command, tc.args)
		if _, err := defaultParser.Parse(c); err != nil {
			t.Errorf("%q refused: %v", c, err)
		}
	}
}

// A repository's workflow extra_args are held to the same rule, with init's
// own flags; the message names the step.
func TestCheckTerraformArgs(t *testing.T) {
	p := command.Parser{}
	for _, tc := range []struct {
		step string
		args []string
		want string // "" when accepted
	}{
		{"init", []string{"-backend-config=key=value", "-upgrade", "-reconfigure", "-lockfile=readonly"}, ""},
		{"init", []string{"-backend-config", "backend/prod.hcl"}, ""},
		{"init", []string{"-backend-config=/etc/atoll/secrets.hcl"}, "is not allowed: name a file inside the repository"},
		{"init", []string{"-plugin-dir=/tmp"}, "read configuration or plugins"},
		{"init", []string{"-migrate-state"}, "move Terraform's state"},
		{"init", []string{"-from-module=git::https://x"}, "write files"},
		{"plan", []string{"-out=/tmp/x"}, "plan extra_args: Atoll sets -out itself"},
		{"plan", []string{"-var-file=prod.tfvars", "-target=a.b"}, ""},
		{"apply", []string{"-state-out=/tmp/x"}, "apply extra_args: -state-out would move"},
		{"state_rm", []string{"-backup=/tmp/y"}, "state_rm extra_args"},
		{"run", []string{"-out=/tmp/x"}, ""}, // not Terraform's: run steps take a command, not args
	} {
		err := p.CheckTerraformArgs(tc.step, tc.args)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s %q refused: %v", tc.step, tc.args, err)
		case tc.want != "" && (err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %q: err = %v, want EINVALID containing %q", tc.step, tc.args, err, tc.want)
		}
	}
}

// The operator's --blocked-extra-args still narrows what is allowed. It
// blocks the flag itself, as Terraform reads it, in any spelling and with
// or without a value, and never another flag that merely starts with the
// same letters.
func TestTerraformArgsOperatorBlocks(t *testing.T) {
	p := command.Parser{BlockedExtraArgs: []string{"-destroy", "--var", "-refresh"}}
	tests := []struct {
		comment string
		blocked string // the flag the reply names; "" when the comment parses
	}{
		{"atlantis plan -- --DESTROY", "--DESTROY"},
		{"atlantis plan -- -destroy=true", "-destroy"},
		{"atlantis plan -- -var a=b", "-var"},
		{"atlantis plan -- --var=a=b", "--var"},
		{"atlantis plan -- -refresh=false", "-refresh"},
		{"atlantis import a.b id -- -var=a=b", "-var"},
		{"atlantis plan -- -var-file=env.tfvars", ""},
		{"atlantis plan -- -refresh-only", ""},
		{"atlantis plan -- -target=var.destroy", ""},
	}
	for _, tt := range tests {
		cmd, err := p.Parse(tt.comment)
		if tt.blocked == "" {
			if err != nil || cmd == nil {
				t.Errorf("Parse(%q) = %v, %v; want it parsed", tt.comment, cmd, err)
			}
			continue
		}
		if want := fmt.Sprintf("terraform flag %q is not allowed on this server", tt.blocked); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q): err = %v, want %q", tt.comment, err, want)
		}
	}
}
