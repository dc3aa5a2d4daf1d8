package command_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/command"
)

func TestUsage(t *testing.T) {
	u := defaultParser.Usage()
	checkFenced(t, u)
	for _, want := range []string{
		"atlantis <command>", "plan ", "apply ", "unlock ", "version ", "help ", "cancel ", "approve_policies", "import ADDRESS ID", "state rm ADDRESS...",
		"atlantis plan -d . -- -target=", `"atlantis <command> --help"`,
	} {
		if !strings.Contains(u, want) {
			t.Errorf("Usage() lacks %q:\n%s", want, u)
		}
	}
}

func TestUsageUsesExecutableName(t *testing.T) {
	for _, u := range []string{customParser.Usage(), customParser.CommandUsage("plan"), customParser.CommandUsage("unlock")} {
		if !strings.Contains(u, "terrabot ") || strings.Contains(u, "atlantis") {
			t.Errorf("usage does not use the executable name:\n%s", u)
		}
	}
}

func TestCommandUsage(t *testing.T) {
	tests := []struct {
		name string
		want []string
	}{
		{"plan", []string{"Usage of plan:", "atlantis plan [flags] [-- terraform-args...]", "-d, --dir", "-w, --workspace", "-p, --project", "--verbose", "terraform plan"}},
		{"apply", []string{"Usage of apply:", "atlantis apply [flags]", "-d, --dir", "-w, --workspace", "-p, --project", "--verbose", "terraform apply", "--auto-merge-disabled", "--auto-merge-method"}},
		{"unlock", []string{"Usage of unlock:", "atlantis unlock", "no flags or arguments"}},
		{"version", []string{"Usage of version:", "atlantis version"}},
		{"help", []string{"Commands:", "help     Show this text."}},
		{"cancel", []string{"Usage of cancel:", "atlantis cancel", "A running apply is never interrupted"}},
		{"import", []string{"Usage of import ADDRESS ID:", "atlantis import ADDRESS ID [flags]", "-d, --dir", "terraform import"}},
		{"state", []string{"Usage of state rm ADDRESS...:", "atlantis state rm ADDRESS...", "-p, --project"}},
		{"approve_policies", []string{"Usage of approve_policies:", "--policy-set", "--clear-policy-approval"}},
	}
	for _, tt := range tests {
		u := defaultParser.CommandUsage(tt.name)
		checkFenced(t, u)
		for _, want := range tt.want {
			if !strings.Contains(u, want) {
				t.Errorf("CommandUsage(%q) lacks %q:\n%s", tt.name, want, u)
			}
		}
	}
	for _, name := range []string{"", "nope", "Plan", "help"} {
		if got, want := defaultParser.CommandUsage(name), defaultParser.Usage(); got != want {
			t.Errorf("CommandUsage(%q) is not the general usage:\n%s", name, got)
		}
	}
}

// The help command's reply is Usage; a zero Parser and one naming
// "atlantis" explicitly are the same.
func TestUsageDefaultName(t *testing.T) {
	if a, b := (command.Parser{}).Usage(), (command.Parser{ExecutableName: "atlantis"}).Usage(); a != b {
		t.Errorf("zero Parser usage differs from ExecutableName=atlantis")
	}
}

// The general usage lists only what --allow-commands allows, as Atlantis's
// help does, and help itself always.
func TestUsageListsAllowedCommands(t *testing.T) {
	p := command.Parser{AllowCommands: []string{"apply", "unlock"}}
	u := p.Usage()
	for _, want := range []string{"  apply ", "  unlock ", "  help ", "atlantis apply -d . -w staging"} {
		if !strings.Contains(u, want) {
			t.Errorf("Usage() lacks %q:\n%s", want, u)
		}
	}
	for _, absent := range []string{"  plan ", "  version ", "  cancel ", "import", "plan -d ."} {
		if strings.Contains(u, absent) {
			t.Errorf("Usage() has %q, which is not allowed:\n%s", absent, u)
		}
	}
}

// Words after help are ignored, as in Atlantis, and the reply says so.
func TestHelpReply(t *testing.T) {
	if got := defaultParser.HelpReply(&command.Command{Name: "help"}); got != defaultParser.Usage() {
		t.Errorf("HelpReply without words:\n%s", got)
	}
	got := defaultParser.HelpReply(&command.Command{Name: "help", Args: []string{"plan", "```x"}})
	checkFenced(t, got)
	if !strings.Contains(got, "Words after help are ignored: \"plan ```x\".") || !strings.Contains(got, "Commands:") {
		t.Errorf("HelpReply with words:\n%s", got)
	}
}
