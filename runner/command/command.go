package command

// Name is a command name such as "plan". The constants below are untyped so
// that they compare directly with Command.Name, which is a plain string.
type Name string

// Command names.
const (
	Plan    = "plan"
	Apply   = "apply"
	Unlock  = "unlock"
	Version = "version"
	Help    = "help"
)

// Known reports whether n names a command this package parses.
func (n Name) Known() bool {
	switch n {
	case Plan, Apply, Unlock, Version, Help:
		return true
	}
	return false
}

// Command is a parsed comment command.
type Command struct {
	Name      string   // plan|apply|unlock|version|help
	Dir       string   // cleaned, relative to repo root, "" when not given; "." means root
	Workspace string   // "" when not given
	Project   string   // "" when not given
	Verbose   bool     // append Atoll's log to the reply
	ExtraArgs []string // words after "--", for terraform; nil when none
}

// Parser recognises comments addressed to Atoll. The zero value answers to
// "atlantis" and "atoll".
type Parser struct {
	ExecutableName string // default "atlantis"; "atoll" is always accepted too
	VCSUser        string // the bot's user name, so "@<user> plan" works; may be empty
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
