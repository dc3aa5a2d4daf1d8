package command_test

import (
	"reflect"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

// Format writes what a user would type, and Parse reads it back as the
// same command: the dashboard's and the API's commands are posted,
// audited and run as that text.
func TestFormatRoundTrip(t *testing.T) {
	tests := []struct {
		cmd  atoll.Command
		want string // Format's text with the default executable
	}{
		{atoll.Command{Name: "plan"}, "atlantis plan"},
		{atoll.Command{Name: "apply"}, "atlantis apply"},
		{atoll.Command{Name: "unlock"}, "atlantis unlock"},
		{atoll.Command{Name: "cancel"}, "atlantis cancel"},
		{atoll.Command{Name: "version", Dir: "infra"}, "atlantis version -d infra"},
		{atoll.Command{Name: "help"}, "atlantis help"},
		{atoll.Command{Name: "help", Args: []string{"plan", "--help"}}, "atlantis help plan '--help'"},
		{atoll.Command{Name: "plan", Project: "staging"}, "atlantis plan -p staging"},
		{atoll.Command{Name: "plan", Dir: ".", Workspace: "default"}, "atlantis plan -d . -w default"},
		{atoll.Command{Name: "plan", Dir: "envs/prod", Workspace: "eu-west.1"}, "atlantis plan -d envs/prod -w eu-west.1"},
		{atoll.Command{Name: "plan", Dir: "modules/*"}, "atlantis plan -d 'modules/*'"},
		{atoll.Command{Name: "plan", Dir: "my app"}, "atlantis plan -d 'my app'"},
		{atoll.Command{Name: "plan", Project: "it's"}, `atlantis plan -p 'it'\''s'`},
		{atoll.Command{Name: "plan", Project: `say"hi"`}, `atlantis plan -p 'say"hi"'`},
		{atoll.Command{Name: "plan", Project: "-dash"}, "atlantis plan -p='-dash'"},
		{atoll.Command{Name: "plan", Verbose: true, ExtraArgs: []string{"-var", "a=b c", "-target=x"}},
			"atlantis plan --verbose -- '-var' 'a=b c' '-target=x'"},
		{atoll.Command{Name: "apply", Project: "p", AutoMergeMethod: "squash"}, "atlantis apply -p p --auto-merge-method squash"},
		{atoll.Command{Name: "apply", Dir: "x", AutoMergeDisabled: true}, "atlantis apply -d x --auto-merge-disabled"},
		{atoll.Command{Name: "approve_policies", PolicySet: "cost", ClearPolicyApproval: true},
			"atlantis approve_policies --policy-set cost --clear-policy-approval"},
		{atoll.Command{Name: "import", Dir: "x", Args: []string{"aws_s3_bucket.b[\"k\"]", "bucket name"}},
			`atlantis import 'aws_s3_bucket.b["k"]' 'bucket name' -d x`},
		{atoll.Command{Name: "state", SubName: "rm", Args: []string{"a.b", "c.d"}, Project: "p"}, "atlantis state rm a.b c.d -p p"},
		{atoll.Command{Name: "import", Dir: "modules/*", Args: []string{"a.b", "id"}}, "atlantis import a.b id -d 'modules/*'"},
		{atoll.Command{Name: "plan", Dir: "-d", Workspace: "w"}, "atlantis plan -d='-d' -w w"},
	}
	for _, tt := range tests {
		text := command.Format(tt.cmd, "")
		if text != tt.want {
			t.Errorf("Format(%+v) = %q, want %q", tt.cmd, text, tt.want)
		}
		got, err := defaultParser.Parse(text)
		if err != nil || got == nil {
			t.Errorf("Parse(%q) = %v, %v", text, got, err)
			continue
		}
		if !reflect.DeepEqual(*got, tt.cmd) {
			t.Errorf("Parse(%q) = %+v, want %+v", text, *got, tt.cmd)
		}
	}
}

// The executable is the first word, and the parser of a server with that
// executable name reads it.
func TestFormatExecutable(t *testing.T) {
	text := command.Format(atoll.Command{Name: "apply", Project: "web"}, "terrabot")
	if text != "terrabot apply -p web" {
		t.Fatalf("Format = %q", text)
	}
	cmd, err := command.Parser{ExecutableName: "terrabot"}.Parse(text)
	if err != nil || cmd == nil || cmd.Project != "web" {
		t.Fatalf("Parse(%q) = %+v, %v", text, cmd, err)
	}
	// Another server's name is not answered to.
	if cmd, err := defaultParser.Parse(text); cmd != nil || err != nil {
		t.Fatalf("default parser answered %q: %+v, %v", text, cmd, err)
	}
}

// Every command Parse returns is written by Format as a comment Parse
// reads back as the same command.
func FuzzFormat(f *testing.F) {
	for _, s := range []string{
		"atlantis plan", "atoll apply -d /a/./b -w x --verbose -- -target=y",
		"atlantis plan -p 'a b'", "atlantis plan -- -var 'a=b c' -var \"x=\\\"y\\\"\"",
		"atlantis import -d x 'a.b[\"k\"]' id", "atlantis state rm a b -p 'it'\\''s'",
		"atlantis apply -p x --auto-merge-method=rebase", "atlantis approve_policies --policy-set=p --clear-policy-approval",
		"atlantis help me `please`", "atlantis plan -d 'x/*' -w=w", "atlantis version -p=-x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, comment string) {
		cmd, err := defaultParser.Parse(comment)
		if err != nil || cmd == nil {
			return
		}
		text := command.Format(*cmd, "")
		again, err := defaultParser.Parse(text)
		if err != nil || again == nil {
			t.Fatalf("Parse(Format(%+v)) = Parse(%q) = %v, %v", *cmd, text, again, err)
		}
		if !reflect.DeepEqual(again, cmd) {
			t.Fatalf("Parse(%q) = %+v, want %+v (from %q)", text, *again, *cmd, comment)
		}
	})
}
