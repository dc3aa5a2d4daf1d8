package command_test

import (
	"errors"
	"path"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/command"
)

var didYouMeanRE = regexp.MustCompile("^Did you mean to use `atlantis` instead of `[A-Za-z0-9]+`\\?$")

var workspaceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"atlantis plan", "atoll apply -d /a/./b -w x --verbose -- -target=y",
		"atlantis plan -d ../x", "atlantis plan -d a/../../b", "atlantis plan -d '/..'",
		"@atoll-bot plan -p x", "atlantis plan -- -var 'a=b c' -var \"x=\\\"y\\\"\"",
		"atlantis plan -- --chdir=/x", "atlantis plan -d \"a\\\\..\"", "atlantis unlock",
		"atlantis plan -d=./ -w=a.b", "ATLANTIS help", "atlantis plan -d 'C:/x'", "atlantis 'a",
		"atlantis plan -dstaging -wprod", "atlantis apply -d a -d b -p x", "atlantis import -d 'm/*' a b", "atlantis plan -dir x",
	} {
		f.Add(s)
	}
	parser := command.Parser{VCSUser: "atoll-bot"}
	f.Fuzz(func(t *testing.T, comment string) {
		cmd, err := parser.Parse(comment)
		if err != nil {
			if cmd != nil {
				t.Fatalf("command and error together: %+v, %v", cmd, err)
			}
			var aerr *atoll.Error
			if !errors.As(err, &aerr) || aerr.Code != atoll.EINVALID {
				t.Fatalf("error is not an EINVALID *atoll.Error: %#v", err)
			}
			if didYouMeanRE.MatchString(aerr.Message) {
				return // a one-line hint, never fenced, naming no user input but a plain word
			}
			checkFenced(t, aerr.Message)
			return
		}
		if cmd == nil {
			return
		}
		if !command.Name(cmd.Name).Known() {
			t.Fatalf("unknown name %q", cmd.Name)
		}
		if d := cmd.Dir; d != "" {
			if strings.HasPrefix(d, "/") || path.IsAbs(d) || strings.Contains(d, `\`) {
				t.Fatalf("absolute dir %q", d)
			}
			for _, elem := range strings.Split(d, "/") {
				if elem == ".." {
					t.Fatalf("dir %q has a .. element", d)
				}
			}
			if path.Clean(d) != d {
				t.Fatalf("dir %q is not clean", d)
			}
		}
		if w := cmd.Workspace; w != "" && (!workspaceRE.MatchString(w) || strings.Contains(w, "..") || len(w) > 90) {
			t.Fatalf("bad workspace %q", w)
		}
		if cmd.Project != "" && (cmd.Dir != "" || cmd.Workspace != "") {
			t.Fatalf("project with dir or workspace: %+v", cmd)
		}
		for _, a := range cmd.ExtraArgs {
			l := strings.TrimPrefix(strings.ToLower(a), "-")
			if strings.HasPrefix(l, "-chdir") || strings.HasPrefix(l, "-plugin-dir") {
				t.Fatalf("blocked extra arg %q", a)
			}
		}
		switch cmd.Name {
		case command.Help:
			if !reflect.DeepEqual(*cmd, command.Command{Name: cmd.Name, Args: cmd.Args}) {
				t.Fatalf("help with flags: %+v", cmd)
			}
			checkFenced(t, parser.HelpReply(cmd))
		case command.Unlock, command.Cancel:
			if !reflect.DeepEqual(*cmd, command.Command{Name: cmd.Name}) {
				t.Fatalf("%s with arguments: %+v", cmd.Name, cmd)
			}
		case command.Import:
			if len(cmd.Args) != 2 {
				t.Fatalf("import without ADDRESS ID: %+v", cmd)
			}
		case command.State:
			if cmd.SubName != "rm" || len(cmd.Args) == 0 {
				t.Fatalf("state without rm ADDRESS: %+v", cmd)
			}
		default:
			if cmd.Args != nil || cmd.SubName != "" {
				t.Fatalf("%s with positional arguments: %+v", cmd.Name, cmd)
			}
		}
		if (cmd.AutoMergeDisabled || cmd.AutoMergeMethod != "") && cmd.Name != command.Apply {
			t.Fatalf("automerge flags on %s: %+v", cmd.Name, cmd)
		}
	})
}

// Quoting each word in single quotes and splitting again gives the same
// words: the splitter loses nothing and invents nothing.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{`a 'b c' "d\"e" f\ g`, `'' "" \\`, "a\\\nb", "\xff'x'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		words, err := command.SplitWords(s)
		if err != nil {
			return
		}
		quoted := make([]string, len(words))
		for i, w := range words {
			quoted[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
		again, err := command.SplitWords(strings.Join(quoted, " "))
		if err != nil {
			t.Fatalf("re-split of %q: %v", quoted, err)
		}
		if !reflect.DeepEqual(again, words) {
			t.Fatalf("re-split %q = %q, want %q", quoted, again, words)
		}
	})
}
