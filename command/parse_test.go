package command_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

var (
	defaultParser = command.Parser{}
	botParser     = command.Parser{VCSUser: "atoll-bot"}
	customParser  = command.Parser{ExecutableName: "terrabot", VCSUser: "@Infra-Bot"}
)

func TestParseValid(t *testing.T) {
	long := strings.Repeat("w", 90)
	tests := []struct {
		name    string
		parser  command.Parser
		comment string
		want    command.Command
	}{
		// Commands and prefixes.
		{"plan", defaultParser, "atlantis plan", command.Command{Name: "plan"}},
		{"apply", defaultParser, "atlantis apply", command.Command{Name: "apply"}},
		{"unlock", defaultParser, "atlantis unlock", command.Command{Name: "unlock"}},
		{"version", defaultParser, "atlantis version", command.Command{Name: "version"}},
		{"help", defaultParser, "atlantis help", command.Command{Name: "help"}},
		{"-h is help", defaultParser, "atlantis -h", command.Command{Name: "help"}},
		{"--help is help", defaultParser, "atlantis --help", command.Command{Name: "help"}},
		{"prefix alone is help", defaultParser, "atlantis", command.Command{Name: "help"}},
		{"atoll alone is help", defaultParser, "  atoll  ", command.Command{Name: "help"}},
		{"mention alone is help", botParser, "@atoll-bot", command.Command{Name: "help"}},
		{"help ignores arguments", defaultParser, "atlantis help plan", command.Command{Name: "help", Args: []string{"plan"}}},
		{"--help ignores arguments", defaultParser, "atlantis --help plan", command.Command{Name: "help", Args: []string{"plan"}}},
		{"help --help", defaultParser, "atlantis help --help", command.Command{Name: "help", Args: []string{"--help"}}},
		{"capitalised command", defaultParser, "atlantis Plan", command.Command{Name: "plan"}},
		{"upper-case command", defaultParser, "ATLANTIS APPLY", command.Command{Name: "apply"}},
		{"run prefix", defaultParser, "run plan", command.Command{Name: "plan"}},
		{"in backticks", defaultParser, "`atlantis plan`", command.Command{Name: "plan"}},
		{"atoll prefix", defaultParser, "atoll plan", command.Command{Name: "plan"}},
		{"prefix upper case", defaultParser, "ATLANTIS plan", command.Command{Name: "plan"}},
		{"prefix title case", defaultParser, "Atlantis apply", command.Command{Name: "apply"}},
		{"atoll mixed case", defaultParser, "AtOlL unlock", command.Command{Name: "unlock"}},
		{"mention", botParser, "@atoll-bot plan", command.Command{Name: "plan"}},
		{"mention case", botParser, "@Atoll-Bot apply -p x", command.Command{Name: "apply", Project: "x"}},
		{"mention configured with @", customParser, "@infra-bot plan", command.Command{Name: "plan"}},
		{"custom executable", customParser, "terrabot plan", command.Command{Name: "plan"}},
		{"atoll with custom executable", customParser, "atoll version", command.Command{Name: "version"}},
		{"executable with mention configured", botParser, "atlantis plan", command.Command{Name: "plan"}},

		// Whitespace.
		{"surrounding whitespace and blank lines", defaultParser, "  \n atlantis plan  \r\n\n", command.Command{Name: "plan"}},
		{"tabs", defaultParser, "atlantis\tplan\t-d\tx", command.Command{Name: "plan", Dir: "x"}},
		{"no-break space", defaultParser, "atlantis\u00a0plan\u00a0-d\u00a0x", command.Command{Name: "plan", Dir: "x"}},
		{"many spaces", defaultParser, "atlantis    apply     -w    staging", command.Command{Name: "apply", Workspace: "staging"}},

		// Flag spellings.
		{"-d x", defaultParser, "atlantis plan -d foo", command.Command{Name: "plan", Dir: "foo"}},
		{"-d=x", defaultParser, "atlantis plan -d=foo", command.Command{Name: "plan", Dir: "foo"}},
		{"--dir x", defaultParser, "atlantis plan --dir foo", command.Command{Name: "plan", Dir: "foo"}},
		{"--dir=x", defaultParser, "atlantis plan --dir=foo", command.Command{Name: "plan", Dir: "foo"}},
		{"-w x", defaultParser, "atlantis apply -w staging", command.Command{Name: "apply", Workspace: "staging"}},
		{"-w=x", defaultParser, "atlantis apply -w=staging", command.Command{Name: "apply", Workspace: "staging"}},
		{"--workspace x", defaultParser, "atlantis apply --workspace staging", command.Command{Name: "apply", Workspace: "staging"}},
		{"--workspace=x", defaultParser, "atlantis apply --workspace=staging", command.Command{Name: "apply", Workspace: "staging"}},
		{"-p x", defaultParser, "atlantis plan -p vpc", command.Command{Name: "plan", Project: "vpc"}},
		{"-p=x", defaultParser, "atlantis plan -p=vpc", command.Command{Name: "plan", Project: "vpc"}},
		{"--project x", defaultParser, "atlantis plan --project vpc", command.Command{Name: "plan", Project: "vpc"}},
		{"--project=x", defaultParser, "atlantis plan --project=vpc", command.Command{Name: "plan", Project: "vpc"}},
		{"--verbose", defaultParser, "atlantis plan --verbose", command.Command{Name: "plan", Verbose: true}},
		{"--verbose=true", defaultParser, "atlantis apply --verbose=true", command.Command{Name: "apply", Verbose: true}},
		{"--verbose=false", defaultParser, "atlantis apply --verbose=false", command.Command{Name: "apply"}},
		// Attached short values and repeats, as pflag reads them.
		{"-dx", defaultParser, "atlantis plan -dstaging", command.Command{Name: "plan", Dir: "staging"}},
		{"-wx", defaultParser, "atlantis apply -wstaging", command.Command{Name: "apply", Workspace: "staging"}},
		{"-px", defaultParser, "atlantis plan -pvpc", command.Command{Name: "plan", Project: "vpc"}},
		{"-dx glob", defaultParser, "atlantis plan -d'envs/*'", command.Command{Name: "plan", Dir: "envs/*"}},
		{"-d=x with dash value", defaultParser, "atlantis plan -p=-dash", command.Command{Name: "plan", Project: "-dash"}},
		{"-dx import", defaultParser, "atlantis import -dinfra a.b id", command.Command{Name: "import", Dir: "infra", Args: []string{"a.b", "id"}}},
		{"repeated dir last wins", defaultParser, "atlantis plan -d a --dir b", command.Command{Name: "plan", Dir: "b"}},
		{"repeated workspace last wins", defaultParser, "atlantis apply -w a -wb", command.Command{Name: "apply", Workspace: "b"}},
		{"repeated project last wins", defaultParser, "atlantis plan -p a --project=b", command.Command{Name: "plan", Project: "b"}},
		{"repeated verbose", defaultParser, "atlantis plan --verbose --verbose=false", command.Command{Name: "plan"}},
		{"repeated merge method", defaultParser, "atlantis apply --auto-merge-method merge --auto-merge-method squash", command.Command{Name: "apply", AutoMergeMethod: "squash"}},
		{"all flags", defaultParser, "atlantis plan -d . -w staging --verbose", command.Command{Name: "plan", Dir: ".", Workspace: "staging", Verbose: true}},
		{"flags any order", defaultParser, "atlantis apply --verbose -w default --dir=infra", command.Command{Name: "apply", Dir: "infra", Workspace: "default", Verbose: true}},
		{"project and verbose", defaultParser, "atlantis apply -p prod/vpc --verbose", command.Command{Name: "apply", Project: "prod/vpc", Verbose: true}},

		// Directories.
		{"dir slash is root", defaultParser, "atlantis plan -d /", command.Command{Name: "plan", Dir: "."}},
		{"dir ./ is root", defaultParser, "atlantis plan -d ./", command.Command{Name: "plan", Dir: "."}},
		{"dir . is root", defaultParser, "atlantis plan -d .", command.Command{Name: "plan", Dir: "."}},
		{"dir leading slash", defaultParser, "atlantis plan -d /modules/x", command.Command{Name: "plan", Dir: "modules/x"}},
		{"dir leading ./", defaultParser, "atlantis plan -d ./a/b/", command.Command{Name: "plan", Dir: "a/b"}},
		{"dir double slashes", defaultParser, "atlantis plan -d a//b", command.Command{Name: "plan", Dir: "a/b"}},
		{"dir inner dot", defaultParser, "atlantis plan -d a/./b", command.Command{Name: "plan", Dir: "a/b"}},
		{"dir quoted with space", defaultParser, "atlantis plan -d 'my dir/x'", command.Command{Name: "plan", Dir: "my dir/x"}},
		{"dir of three dots", defaultParser, "atlantis plan -d .../x", command.Command{Name: "plan", Dir: ".../x"}},
		{"dir with colon", defaultParser, "atlantis plan -d a:b", command.Command{Name: "plan", Dir: "a:b"}},
		{"dir dotted names", defaultParser, "atlantis plan -d ..a/b..", command.Command{Name: "plan", Dir: "..a/b.."}},

		// Workspaces and projects.
		{"workspace chars", defaultParser, "atlantis plan -w a.b-c_1", command.Command{Name: "plan", Workspace: "a.b-c_1"}},
		{"workspace digit first", defaultParser, "atlantis plan -w 1st", command.Command{Name: "plan", Workspace: "1st"}},
		{"workspace 90 chars", defaultParser, "atlantis plan -w " + long, command.Command{Name: "plan", Workspace: long}},
		{"project unicode", defaultParser, "atlantis plan -p réseau", command.Command{Name: "plan", Project: "réseau"}},

		// Extra args.
		{"extra arg", defaultParser, "atlantis plan -- -target=x", command.Command{Name: "plan", ExtraArgs: []string{"-target=x"}}},
		{"extra args with flags", defaultParser, "atlantis plan -d . -- -target=aws_instance.web -refresh=false",
			command.Command{Name: "plan", Dir: ".", ExtraArgs: []string{"-target=aws_instance.web", "-refresh=false"}}},
		{"extra args quoting", defaultParser, `atlantis plan -- -var 'a=b c' -var "x=\"y\""`,
			command.Command{Name: "plan", ExtraArgs: []string{"-var", "a=b c", "-var", `x="y"`}}},
		{"extra args metacharacters literal", defaultParser, "atlantis apply -- -var x=$(id);echo`id`|cat&&$HOME>/tmp/f",
			command.Command{Name: "apply", ExtraArgs: []string{"-var", "x=$(id);echo`id`|cat&&$HOME>/tmp/f"}}},
		{"extra args quoted metacharacters", defaultParser, `atlantis plan -- -var 'cmd=$(id); rm -rf /' "-var=t=` + "`x`" + `"`,
			command.Command{Name: "plan", ExtraArgs: []string{"-var", "cmd=$(id); rm -rf /", "-var=t=`x`"}}},
		{"extra args hash literal", defaultParser, "atlantis plan -- -target=a -var x=#b",
			command.Command{Name: "plan", ExtraArgs: []string{"-target=a", "-var", "x=#b"}}},
		{"empty extra args are nil", defaultParser, "atlantis plan --", command.Command{Name: "plan"}},
		{"extra args similar to blocked", defaultParser, "atlantis plan -- -var chdir=x -var=-chdir",
			command.Command{Name: "plan", ExtraArgs: []string{"-var", "chdir=x", "-var=-chdir"}}},
		{"import glob dir", defaultParser, "atlantis import -d 'modules/*' a.b id", command.Command{Name: "import", Dir: "modules/*", Args: []string{"a.b", "id"}}},
		{"state glob dir", defaultParser, "atlantis state rm a.b -d ./envs/**", command.Command{Name: "state", SubName: "rm", Dir: "envs/**", Args: []string{"a.b"}}},
		{"glob dir cleaned", defaultParser, "atlantis plan -d './a//b/./*/'", command.Command{Name: "plan", Dir: "a/b/*"}},
		{"version glob dir", defaultParser, "atlantis version -d 'envs/*'", command.Command{Name: "version", Dir: "envs/*"}},
		{"apply extra args", defaultParser, "atlantis apply -p vpc -- -parallelism=1",
			command.Command{Name: "apply", Project: "vpc", ExtraArgs: []string{"-parallelism=1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parser.Parse(tt.comment)
			if err != nil {
				t.Fatalf("Parse(%q) error: %v\n%s", tt.comment, err, atoll.ErrorMessage(err))
			}
			if got == nil {
				t.Fatalf("Parse(%q) = nil, want %+v", tt.comment, tt.want)
			}
			if !reflect.DeepEqual(*got, tt.want) {
				t.Errorf("Parse(%q)\n got %#v\nwant %#v", tt.comment, *got, tt.want)
			}
		})
	}
}

func TestParseIgnored(t *testing.T) {
	tests := []struct {
		name    string
		parser  command.Parser
		comment string
	}{
		{"empty", defaultParser, ""},
		{"blank", defaultParser, " \n\t\r\n "},
		{"prose", defaultParser, "looks good"},
		{"prefix glued to command", defaultParser, "atlantisplan"},
		{"prefix later in sentence", defaultParser, "I ran atlantis plan"},
		{"prefix with colon", defaultParser, "atlantis: plan"},
		{"quoted reply", defaultParser, "> atlantis apply"},
		{"multi-line command first", defaultParser, "atlantis apply\nactually, wait"},
		{"multi-line CRLF", defaultParser, "atlantis apply\r\n\r\nplease"},
		{"multi-line command second", defaultParser, "lgtm\natlantis apply"},
		{"multi-line bad command", defaultParser, "atlantis nope\nmore text"},
		{"other user mentioned", botParser, "@someone-else plan"},
		{"mention without user configured", defaultParser, "@ plan"},
		{"mention when no user configured", defaultParser, "@atoll-bot plan"},
		{"default name with custom executable", customParser, "atlantis plan"},
		{"quoted prefix", defaultParser, "'atlantis' plan"},
		{"escaped prefix", defaultParser, `atlantis\ plan`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.parser.Parse(tt.comment)
			if got != nil || err != nil {
				t.Errorf("Parse(%q) = %+v, %v; want nil, nil", tt.comment, got, err)
			}
		})
	}
}

func TestParseInvalid(t *testing.T) {
	general := "Commands:"
	avail := "Available commands(--allow-commands): version, plan, apply, cancel, unlock, approve_policies, import, state"
	planUsage, applyUsage := "Usage of plan:", "Usage of apply:"
	tests := []struct {
		name    string
		parser  command.Parser
		comment string
		phrase  string // the problem, as the reply states it
		usage   string // marks which usage text follows
	}{
		// Prefix and command.
		{"unknown command", defaultParser, "atlantis foo", `Error: unknown command "foo".`, avail},
		{"unknown command after mention", botParser, "@atoll-bot deploy -d x", `unknown command "deploy"`, avail},
		{"custom executable unknown command", customParser, "terrabot foo", `unknown command "foo"`, "Run 'terrabot --help' for usage."},

		// Flags.
		{"unknown short flag", defaultParser, "atlantis plan -x", `Error: unknown flag "-x".`, planUsage},
		{"unknown long flag with value", defaultParser, "atlantis apply --foo=bar", `unknown flag "--foo"`, applyUsage},
		{"single-dash long flag", defaultParser, "atlantis plan -dir foo", `unknown flag "-dir" (did you mean -d/--dir?)`, planUsage},
		{"single-dash long flag with =", defaultParser, "atlantis plan -workspace=prod", `unknown flag "-workspace" (did you mean -w/--workspace?)`, planUsage},
		{"single-dash long project", defaultParser, "atlantis apply -project x", `unknown flag "-project" (did you mean -p/--project?)`, applyUsage},
		{"unknown shorthand with value", defaultParser, "atlantis plan -xfoo", `unknown flag "-xfoo"`, planUsage},
		{"shorthand on unlock", defaultParser, "atlantis unlock -dfoo", `unlock takes no flags or arguments, got "-dfoo"`, "Usage of unlock:"},
		{"attached value empty", defaultParser, "atlantis plan -d=", "flag -d/--dir needs a value", planUsage},
		{"attached workspace checked", defaultParser, "atlantis plan -w..", `invalid -w/--workspace ".."`, planUsage},
		{"attached dir checked", defaultParser, "atlantis plan -d../x", `must not contain ".."`, planUsage},
		{"last dir checked", defaultParser, "atlantis plan -d a -d ..", `must not contain ".."`, planUsage},
		{"last project with dir", defaultParser, "atlantis plan -p a -d x -p b", "cannot use -p/--project at same time", planUsage},
		{"double-dash short flag", defaultParser, "atlantis plan --w foo", `unknown flag "--w" (did you mean -w/--workspace?)`, planUsage},
		{"single-dash verbose", defaultParser, "atlantis plan -verbose", "did you mean --verbose?", planUsage},
		{"flag case", defaultParser, "atlantis plan -D x", `unknown flag "-D"`, planUsage},
		{"dir without value", defaultParser, "atlantis plan -d", "flag -d/--dir needs a value", planUsage},
		{"dir empty after =", defaultParser, "atlantis plan --dir=", "flag -d/--dir needs a value", planUsage},
		{"dir empty quoted", defaultParser, "atlantis plan -d ''", "flag -d/--dir needs a value", planUsage},
		{"dir followed by flag", defaultParser, "atlantis plan -d -w staging", "flag -d/--dir needs a value", planUsage},
		{"dir followed by dash dash", defaultParser, "atlantis plan -d -- -target=x", "flag -d/--dir needs a value", planUsage},
		{"workspace without value", defaultParser, "atlantis apply -w", "flag -w/--workspace needs a value", applyUsage},
		{"project without value", defaultParser, "atlantis apply --project", "flag -p/--project needs a value", applyUsage},
		{"positional", defaultParser, "atlantis plan foo", `unexpected argument "foo"; terraform arguments go after "--"`, planUsage},
		{"positional after flag", defaultParser, "atlantis plan -d a b", `unexpected argument "b"`, planUsage},
		{"lone dash", defaultParser, "atlantis plan -", `unexpected argument "-"`, planUsage},
		{"verbose bad value", defaultParser, "atlantis apply --verbose=maybe", `flag --verbose takes no value, got "maybe"`, applyUsage},

		// Directories.
		{"dir parent", defaultParser, "atlantis plan -d ../x", `must not contain ".."`, planUsage},
		{"dir escapes after cleaning", defaultParser, "atlantis plan -d a/../../b", `must not contain ".."`, planUsage},
		{"dir resolves inside", defaultParser, "atlantis plan -d a/../b", `must not contain ".."`, planUsage},
		{"dir trailing parent", defaultParser, "atlantis plan -d a/..", `must not contain ".."`, planUsage},
		{"dir is parent", defaultParser, "atlantis apply --dir=..", `must not contain ".."`, applyUsage},
		{"dir rooted parent", defaultParser, "atlantis plan -d /../etc", `must not contain ".."`, planUsage},
		{"dir backslash", defaultParser, `atlantis plan -d 'a\b'`, `must use "/" as separator`, planUsage},
		{"dir windows parent", defaultParser, `atlantis plan -d '..\x'`, `must use "/" as separator`, planUsage},
		{"dir windows absolute", defaultParser, "atlantis plan -d C:/Windows", "not a Windows path", planUsage},
		{"dir windows drive", defaultParser, "atlantis plan -d c:", "not a Windows path", planUsage},
		{"dir NUL", defaultParser, "atlantis plan -d a\x00b", "must not contain control characters", planUsage},
		{"dir control char", defaultParser, "atlantis plan -d 'a\x1bb'", "must not contain control characters", planUsage},
		{"dir invalid UTF-8", defaultParser, "atlantis plan -d a\xffb", "must be valid UTF-8", planUsage},

		// Workspaces.
		{"workspace parent path", defaultParser, "atlantis plan -w ../x", `invalid -w/--workspace "../x"`, planUsage},
		{"workspace double dot", defaultParser, "atlantis plan -w a..b", `must not contain ".."`, planUsage},
		{"workspace slash", defaultParser, "atlantis plan -w a/b", "must start with a letter or digit", planUsage},
		{"workspace space", defaultParser, "atlantis plan -w 'a b'", "must start with a letter or digit", planUsage},
		{"workspace underscore first", defaultParser, "atlantis plan -w _x", "must start with a letter or digit", planUsage},
		{"workspace dot", defaultParser, "atlantis plan -w .", "must start with a letter or digit", planUsage},
		{"workspace dash first", defaultParser, "atlantis plan -w=-x", "must start with a letter or digit", planUsage},
		{"workspace dollar", defaultParser, "atlantis apply -w 'a$b'", "must start with a letter or digit", applyUsage},
		{"workspace unicode", defaultParser, "atlantis apply -w prodé", "must start with a letter or digit", applyUsage},
		{"workspace too long", defaultParser, "atlantis plan -w " + strings.Repeat("w", 91), "at most 90 characters", planUsage},

		// Projects.
		{"project space", defaultParser, "atlantis plan -p 'a b'", "must not contain spaces", planUsage},
		{"project tab", defaultParser, "atlantis plan -p 'a\tb'", "must not contain control characters", planUsage},
		{"project NUL", defaultParser, "atlantis plan -p a\x00", "must not contain control characters", planUsage},
		{"project with dir", defaultParser, "atlantis plan -p x -d y", "cannot use -p/--project at same time as -d/--dir or -w/--workspace", planUsage},
		{"project with workspace", defaultParser, "atlantis apply -p x -w y", "cannot use -p/--project at same time as -d/--dir or -w/--workspace", applyUsage},
		{"dir with project", defaultParser, "atlantis apply --dir . --project x", "cannot use -p/--project at same time", applyUsage},

		// Refused terraform flags (the whole table is in tfargs_test.go).
		{"chdir =", defaultParser, "atlantis plan -- -chdir=/tmp", `-chdir would run Terraform in another directory`, planUsage},
		{"chdir separate", defaultParser, "atlantis plan -- -chdir /tmp", `-chdir would run Terraform in another directory`, planUsage},
		{"chdir double dash", defaultParser, "atlantis plan -- --chdir=/tmp", `-chdir would run Terraform in another directory`, planUsage},
		{"chdir double dash separate", defaultParser, "atlantis apply -- --chdir /tmp", `-chdir would run Terraform in another directory`, applyUsage},
		{"chdir glued", defaultParser, "atlantis plan -- -chdirx", `"-chdirx" is not a flag of terraform plan`, planUsage},
		{"chdir upper case", defaultParser, "atlantis plan -- -target=a -CHDIR=x", `-chdir would run Terraform in another directory`, planUsage},
		{"chdir quoted", defaultParser, `atlantis plan -- "-chdir=/a b"`, `-chdir would run Terraform in another directory`, planUsage},
		{"plugin-dir =", defaultParser, "atlantis plan -- -plugin-dir=/x", `-plugin-dir would make Terraform read`, planUsage},
		{"plugin-dir separate", defaultParser, "atlantis plan -- -plugin-dir /x", `-plugin-dir would make Terraform read`, planUsage},
		{"plugin-dir double dash", defaultParser, "atlantis apply -- --plugin-dir=/x", `-plugin-dir would make Terraform read`, applyUsage},
		{"plugin-dir double dash separate", defaultParser, "atlantis apply -- --plugin-dir /x", `-plugin-dir would make Terraform read`, applyUsage},
		{"extra args look like our flags", defaultParser, "atlantis plan -- -d foo -p x --verbose", `"-d" is not a flag of terraform plan`, planUsage},
		{"extra args after dash dash dash dash", defaultParser, "atlantis plan -- --", `a second "--" would end Terraform's flags`, planUsage},
		{"extra empty word", defaultParser, "atlantis plan -- ''", `"" is not a flag`, planUsage},
		{"extra args to version", defaultParser, "atlantis version -- -target=x", `version passes no arguments to terraform`, ""},

		// Quoting.
		{"unterminated single quote", defaultParser, "atlantis plan -- -var 'a=b", "cannot parse the command: unterminated single quote", general},
		{"unterminated double quote", defaultParser, `atlantis plan -d "a`, "cannot parse the command: unterminated double quote", general},
		{"trailing backslash", defaultParser, `atlantis plan -d a\`, "cannot parse the command: unfinished escape", general},

		// Commands without flags.
		{"unlock with flag", defaultParser, "atlantis unlock -d x", `unlock takes no flags or arguments, got "-d"`, "Usage of unlock:"},
		{"unlock with dash dash", defaultParser, "atlantis unlock --", `unlock takes no flags or arguments, got "--"`, "Usage of unlock:"},
		{"version with argument", defaultParser, "atlantis version foo", `unexpected argument "foo"`, "Usage of version:"},

		// User input cannot break out of the code block.
		{"backticks in flag", defaultParser, "atlantis plan --x```@everyone", "unknown flag \"--x```@everyone\"", planUsage},
		{"backticks in command", defaultParser, "atlantis ```x", "unknown command \"```x\"", avail},
		{"bidi control echoed escaped", defaultParser, "atlantis pl\u202ean", `unknown command "pl\u202ean"`, avail},
		{"long input shortened", defaultParser, "atlantis " + strings.Repeat("x", 500), `unknown command "` + strings.Repeat("x", 80) + `"…`, avail},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := parseErr(t, tt.parser, tt.comment)
			if !strings.Contains(msg, tt.phrase) {
				t.Errorf("message lacks %q:\n%s", tt.phrase, msg)
			}
			if !strings.Contains(msg, tt.usage) {
				t.Errorf("message lacks usage %q:\n%s", tt.usage, msg)
			}
			if !strings.HasPrefix(msg, "```\nError: ") {
				t.Errorf("message does not start with the error line:\n%s", msg)
			}
		})
	}
}

// Asking a command for help is answered with its usage, not run.
func TestParseCommandHelp(t *testing.T) {
	tests := []struct{ comment, usageOf string }{
		{"atlantis plan --help", "plan"},
		{"atlantis plan -h", "plan"},
		{"atlantis apply -d x -h", "apply"},
		{"atlantis apply --help=true", "apply"},
		{"atlantis unlock -h", "unlock"},
		{"atlantis version --help", "version"},
	}
	for _, tt := range tests {
		t.Run(tt.comment, func(t *testing.T) {
			msg := parseErr(t, defaultParser, tt.comment)
			if want := defaultParser.CommandUsage(tt.usageOf); msg != want {
				t.Errorf("message:\n%s\nwant:\n%s", msg, want)
			}
		})
	}
}

// parseErr parses a comment that must be refused, checks the error's type,
// code and Markdown shape, and returns its message.
func parseErr(t *testing.T, p command.Parser, comment string) string {
	t.Helper()
	got, err := p.Parse(comment)
	if err == nil {
		t.Fatalf("Parse(%q) = %+v, nil; want an error", comment, got)
	}
	if got != nil {
		t.Errorf("Parse(%q) returned a command with its error: %+v", comment, got)
	}
	var aerr *atoll.Error
	if !errors.As(err, &aerr) {
		t.Fatalf("Parse(%q) error %T is not *atoll.Error", comment, err)
	}
	if aerr.Code != atoll.EINVALID {
		t.Errorf("code = %q, want %q", aerr.Code, atoll.EINVALID)
	}
	checkFenced(t, aerr.Message)
	return aerr.Message
}

// checkFenced fails unless msg is exactly one Markdown code block: user
// input inside must not be able to close it early.
func checkFenced(t testing.TB, msg string) {
	t.Helper()
	lines := strings.Split(msg, "\n")
	if lines[0] != "```" || !strings.HasSuffix(msg, "\n```") {
		t.Fatalf("message is not a single code block:\n%s", msg)
	}
	for _, l := range lines[1 : len(lines)-1] {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "```") || strings.HasPrefix(strings.TrimLeft(l, " "), "~~~") {
			t.Fatalf("message has a fence inside its code block:\n%s", msg)
		}
	}
	if strings.ContainsRune(msg, '\r') {
		t.Fatalf("message has a carriage return:\n%q", msg)
	}
}

func TestNameKnown(t *testing.T) {
	for _, n := range []string{"plan", "apply", "unlock", "version", "help", "cancel", "approve_policies", "import", "state"} {
		if !command.Name(n).Known() {
			t.Errorf("Name(%q).Known() = false", n)
		}
	}
	for _, n := range []string{"", "Plan", "policy_check", "autoplan", "-h"} {
		if command.Name(n).Known() {
			t.Errorf("Name(%q).Known() = true", n)
		}
	}
}
