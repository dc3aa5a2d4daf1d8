package command

import "github.com/atollhq/atoll"

// Name is a command name such as "plan". The constants below are untyped so
// that they compare directly with Command.Name, which is a plain string.
type Name string

// Command names (the root package's, for those that build commands
// without parsing them).
const (
	Plan            = atoll.CommandPlan
	Apply           = atoll.CommandApply
	Unlock          = atoll.CommandUnlock
	Version         = atoll.CommandVersion
	Help            = atoll.CommandHelp
	Cancel          = atoll.CommandCancel
	ApprovePolicies = atoll.CommandApprovePolicies
	Import          = atoll.CommandImport
	State           = atoll.CommandState
)

// AllCommands lists the commands a comment can run, in the order Atlantis
// lists them; help is always allowed and not among them.
var AllCommands = []string{Version, Plan, Apply, Cancel, Unlock, ApprovePolicies, Import, State}

// DefaultAllowCommands is Atlantis's default --allow-commands, in its
// order; cancel has been in it since Atlantis added the command.
var DefaultAllowCommands = []string{Version, Plan, Apply, Unlock, ApprovePolicies, Cancel}

// Known reports whether n names a command this package parses.
func (n Name) Known() bool {
	switch n {
	case Plan, Apply, Unlock, Version, Help, Cancel, ApprovePolicies, Import, State:
		return true
	}
	return false
}

// Command is a parsed comment command: the root package's, which the
// dashboard and the API build without a comment (see Format).
type Command = atoll.Command

// Parser recognises comments addressed to Atoll. The zero value answers to
// "atlantis", "run" and "atoll" and allows every command.
type Parser struct {
	ExecutableName string // default "atlantis"; "atoll" and "run" are always accepted too
	VCSUser        string // the bot's user name, so "@<user> plan" works; may be empty
	// AllowCommands lists the commands comments may run (--allow-commands);
	// nil allows all of them. help is always allowed.
	AllowCommands []string
	// DisableApplyAll refuses an apply that names no project, directory
	// or workspace (--disable-apply-all).
	DisableApplyAll bool
	// EnableRegexpCmd reads -p/--project as a regular expression over
	// project names (--enable-regexp-cmd, as Atlantis).
	EnableRegexpCmd bool
	// BlockedExtraArgs are more terraform flags comments may not pass
	// (--blocked-extra-args), on top of the allowlist in tfargs.go.
	BlockedExtraArgs []string
	// VarFileAllowlist are absolute directories whose files a comment may
	// pass to -var-file (--var-file-allowlist), next to the checkout's.
	VarFileAllowlist []string
}

// DefaultExecutableName is the prefix used when Parser.ExecutableName is empty.
const DefaultExecutableName = "atlantis"

// executable is the name shown in usage text.
func (p Parser) executable() string {
	if p.ExecutableName == "" {
		return DefaultExecutableName
	}
	return p.ExecutableName
}

// Allowed reports whether comments may run name.
func (p Parser) Allowed(name string) bool {
	if name == Help {
		return true
	}
	// Names no comment can run (policy_check, autoplan) are never allowed,
	// whatever the list says, as Atlantis drops them from it.
	if !Name(name).Known() {
		return false
	}
	if p.AllowCommands == nil {
		return true
	}
	for _, a := range p.AllowCommands {
		if a == name {
			return true
		}
	}
	return false
}

// allowedList is the allowed commands in Atlantis's order, for replies.
func (p Parser) allowedList() []string {
	var out []string
	for _, n := range AllCommands {
		if p.Allowed(n) {
			out = append(out, n)
		}
	}
	return out
}
