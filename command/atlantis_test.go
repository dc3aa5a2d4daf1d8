package command_test

import (
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// What Atlantis does with a comment, and so what Atoll must do unless the
// case says why it is stricter.
const (
	ignore = iota // not addressed to the server: no reply
	parsed        // runs want
	reply         // answered with a reply containing phrase
)

// atlantisCase is one comment of Atlantis's comment parser tests
// (server/events/comment_parser_test.go), re-expressed for Atoll.
type atlantisCase struct {
	parser  command.Parser
	comment string
	outcome int
	want    command.Command // outcome parsed
	phrase  string          // outcome reply
	// strict says why Atoll refuses what Atlantis accepts; docs/configuration.md
	// lists each such comment with this reason (TestStricterCasesDocumented).
	strict string
}

// caseGroup gathers the cases of one of Atlantis's tests; from is its name,
// or "" for the cases Atoll adds around them.
type caseGroup struct {
	from  string
	cases []atlantisCase
}

var (
	all         = command.Parser{VCSUser: "github-user"}
	custom      = command.Parser{ExecutableName: "custom-executable-name", VCSUser: "github-user"}
	someAllowed = command.Parser{AllowCommands: []string{"version", "unlock", "apply", "plan", "apply"}}
	none        = command.Parser{VCSUser: "github-user", AllowCommands: []string{}}
	defaults    = command.Parser{AllowCommands: command.DefaultAllowCommands}
)

// Reasons for the stricter cases, shared by the cases they cover.
const (
	whyTFWords = "after `--` Atoll passes only Terraform flags on its allowlist for the command; Atlantis passes any word"
	whyWSChars = "workspace names become file and directory names and lock keys: Atoll allows letters, digits, `-`, `_` and `.`, starting with a letter or digit"
	whyChdir   = "-chdir is refused on every server: --blocked-extra-args only adds refusals to Atoll's allowlist, it does not replace them"
	whyDotDot  = "a `..` element is refused even where it would resolve back inside the repository: such a path never names a project"
	whyLock    = "a comment can never turn off state locking: Atoll sets -lock itself"
)

// atlantisGroups are Atlantis's comment parser tests, table by table.
func atlantisGroups() []caseGroup {
	return []caseGroup{
		{"TestNewCommentParser", []atlantisCase{
			// Listed once each, in Atlantis's order, whatever the list says.
			{command.Parser{AllowCommands: []string{"plan", "plan", "plan"}}, "atlantis x", reply, command.Command{}, "Available commands(--allow-commands): plan\n", ""},
			// Names no comment can run are dropped from the list.
			{command.Parser{AllowCommands: []string{"plan", "apply", "unlock", "policy_check", "approve_policies", "autoplan", "version", "import"}}, "atlantis policy_check", reply, command.Command{},
				"Available commands(--allow-commands): version, plan, apply, unlock, approve_policies, import\n", ""},
		}},
		{"TestParse_Ignored", []atlantisCase{
			{all, "", ignore, command.Command{}, "", ""},
			{all, "a", ignore, command.Command{}, "", ""},
			{all, "abc", ignore, command.Command{}, "", ""},
			{all, "atlantis plan\nbut with newlines", ignore, command.Command{}, "", ""},
			{all, "terraform plan\nbut with newlines", ignore, command.Command{}, "", ""},
			{all, "This shouldn't error, but it does.", ignore, command.Command{}, "", ""},
		}},
		{"TestParse_ExecutableName", []atlantisCase{
			// The configured name, "run" and @user; not the bare user name,
			// nor "atlantis" once another name is configured.
			{custom, "custom-executable-name help", parsed, command.Command{Name: "help"}, "", ""},
			{custom, "run help", parsed, command.Command{Name: "help"}, "", ""},
			{custom, "@github-user help", parsed, command.Command{Name: "help"}, "", ""},
			{custom, "github-user help", ignore, command.Command{}, "", ""},
			{custom, "atlantis help", ignore, command.Command{}, "", ""},
		}},
		{"TestParse_HelpResponse", helpCases("run", "atlantis", "@github-user", "atlantis help", "atlantis --help", "atlantis -h",
			"atlantis help something else", "atlantis help plan")},
		{"TestParse_TrimCommandString", helpCases("`atlantis help`", "`  atlantis help  `", "`atlantis help`  ", "  `atlantis help")},
		{"TestParse_UnusedArguments", slices.Concat(
			answered(`unexpected argument "arg"`, "atlantis plan -d . arg", "atlantis plan arg -d .", "atlantis plan arg", "atlantis plan arg arg2",
				"atlantis plan -d . arg -w kjj arg2", "atlantis apply -d . arg", "atlantis apply arg arg2", "atlantis apply arg arg2 -- useful",
				"atlantis apply arg arg2 --", "atlantis approve_policies arg arg2 arg3 --"),
			answered("wrong number of arguments (1): import ADDRESS ID", "atlantis import arg --"),
			answered("wrong number of arguments (3): import ADDRESS ID", "atlantis import arg1 arg2 arg3 --"))},
		{"TestParse_UnknownShorthandFlag", []atlantisCase{
			{all, "atlantis unlock -d .", reply, command.Command{}, "Usage of unlock:", ""},
		}},
		{"TestParse_DidYouMeanAtlantis", didYouMean("terraform", "terraform help", "terraform --help", "terraform -h",
			"terraform plan", "terraform apply", "terraform plan -w workspace -d . -- test")},
		{"TestParse_NoMisspellWarningForCustomExecutableName", []atlantisCase{
			{command.Parser{ExecutableName: "atlantis-sec"}, "atlantis-dev unlock", ignore, command.Command{}, "", ""},
		}},
		{"TestParse_InvalidCommand", []atlantisCase{
			{someAllowed, "atlantis paln", reply, command.Command{},
				"Error: unknown command \"paln\".\nRun 'atlantis --help' for usage.\nAvailable commands(--allow-commands): version, plan, apply, unlock\n", ""},
			{someAllowed, "atlantis appely apply", reply, command.Command{},
				"Error: unknown command \"appely\".\nRun 'atlantis --help' for usage.\nAvailable commands(--allow-commands): version, plan, apply, unlock\n", ""},
		}},
		{"TestParse_SubcommandUsage", slices.Concat(
			answered("Usage of plan:", "atlantis plan -h", "atlantis plan --help"),
			answered("Usage of apply:", "atlantis apply -h", "atlantis apply --help"),
			answered("Usage of approve_policies:", "atlantis approve_policies -h", "atlantis approve_policies --help"),
			answered("Usage of import ADDRESS ID:", "atlantis import -h", "atlantis import --help"),
			answered("Usage of state rm ADDRESS...:", "atlantis state -h", "atlantis state --help"))},
		{"TestParse_InvalidFlags", slices.Concat(
			answered(`unknown flag "-e"`, "atlantis plan -e", "atlantis apply -e"),
			answered(`unknown flag "--abc"`, "atlantis plan --abc", "atlantis apply --abc", "atlantis import --abc", "atlantis state rm --abc"))},
		{"TestParse_RelativeDirPath", answered(`must not contain ".."`,
			"atlantis plan -d ..", "atlantis apply -d ..", "atlantis import -d .. address id", "atlantis state -d .. rm address",
			"atlantis plan -d ./..", "atlantis apply -d ./..", "atlantis import -d ./.. address id", "atlantis state -d ./.. rm address",
			"atlantis plan -d a/b/../../..", "atlantis apply -d a/../..", "atlantis import -d a/../.. address id",
			"atlantis state -d a/../.. rm address id")},
		{"TestParse_GlobPatternDir", []atlantisCase{
			{all, "atlantis plan -d modules/*", parsed, command.Command{Name: "plan", Dir: "modules/*"}, "", ""},
			{all, "atlantis plan -d modules/**", parsed, command.Command{Name: "plan", Dir: "modules/**"}, "", ""},
			{all, "atlantis plan -d environments/*/apps", parsed, command.Command{Name: "plan", Dir: "environments/*/apps"}, "", ""},
			{all, "atlantis plan -d 'env[0-9]/*'", parsed, command.Command{Name: "plan", Dir: "env[0-9]/*"}, "", ""},
			{all, "atlantis plan -d stacks/prod-?-*", parsed, command.Command{Name: "plan", Dir: "stacks/prod-?-*"}, "", ""},
			{all, "atlantis apply -d modules/**", parsed, command.Command{Name: "apply", Dir: "modules/**"}, "", ""},
			{all, "atlantis import -d modules/* address id", parsed, command.Command{Name: "import", Dir: "modules/*", Args: []string{"address", "id"}}, "", ""},
			{all, "atlantis state -d modules/* rm address", parsed, command.Command{Name: "state", SubName: "rm", Dir: "modules/*", Args: []string{"address"}}, "", ""},
		}},
		{"TestParse_GlobPatternDirWithRelativePath", answered(`must not contain ".."`,
			"atlantis plan -d '../*'", "atlantis plan -d 'modules/../*'", "atlantis plan -d '../**'", "atlantis apply -d '../apps/*'",
			"atlantis import -d '../*' address id", "atlantis state -d '../*' rm address")},
		{"TestParse_InvalidGlobPattern", answered("is not a valid glob pattern",
			"atlantis plan -d 'modules/[invalid'", "atlantis apply -d 'apps/[unclosed'")},
		{"TestParse_ValidCommand", parsedAs(command.Command{Name: "plan"},
			"atlantis plan\n", "atlantis plan\n\n", "atlantis plan\r\n", "atlantis plan\r\n\r\n", "\natlantis plan", "\r\natlantis plan",
			"\natlantis plan\n", "\r\natlantis plan\r\n", "atlantis plan", "Atlantis plan", "Atlantis Plan", "ATLANTIS PLAN")},
		{"TestParse_InvalidWorkspace", answered("invalid -w/--workspace",
			"atlantis plan -w ..", "atlantis apply -w ..", "atlantis import -w .. address id", "atlantis import -w .. rm address",
			"atlantis plan -w /", "atlantis apply -w /", "atlantis import -w / address id", "atlantis state -w / rm address",
			"atlantis plan -w ..abc", "atlantis apply -w abc..", "atlantis import -w abc.. address id", "atlantis state -w abc.. rm address",
			"atlantis plan -w abc..abc", "atlantis apply -w ../../../etc/passwd", "atlantis import -w ../../../etc/passwd address id",
			"atlantis state -w ../../../etc/passwd rm address")},
		{"TestParse_WorkspaceTildeInvalid", answered("invalid -w/--workspace",
			"atlantis plan -w ~", "atlantis apply -w ~", "atlantis plan -w ~user", "atlantis apply -w ~root",
			"atlantis import -w ~ address id", "atlantis state -w ~ rm address")},
		// Atlantis runs Terraform with an argument vector and takes these;
		// Atoll keeps workspace names to characters safe in any path.
		{"TestParse_WorkspaceShellMetacharactersAllowed", stricter(whyWSChars, "invalid -w/--workspace",
			"atlantis plan -w a;id", "atlantis plan -w a&&id", "atlantis apply -w a&&id", "atlantis plan -w a|id",
			"atlantis plan -w a`id`b", "atlantis plan -w a>b", "atlantis plan -w a=b", "atlantis plan -w a:b",
			"atlantis plan -w a@b", "atlantis plan -w a+b", "atlantis plan -w _foo", "atlantis plan -w .hidden")},
		{"TestParse_WorkspaceUnsafeForPathsInvalid", answered("invalid -w/--workspace",
			"atlantis plan -w a$HOME", "atlantis plan -w a$(id)b")},
		// Atoll's replies give the reason the flag is refused; -chdir and
		// -plugin-dir are refused on every server, not only by default.
		{"TestParse_BlockedExtraArgs", slices.Concat(
			answered("-chdir would run Terraform in another directory",
				"atlantis plan -- -chdir=../other", "atlantis plan -- --chdir=/tmp", "atlantis plan -- -chdir", "atlantis plan -- --chdir",
				"atlantis apply -- -chdir=../sensitive", "atlantis import address id -- -chdir=.."),
			answered("-plugin-dir would make Terraform read", "atlantis plan -- -plugin-dir=/tmp/evil", "atlantis plan -- --plugin-dir=/tmp/evil"))},
		{"TestParse_CustomBlockedExtraArgs", []atlantisCase{
			{blocksNoColor, "atlantis plan -- -no-color", reply, command.Command{}, `terraform flag "-no-color" is not allowed on this server`, ""},
			{blocksNoColor, "atlantis plan -- -chdir=other", reply, command.Command{}, "-chdir would run Terraform in another directory", whyChdir},
			{blocksNoColor, "atlantis plan -- -var=foo=bar", parsed, command.Command{Name: "plan", ExtraArgs: []string{"-var=foo=bar"}}, "", ""},
		}},
		{"TestParse_UsingProjectAtSameTimeAsWorkspaceOrDir", answered("cannot use -p/--project at same time as -d/--dir or -w/--workspace",
			"atlantis plan -w workspace -p project", "atlantis plan -d dir -p project", "atlantis plan -d dir -w workspace -p project")},
		{"TestParse_Parsing", flagParsingCases()},
		{"TestBuildPlanApplyVersionComment", builtCommentCases()},
		{"TestParse_VCSUsername", []atlantisCase{
			{command.Parser{VCSUser: "gh"}, "@gh help", parsed, command.Command{Name: "help"}, "", ""},
			{command.Parser{VCSUser: "gl"}, "@gl help", parsed, command.Command{Name: "help"}, "", ""},
			{command.Parser{VCSUser: "bb"}, "@bb help", parsed, command.Command{Name: "help"}, "", ""},
			{command.Parser{VCSUser: "bb"}, "@bb help", parsed, command.Command{Name: "help"}, "", ""},
			{command.Parser{VCSUser: "ad"}, "@ad help", parsed, command.Command{Name: "help"}, "", ""},
		}},
		{"", atollCases()},
	}
}

var blocksNoColor = command.Parser{BlockedExtraArgs: []string{"-no-color", "--no-color"}}

// helpCases: each comment asks for help, whether every command or none is
// allowed; the words after help are kept so the reply can say they are
// ignored.
func helpCases(comments ...string) []atlantisCase {
	var out []atlantisCase
	for _, p := range []command.Parser{all, none} {
		for _, c := range comments {
			want := command.Command{Name: "help"}
			if words := strings.Fields(strings.Trim(strings.TrimSpace(c), "`")); len(words) > 2 {
				want.Args = words[2:]
			}
			out = append(out, atlantisCase{p, c, parsed, want, "", ""})
		}
	}
	return out
}

func didYouMean(comments ...string) []atlantisCase {
	var out []atlantisCase
	for _, c := range comments {
		out = append(out, atlantisCase{all, c, reply, command.Command{}, "Did you mean to use `atlantis` instead of `terraform`?", ""})
	}
	return out
}

// answered: each comment is answered with a reply containing phrase.
func answered(phrase string, comments ...string) []atlantisCase {
	return stricter("", phrase, comments...)
}

// stricter: each comment Atlantis accepts is refused, for why.
func stricter(why, phrase string, comments ...string) []atlantisCase {
	var out []atlantisCase
	for _, c := range comments {
		out = append(out, atlantisCase{all, c, reply, command.Command{}, phrase, why})
	}
	return out
}

func parsedAs(want command.Command, comments ...string) []atlantisCase {
	var out []atlantisCase
	for _, c := range comments {
		out = append(out, atlantisCase{all, c, parsed, want, "", ""})
	}
	return out
}

// flagParsingCases: the same flags after plan, apply, import and state rm
// select the same; Atlantis hands import's and state rm's addresses to
// Terraform after the extra args, Atoll keeps them apart in Args.
func flagParsingCases() []atlantisCase {
	rows := []struct {
		flags           string
		dir, ws, proj   string
		verbose         bool
		extra           []string
		refusedAs       string // Atoll's reply, when Atoll refuses the extra args
		refusedAsImport string
	}{
		{flags: ""},
		{flags: "-w workspace", ws: "workspace"},
		{flags: "-d dir", dir: "dir"},
		{flags: "-p project", proj: "project"},
		{flags: "--verbose", verbose: true},
		{flags: "--workspace workspace", ws: "workspace"},
		{flags: "--dir dir", dir: "dir"},
		{flags: "--project project", proj: "project"},
		{flags: "-w workspace -d dir --verbose", ws: "workspace", dir: "dir", verbose: true},
		{flags: "-d dir -w workspace --verbose", ws: "workspace", dir: "dir", verbose: true},
		{flags: "--verbose -w workspace -d dir", ws: "workspace", dir: "dir", verbose: true},
		{flags: "-p project --verbose", proj: "project", verbose: true},
		{flags: "--verbose -p project", proj: "project", verbose: true},
		// After "--" our flags are Terraform's words.
		{flags: "-w workspace -d dir -- --verbose", refusedAs: `"-verbose" is not a flag of terraform`},
		{flags: "-w workspace -- -d dir --verbose", refusedAs: `"-d" is not a flag of terraform`},
		{flags: "--"},
		{flags: "-w workspace -d dir --verbose -- arg one -two --three &&", refusedAs: `"arg" is not a flag: Terraform would read it as a path`},
		{flags: "\t-w\tworkspace\t-d\tdir\t--verbose\t--\targ\tone\t-two\t--three\t&&", refusedAs: `"arg" is not a flag`},
		{flags: "   -w   workspace   -d   dir   --verbose   --   arg   one   -two   --three   &&", refusedAs: `"arg" is not a flag`},
		// -d is cleaned to a path relative to the root.
		{flags: "-d /", dir: "."},
		{flags: "-d /adir", dir: "adir"},
		{flags: "-d .", dir: "."},
		{flags: "-d ./", dir: "."},
		{flags: "-d ./adir", dir: "adir"},
		{flags: `-d "dir with space"`, dir: "dir with space"},
	}
	commands := []struct {
		text string
		cmd  command.Command
	}{
		{"plan", command.Command{Name: "plan"}},
		{"apply", command.Command{Name: "apply"}},
		{`import 'some["addr"]' id`, command.Command{Name: "import", Args: []string{`some["addr"]`, "id"}}},
		{`state rm 'some["addr"]'`, command.Command{Name: "state", SubName: "rm", Args: []string{`some["addr"]`}}},
	}
	var out []atlantisCase
	for _, r := range rows {
		for _, c := range commands {
			comment := "atlantis " + c.text + " " + r.flags
			if r.refusedAs != "" {
				out = append(out, atlantisCase{all, comment, reply, command.Command{}, r.refusedAs, whyTFWords})
				continue
			}
			want := c.cmd
			want.Dir, want.Workspace, want.Project, want.Verbose, want.ExtraArgs = r.dir, r.ws, r.proj, r.verbose, r.extra
			out = append(out, atlantisCase{all, comment, parsed, want, "", ""})
		}
	}
	return out
}

// builtCommentCases: the plan and apply comments Atlantis writes for a
// project (in its pull request comments) are read back as that project.
// Atlantis leaves out the default workspace, or "-d ." when a workspace is
// named; Atoll's Format writes both, and reads Atlantis's texts the same.
func builtCommentCases() []atlantisCase {
	rows := []struct {
		flags         string // how Atlantis's builder names the project
		dir, ws, proj string
		planArgs      string // words it appends to the plan comment after "--"
		merge         string // flags it appends to the apply comment
		disabled      bool
		method        string
	}{
		{flags: "-d .", dir: "."},
		{flags: "-d dir", dir: "dir"},
		{flags: "-w workspace", ws: "workspace"},
		{flags: "-d dir -w workspace", dir: "dir", ws: "workspace"},
		{flags: "-p project", proj: "project"},
		{flags: "-p project", proj: "project"}, // dir and workspace are left out for a project
		{flags: "-d .", dir: ".", planArgs: "arg1 arg2"},
		{flags: "-d dir -w workspace", dir: "dir", ws: "workspace", planArgs: "arg1 arg2 arg3"},
		{flags: `-d "dir with spaces"`, dir: "dir with spaces"},
		{flags: "-d dir -w workspace", dir: "dir", ws: "workspace", planArgs: "arg1 arg2 arg3", merge: " --auto-merge-disabled", disabled: true},
		{flags: "-d dir -w workspace", dir: "dir", ws: "workspace", planArgs: "arg1 arg2 arg3", merge: " --auto-merge-method squash", method: "squash"},
	}
	var out []atlantisCase
	for _, r := range rows {
		if r.planArgs != "" {
			out = append(out, atlantisCase{all, "atlantis plan " + r.flags + " -- " + r.planArgs, reply, command.Command{}, `"arg1" is not a flag`, whyTFWords})
		} else {
			out = append(out, atlantisCase{all, "atlantis plan " + r.flags, parsed,
				command.Command{Name: "plan", Dir: r.dir, Workspace: r.ws, Project: r.proj}, "", ""})
		}
		out = append(out, atlantisCase{all, "atlantis apply " + r.flags + r.merge, parsed,
			command.Command{Name: "apply", Dir: r.dir, Workspace: r.ws, Project: r.proj, AutoMergeDisabled: r.disabled, AutoMergeMethod: r.method}, "", ""})
	}
	return out
}

// atollCases are not in Atlantis's tests: habits its parser allows that
// Atoll keeps, and the places where Atoll is stricter beyond those tests.
func atollCases() []atlantisCase {
	return []atlantisCase{
		// cancel is in Atlantis's default --allow-commands, and in Atoll's.
		{defaults, "atlantis cancel", parsed, command.Command{Name: "cancel"}, "", ""},
		{defaults, "atlantis import a b", reply, command.Command{}, `unknown command "import"`, ""},
		{all, "atlantis cancel now", reply, command.Command{}, "Usage of cancel:", ""},
		{all, "atlantis help plan", parsed, command.Command{Name: "help", Args: []string{"plan"}}, "", ""},
		{all, "atlantsi plan", reply, command.Command{}, "Did you mean to use `atlantis` instead of `atlantsi`?", ""},

		// pflag's spellings: a shorthand's value attached, after "=" or in
		// the next word; a long flag's after "=" or in the next word; and
		// of a flag given twice, the last.
		{all, "atlantis plan -dstaging", parsed, command.Command{Name: "plan", Dir: "staging"}, "", ""},
		{all, "atlantis plan -wstaging", parsed, command.Command{Name: "plan", Workspace: "staging"}, "", ""},
		{all, "atlantis apply -pproj", parsed, command.Command{Name: "apply", Project: "proj"}, "", ""},
		{all, "atlantis plan -d=x -w=y", parsed, command.Command{Name: "plan", Dir: "x", Workspace: "y"}, "", ""},
		{all, "atlantis plan --dir=x --workspace=y", parsed, command.Command{Name: "plan", Dir: "x", Workspace: "y"}, "", ""},
		{all, "atlantis apply --project=vpc --verbose=true", parsed, command.Command{Name: "apply", Project: "vpc", Verbose: true}, "", ""},
		{all, "atlantis plan -d a -d b", parsed, command.Command{Name: "plan", Dir: "b"}, "", ""},
		{all, "atlantis plan -w a --workspace b", parsed, command.Command{Name: "plan", Workspace: "b"}, "", ""},
		{all, "atlantis plan -p a -pb", parsed, command.Command{Name: "plan", Project: "b"}, "", ""},
		{all, "atlantis import -dinfra address id", parsed, command.Command{Name: "import", Dir: "infra", Args: []string{"address", "id"}}, "", ""},
		{all, "atlantis import -d 'modules/*' address id", parsed, command.Command{Name: "import", Dir: "modules/*", Args: []string{"address", "id"}}, "", ""},
		{all, "atlantis state rm address -d 'envs/**'", parsed, command.Command{Name: "state", SubName: "rm", Dir: "envs/**", Args: []string{"address"}}, "", ""},

		// --blocked-extra-args blocks the flag, not every flag starting
		// with its letters.
		{command.Parser{BlockedExtraArgs: []string{"-var"}}, "atlantis plan -- -var-file=a.tfvars", parsed, command.Command{Name: "plan", ExtraArgs: []string{"-var-file=a.tfvars"}}, "", ""},
		{command.Parser{BlockedExtraArgs: []string{"-var"}}, "atlantis plan -- -var=a=b", reply, command.Command{}, `terraform flag "-var" is not allowed on this server`, ""},

		// Stricter than Atlantis, beyond its tests.
		{all, "atlantis plan -d /..", reply, command.Command{}, `must not contain ".."`, whyDotDot},
		{all, "atlantis plan -d a/../b", reply, command.Command{}, `must not contain ".."`, whyDotDot},
		{all, "atlantis plan -dir x", reply, command.Command{}, `unknown flag "-dir" (did you mean -d/--dir?)`,
			"a long flag name behind one dash is refused with a hint: pflag reads `-dir x` as `-d ir x`, never what was meant"},
		{all, "atlantis plan -d -w x", reply, command.Command{}, "flag -d/--dir needs a value",
			"a flag whose next word looks like a flag is missing its value: pflag would take `-w` as the directory"},
		{all, "atlantis plan -- -chdirx", reply, command.Command{}, `"-chdirx" is not a flag of terraform plan that Atoll passes on`, whyTFWords},
		{all, "atlantis state -d dir rm a.b c.d -- -lock=false", reply, command.Command{}, "Atoll sets -lock itself", whyLock},
		{all, "atlantis state -d dir rm a.b c.d -- -lock-timeout=5m", parsed,
			command.Command{Name: "state", SubName: "rm", Dir: "dir", Args: []string{"a.b", "c.d"}, ExtraArgs: []string{"-lock-timeout=5m"}}, "", ""},
	}
}

// TestAtlantisCommentParserCases walks Atlantis's comment parser tests case
// by case: what it ignores, what it parses to which command, and what it
// answers with a reply. Where Atoll is deliberately stricter the case says
// why in strict, and docs/configuration.md lists it with that reason.
func TestAtlantisCommentParserCases(t *testing.T) {
	var total, matching, stricter int
	for _, g := range atlantisGroups() {
		for _, tt := range g.cases {
			if tt.strict != "" && tt.outcome != reply {
				t.Errorf("%q: a stricter case must be refused with a reply", tt.comment)
			}
			t.Run(tt.comment, func(t *testing.T) { checkCase(t, tt) })
			if g.from == "" {
				continue
			}
			total++
			if tt.strict == "" {
				matching++
			} else {
				stricter++
			}
		}
	}
	t.Logf("Atlantis's comment parser cases: %d; Atoll matches %d; stricter, as docs/configuration.md lists: %d", total, matching, stricter)
}

func checkCase(t *testing.T, tt atlantisCase) {
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
}

// TestAtlantisHelpListsAllowedCommands: as Atlantis's help, Atoll's lists
// the commands --allow-commands allows, and help itself always.
func TestAtlantisHelpListsAllowedCommands(t *testing.T) {
	tests := []struct {
		allow []string
		want  []string
	}{
		{nil, []string{"plan", "apply", "cancel", "unlock", "approve_policies", "version", "import", "state", "help"}},
		{[]string{}, []string{"help"}},
		{[]string{"apply", "unlock"}, []string{"apply", "unlock", "help"}},
	}
	line := regexp.MustCompile(`(?m)^  ([a-z_]+)`) // a command's line; its description is indented further
	for _, tt := range tests {
		usage := command.Parser{AllowCommands: tt.allow}.Usage()
		_, commands, _ := strings.Cut(usage, "Commands:\n")
		commands, _, _ = strings.Cut(commands, "\n\n")
		var got []string
		for _, m := range line.FindAllStringSubmatch(commands, -1) {
			got = append(got, m[1])
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(tt.want))
		if !slices.Equal(got, want) {
			t.Errorf("allow %v: help lists %q, want %q\n%s", tt.allow, got, want, usage)
		}
	}
}

// TestStricterCasesDocumented: docs/configuration.md lists every comment
// the table refuses where Atlantis accepts it, with the same reason, and
// nothing else, so that the list and the parser cannot drift apart.
func TestStricterCasesDocumented(t *testing.T) {
	want := map[string]string{}
	for _, g := range atlantisGroups() {
		for _, tt := range g.cases {
			if tt.strict != "" {
				want[strings.Join(strings.Fields(tt.comment), " ")] = tt.strict
			}
		}
	}
	got := documentedStricter(t)
	for comment, why := range want {
		switch doc, ok := got[comment]; {
		case !ok:
			t.Errorf("docs/configuration.md does not list `%s` (%s)", comment, why)
		case doc != why:
			t.Errorf("docs/configuration.md gives `%s` the reason %q, the table %q", comment, doc, why)
		}
	}
	for comment := range got {
		if _, ok := want[comment]; !ok {
			t.Errorf("docs/configuration.md lists `%s`, which no stricter case of the table has", comment)
		}
	}
}

// documentedStricter reads the table under "Stricter than Atlantis, case
// by case" in docs/configuration.md: each row's first cell holds comments
// as code spans, its second the reason.
func documentedStricter(t *testing.T) map[string]string {
	data, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "### Stricter than Atlantis, case by case\n")
	if !ok {
		t.Fatal(`docs/configuration.md has no "Stricter than Atlantis, case by case" section`)
	}
	section, _, _ = strings.Cut(section, "\n#")
	cell := regexp.MustCompile(`(?:\\\||[^|])+`)
	span := regexp.MustCompile("``? (.+?) ``?|`([^`]+)`")
	out := map[string]string{}
	for _, l := range strings.Split(section, "\n") {
		if !strings.HasPrefix(l, "| `") {
			continue
		}
		cells := cell.FindAllString(l, -1)
		if len(cells) != 2 {
			t.Fatalf("row %q: want two cells", l)
		}
		why := strings.ReplaceAll(strings.TrimSpace(cells[1]), `\|`, "|")
		for _, m := range span.FindAllStringSubmatch(cells[0], -1) {
			comment := strings.ReplaceAll(m[1]+m[2], `\|`, "|")
			out[strings.Join(strings.Fields(comment), " ")] = why
		}
	}
	return out
}
