package command_test

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll/runner/command"
)

func TestUsage(t *testing.T) {
	u := defaultParser.Usage()
	checkFenced(t, u)
	for _, want := range []string{
		"atlantis <command>", "plan ", "apply ", "unlock ", "version ", "help ",
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
		{"apply", []string{"Usage of apply:", "atlantis apply [flags]", "-d, --dir", "-w, --workspace", "-p, --project", "--verbose", "terraform apply"}},
		{"unlock", []string{"Usage of unlock:", "atlantis unlock", "no flags or arguments"}},
		{"version", []string{"Usage of version:", "atlantis version"}},
		{"help", []string{"Usage of help:", "atlantis help"}},
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
	for _, name := range []string{"", "nope", "Plan"} {
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
