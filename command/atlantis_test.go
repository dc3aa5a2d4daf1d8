package command_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// TestAtlantisCommentParserCases walks the behaviours Atlantis's comment
// parser tests pin down, case by case: what it ignores, what it parses to
// which command, and what it answers with a reply. Where Atoll is
// deliberately stricter the case says so in strict (and docs/configuration.md
// "Comment grammar" lists it with the reason).
func TestAtlantisCommentParserCases(t *testing.T) {
	const (
		ignore = iota // not addressed to Atoll: no reply
		parsed        // runs want
		reply         // answered with a reply containing phrase
	)
	all := command.Parser{VCSUser: "github-user"}
	custom := command.Parser{ExecutableName: "custom-executable-name", VCSUser: "github-user"}
	someAllowed := command.Parser{AllowCommands: []string{"version", "unlock", "apply", "plan"}}
	none := command.Parser{AllowCommands: []string{}}
	tests := []struct {
		parser  command.Parser
		comment string
		outcome int
		want    command.Command // outcome parsed
		phrase  string          // outcome reply
		strict  string          // why Atoll refuses what Atlantis accepts
	}{
		// Ignored comments.
		{all, "", ignore, command.Command{}, "", ""},
		{all, "a", ignore, command.Command{}, "", ""},
		{all, "abc", ignore, command.Command{}, "", ""},
		{all, "atlantis plan\nbut with newlines", ignore, command.Command{}, "", ""},
		{all, "terraform plan\nbut with newlines", ignore, command.Command{}, "", ""},
		{all, "This shouldn't error, but it does.", ignore, command.Command{}, "", ""},

		// Executable names: the configured one, "run" and @user; not the bare
		// user name, nor "atlantis" once another name is configured.
		{custom, "custom-executable-name help", parsed, command.Command{Name: "help"}, "", ""},
		{custom, "run help", parsed, command.Command{Name: "help"}, "", ""},
		{custom, "@github-user help", parsed, command.Command{Name: "help"}, "", ""},
		{custom, "github-user help", ignore, command.Command{}, "", ""},
		{custom, "atlantis help", ignore, command.Command{}, "", ""},
		{command.Parser{VCSUser: "gl"}, "@gl help", parsed, command.Command{Name: "help"}, "", ""},

		// Help, whatever follows it, and the bare prefix; with or without
		// allowed commands.
		{all, "run", parsed, command.Command{Name: "help"}, "", ""},
		{all, "atlantis", parsed, command.Command{Name: "help"}, "", ""},
		{all, "@github-user", parsed, command.Command{Name: "help"}, "", ""},
		{all, "atlantis help", parsed, command.Command{Name: "help"}, "", ""},
		{all, "atlantis --help", parsed, command.Command{Name: "help"}, "", ""},
		{all, "atlantis -h", parsed, command.Command{Name: "help"}, "", ""},
		{all, "atlantis help something else", parsed, command.Command{Name: "help", Args: []string{"something", "else"}}, "", ""},
		{none, "atlantis help plan", parsed, command.Command{Name: "help", Args: []string{"plan"}}, "", ""},

		// Backticks and whitespace around the command are trimmed.
		{all, "`atlantis help`", parsed, command.Command{Name: "help"}, "", ""},
		{all, "`  atlantis help  `", parsed, command.Command{Name: "help"}, "", ""},
		{all, "`atlantis help`  ", parsed, command.Command{Name: "help"}, "", ""},
		{all, "  `atlantis help", parsed, command.Command{Name: "help"}, "", ""},

		// Trailing and leading blank lines; case of prefix and command.
		{all, "atlantis plan\n", parsed, command.Command{Name: "plan"}, "", ""},
		{all, "atlantis plan\n\n", parsed, command.Command{Name: "plan"}, "", ""},
		{all, "atlantis plan\r\n\r\n", parsed, command.Command{Name: "plan"}, "", ""},
		{all, "\r\natlantis plan\r\n", parsed, command.Command{Name: "plan"}, "", ""},
		{all, "Atlantis Plan", parsed, command.Command{Name: "plan"}, "", ""},
		{all, "ATLANTIS PLAN", parsed, command.Command{Name: "plan"}, "", ""},

		// Positional words where none are taken, and the wrong number of them.
		{all, "atlantis plan -d . arg", reply, command.Command{}, `unexpected argument "arg"`, ""},
		{all, "atlantis plan arg -d .", reply, command.Command{}, `unexpected argument "arg"`, ""},
		{all, "atlantis plan -d . arg -w kjj arg2", reply, command.Command{}, `unexpected argument "arg"`, ""},
		{all, "atlantis apply arg arg2 -- useful", reply, command.Command{}, `unexpected argument "arg"`, ""},
		{all, "atlantis apply arg arg2 --", reply, command.Command{}, `unexpected argument "arg"`, ""},
		{all, "atlantis approve_policies arg arg2 arg3 --", reply, command.Command{}, `unexpected argument "arg"`, ""},
		{all, "atlantis import arg --", reply, command.Command{}, "wrong number of arguments (1): import ADDRESS ID", ""},
		{all, "atlantis import arg1 arg2 arg3 --", reply, command.Command{}, "wrong number of arguments (3): import ADDRESS ID", ""},
		{all, "atlantis import", reply, command.Command{}, "missing argument(s): import ADDRESS ID", ""},
		{all, "atlantis state", reply, command.Command{}, "subcommand required", ""},
		{all, "atlantis state list", reply, command.Command{}, `invalid subcommand "list" (not rm)`, ""},
		{all, "atlantis state rm", reply, command.Command{}, "missing argument(s): state rm ADDRESS...", ""},
		{all, "atlantis unlock -d .", reply, command.Command{}, "Usage of unlock:", ""},
		{all, "atlantis cancel now", reply, command.Command{}, "Usage of cancel:", ""},

		// "terraform" and misspellings of the default name.
		{all, "terraform", reply, command.Command{}, "Did you mean to use `atlantis` instead of `terraform`?", ""},
		{all, "terraform plan -w workspace -d . -- test", reply, command.Command{}, "Did you mean to use `atlantis` instead of `terraform`?", ""},
		{all, "atlantsi plan", reply, command.Command{}, "Did you mean to use `atlantis` instead of `atlantsi`?", ""},
		{command.Parser{ExecutableName: "atlantis-sec"}, "atlantis-dev unlock", ignore, command.Command{}, "", ""},

		// Unknown and disallowed commands list what is available.
		{someAllowed, "atlantis paln", reply, command.Command{}, "Error: unknown command \"paln\".\nRun 'atlantis --help' for usage.\nAvailable commands(--allow-commands): version, plan, apply, unlock\n", ""},
		{someAllowed, "atlantis appely apply", reply, command.Command{}, `unknown command "appely"`, ""},
		{someAllowed, "atlantis import a b", reply, command.Command{}, `unknown command "import"`, ""},

		// Asking a command for its usage is not an error.
		{all, "atlantis plan -h", reply, command.Command{}, "Usage of plan:", ""},
		{all, "atlantis apply --help", reply, command.Command{}, "Usage of apply:", ""},
		{all, "atlantis approve_policies -h", reply, command.Command{}, "Usage of approve_policies:", ""},
		{all, "atlantis import --help", reply, command.Command{}, "Usage of import ADDRESS ID:", ""},
		{all, "atlantis state -h", reply, command.Command{}, "Usage of state rm ADDRESS...:", ""},

		// Unknown flags.
		{all, "atlantis plan -e", reply, command.Command{}, `unknown flag "-e"`, ""},
		{all, "atlantis apply --abc", reply, command.Command{}, `unknown flag "--abc"`, ""},
		{all, "atlantis import --abc", reply, command.Command{}, `unknown flag "--abc"`, ""},
		{all, "atlantis state rm --abc", reply, command.Command{}, `unknown flag "--abc"`, ""},
		{all, "atlantis plan --auto-merge-disabled", reply, command.Command{}, `unknown flag "--auto-merge-disabled"`, ""},

		// Directories outside the repository.
		{all, "atlantis plan -d ..", reply, command.Command{}, `must not contain ".."`, ""},
		{all, "atlantis import -d .. address id", reply, command.Command{}, `must not contain ".."`, ""},
		{all, "atlantis state -d ./.. rm address", reply, command.Command{}, `must not contain ".."`, ""},
		{all, "atlantis apply -d a/../..", reply, command.Command{}, `must not contain ".."`, ""},
		{all, "atlantis plan -d /..", reply, command.Command{}, `must not contain ".."`,
			"Atlantis roots /.. back to the repository; Atoll refuses every .. element, which never names a project"},
		{all, "atlantis plan -d a/../b", reply, command.Command{}, `must not contain ".."`,
			"a path that leaves and re-enters a directory is refused rather than resolved"},
		{all, "atlantis plan -d 'modules/*'", parsed, command.Command{Name: "plan", Dir: "modules/*"}, "",
			"as Atlantis v0.47: a -d glob pattern selects the projects whose dir it matches"},
		{all, "atlantis apply -d ./envs/** -w prod", parsed, command.Command{Name: "apply", Dir: "envs/**", Workspace: "prod"}, "", ""},
		{all, "atlantis plan -d '/env?'", parsed, command.Command{Name: "plan", Dir: "env?"}, "", ""},
		{all, "atlantis plan -d '../*'", reply, command.Command{}, `must not contain ".."`, ""},
		{all, "atlantis plan -d 'a/**/..*'", reply, command.Command{}, `must not contain ".."`, "Atlantis refuses .. anywhere in a pattern"},
		{all, "atlantis plan -d 'a/[b'", reply, command.Command{}, "is not a valid glob pattern", ""},
		{all, "atlantis import -d 'modules/*' address id", reply, command.Command{}, "glob patterns select projects of plan and apply only",
			"Atlantis would import into every match; Atoll refuses"},

		// Workspaces.
		{all, "atlantis plan -w ..", reply, command.Command{}, `invalid -w/--workspace ".."`, ""},
		{all, "atlantis plan -w /", reply, command.Command{}, `invalid -w/--workspace "/"`, ""},
		{all, "atlantis state -w abc.. rm address", reply, command.Command{}, "invalid -w/--workspace", ""},
		{all, "atlantis import -w ../../../etc/passwd address id", reply, command.Command{}, "invalid -w/--workspace", ""},
		{all, "atlantis plan -w ~user", reply, command.Command{}, "invalid -w/--workspace", ""},
		{all, "atlantis plan -w a$HOME", reply, command.Command{}, "invalid -w/--workspace", ""},
		{all, "atlantis plan -w 'a;id'", reply, command.Command{}, "invalid -w/--workspace",
			"workspace names become file and directory names; Atoll allows letters, digits, - _ . only"},
		{all, "atlantis plan -w _foo", reply, command.Command{}, "invalid -w/--workspace",
			"as above: a workspace starts with a letter or digit"},

		// Terraform flags that leave the project.
		{all, "atlantis plan -- -chdir=../other", reply, command.Command{}, `-chdir would run Terraform in another directory`, ""},
		{all, "atlantis plan -- --chdir", reply, command.Command{}, `-chdir would run Terraform in another directory`, ""},
		{all, "atlantis plan -- -plugin-dir=/tmp/evil", reply, command.Command{}, `-plugin-dir would make Terraform read`, ""},
		{all, "atlantis import address id -- -chdir=..", reply, command.Command{}, `-chdir would run Terraform in another directory`, ""},
		{all, "atlantis plan -- -chdirx", reply, command.Command{}, `"-chdirx" is not a flag of terraform plan that Atoll passes on`,
			"Atoll passes only the Terraform flags on its allowlist"},

		// -p cannot be combined with -d or -w.
		{all, "atlantis plan -w workspace -p project", reply, command.Command{}, "cannot use -p/--project at same time as -d/--dir or -w/--workspace", ""},
		{all, "atlantis plan -d dir -p project", reply, command.Command{}, "cannot use -p/--project at same time", ""},

		// Flag parsing, each command.
		{all, "atlantis plan -w workspace -d dir --verbose", parsed, command.Command{Name: "plan", Workspace: "workspace", Dir: "dir", Verbose: true}, "", ""},
		{all, "atlantis plan --verbose -p project", parsed, command.Command{Name: "plan", Project: "project", Verbose: true}, "", ""},
		{all, "atlantis plan -w workspace -- -d dir --verbose", reply, command.Command{}, `"-d" is not a flag of terraform plan`,
			"Atlantis passes any words after --; Atoll passes only flags Terraform's plan reads and Atoll does not set itself"},
		{all, "atlantis plan -w workspace -- -target=a.b --refresh=false", parsed, command.Command{Name: "plan", Workspace: "workspace", ExtraArgs: []string{"-target=a.b", "--refresh=false"}}, "", ""},
		{all, "atlantis plan --", parsed, command.Command{Name: "plan"}, "", ""},
		{all, "atlantis apply\t-w\tworkspace\t-d\tdir\t--verbose\t--\targ\tone\t-two\t--three\t&&", reply, command.Command{},
			`"arg" is not a flag: Terraform would read it as a path`, "Atoll refuses words Terraform would read as positional arguments"},
		{all, "atlantis apply\t-w\tworkspace\t-d\tdir\t--verbose\t--\t-parallelism\t3", parsed,
			command.Command{Name: "apply", Workspace: "workspace", Dir: "dir", Verbose: true, ExtraArgs: []string{"-parallelism", "3"}}, "", ""},
		{all, "atlantis plan -d /", parsed, command.Command{Name: "plan", Dir: "."}, "", ""},
		{all, "atlantis plan -d /adir", parsed, command.Command{Name: "plan", Dir: "adir"}, "", ""},
		{all, "atlantis plan -d ./adir", parsed, command.Command{Name: "plan", Dir: "adir"}, "", ""},
		{all, `atlantis plan -d "dir with space"`, parsed, command.Command{Name: "plan", Dir: "dir with space"}, "", ""},
		{all, "atlantis apply --auto-merge-disabled", parsed, command.Command{Name: "apply", AutoMergeDisabled: true}, "", ""},
		{all, "atlantis apply -d dir --auto-merge-method squash", parsed, command.Command{Name: "apply", Dir: "dir", AutoMergeMethod: "squash"}, "", ""},
		{all, "atlantis apply --auto-merge-method squash --auto-merge-disabled", reply, command.Command{}, "cannot use --auto-merge-method at the same time as --auto-merge-disabled", ""},
		{all, "atlantis apply --auto-merge-method fast-forward", reply, command.Command{}, `invalid --auto-merge-method "fast-forward"`, ""},
		{all, "atlantis approve_policies -p vpc --policy-set sec --clear-policy-approval", parsed,
			command.Command{Name: "approve_policies", Project: "vpc", PolicySet: "sec", ClearPolicyApproval: true}, "", ""},
		{all, "atlantis version -d dir -w ws --verbose", parsed, command.Command{Name: "version", Dir: "dir", Workspace: "ws", Verbose: true}, "", ""},
		{all, "atlantis version -p vpc", parsed, command.Command{Name: "version", Project: "vpc"}, "", ""},
		{all, "atlantis cancel", parsed, command.Command{Name: "cancel"}, "", ""},
		{all, "atlantis unlock", parsed, command.Command{Name: "unlock"}, "", ""},
		{all, `atlantis import -w workspace -d dir 'some["addr"]' id -- -var foo=bar`, parsed,
			command.Command{Name: "import", Workspace: "workspace", Dir: "dir", Args: []string{`some["addr"]`, "id"}, ExtraArgs: []string{"-var", "foo=bar"}}, "", ""},
		{all, `atlantis import 'some["addr"]' id --verbose`, parsed,
			command.Command{Name: "import", Args: []string{`some["addr"]`, "id"}, Verbose: true}, "", ""},
		{all, "atlantis import -d modules/a address id", parsed, command.Command{Name: "import", Dir: "modules/a", Args: []string{"address", "id"}}, "", ""},
		{all, `atlantis state rm 'some["addr"]' -p project`, parsed,
			command.Command{Name: "state", SubName: "rm", Args: []string{`some["addr"]`}, Project: "project"}, "", ""},
		{all, "atlantis state -d dir rm a.b c.d -- -lock=false", reply, command.Command{}, "Atoll sets -lock itself",
			"Atlantis passes -lock=false on; Atoll never lets a comment turn off state locking"},
		{all, "atlantis state -d dir rm a.b c.d -- -lock-timeout=5m", parsed,
			command.Command{Name: "state", SubName: "rm", Dir: "dir", Args: []string{"a.b", "c.d"}, ExtraArgs: []string{"-lock-timeout=5m"}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.comment, func(t *testing.T) {
			got, err := tt.parser.Parse(tt.comment)
			switch tt.outcome {
			case ignore:
				if got != nil || err != nil {
					t.Fatalf("Parse(%q) = %+v, %v; want it ignored", tt.comment, got, err)
				}
			case parsed:
				if err != nil {
					t.Fatalf("Parse(%q) error:\n%s", tt.comment, atoll.ErrorMessage(err))
				}
				if got == nil || !reflect.DeepEqual(*got, tt.want) {
					t.Fatalf("Parse(%q)\n got %+v\nwant %+v", tt.comment, got, tt.want)
				}
			case reply:
				var aerr *atoll.Error
				if got != nil || !errors.As(err, &aerr) || aerr.Code != atoll.EINVALID {
					t.Fatalf("Parse(%q) = %+v, %v; want a reply", tt.comment, got, err)
				}
				if !strings.Contains(aerr.Message, tt.phrase) {
					t.Fatalf("Parse(%q) reply lacks %q:\n%s", tt.comment, tt.phrase, aerr.Message)
				}
			}
		})
	}
}
