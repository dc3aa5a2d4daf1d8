package command

import (
	"strconv"
	"strings"
)

// flagSpec describes one flag.
type flagSpec struct {
	short, long string // without dashes; short may be empty
	takesValue  bool
}

var (
	dirFlag       = flagSpec{"d", "dir", true}
	workspaceFlag = flagSpec{"w", "workspace", true}
	projectFlag   = flagSpec{"p", "project", true}
	verboseFlag   = flagSpec{"", "verbose", false}
	helpFlag      = flagSpec{"h", "help", false}
	noMergeFlag   = flagSpec{"", "auto-merge-disabled", false}
	mergeFlag     = flagSpec{"", "auto-merge-method", true}
	policySetFlag = flagSpec{"", "policy-set", true}
	clearFlag     = flagSpec{"", "clear-policy-approval", false}
)

// commandFlags are the flags of each command that takes flags, as in
// Atlantis.
var commandFlags = map[string][]flagSpec{
	Plan:            {dirFlag, workspaceFlag, projectFlag, verboseFlag, helpFlag},
	Apply:           {dirFlag, workspaceFlag, projectFlag, noMergeFlag, mergeFlag, verboseFlag, helpFlag},
	ApprovePolicies: {dirFlag, workspaceFlag, projectFlag, policySetFlag, clearFlag, verboseFlag, helpFlag},
	Version:         {dirFlag, workspaceFlag, projectFlag, verboseFlag, helpFlag},
	Import:          {dirFlag, workspaceFlag, projectFlag, verboseFlag, helpFlag},
	State:           {dirFlag, workspaceFlag, projectFlag, verboseFlag, helpFlag},
}

// allFlags is every flag of any command, for spelling hints.
var allFlags = []flagSpec{dirFlag, workspaceFlag, projectFlag, verboseFlag, helpFlag, noMergeFlag, mergeFlag, policySetFlag, clearFlag}

// readFlag reads arg, which starts with "-", as pflag (Atlantis's flag
// parser) does: "--name" with an optional "=value", or a shorthand letter
// with its value attached ("-dstaging"), after "=" ("-d=staging") or in the
// next word ("-d staging"). It returns the flag, the value when it was
// given within arg, and the name as the user wrote it (for errors); ok is
// false when arg names no flag of flags. One spelling pflag reads is
// refused: a long name behind one dash ("-dir x", which pflag reads as
// "-d ir") is never what its writer meant, and gets a hint instead.
func readFlag(flags []flagSpec, arg string) (f flagSpec, value string, hasValue bool, written string, ok bool) {
	if strings.HasPrefix(arg, "--") {
		written, value, hasValue = strings.Cut(arg, "=")
		for _, f := range flags {
			if written == "--"+f.long {
				return f, value, hasValue, written, true
			}
		}
		return flagSpec{}, "", false, written, false
	}
	written, _, _ = strings.Cut(arg, "=")
	if isLongName(written[1:]) {
		return flagSpec{}, "", false, written, false
	}
	short, rest := arg[1:2], arg[2:]
	for _, f := range flags {
		if f.short != "" && short == f.short {
			value, hasValue = strings.CutPrefix(rest, "=")
			return f, value, hasValue || rest != "", "-" + short, true
		}
	}
	return flagSpec{}, "", false, written, false
}

// isLongName reports whether name is the long name of any command's flag.
func isLongName(name string) bool {
	for _, f := range allFlags {
		if name == f.long {
			return true
		}
	}
	return false
}

// flagHint suggests the right spelling of a misspelt known flag, or "".
func flagHint(flags []flagSpec, arg string) string {
	bare := strings.TrimLeft(arg, "-")
	for _, f := range flags {
		if bare == f.long || (f.short != "" && bare == f.short) {
			return " (did you mean " + spelling(f) + "?)"
		}
	}
	return ""
}

// spelling is how usage and errors name a flag, e.g. "-d/--dir".
func spelling(f flagSpec) string {
	if f.short == "" {
		return "--" + f.long
	}
	return "-" + f.short + "/--" + f.long
}

// positional is how many words besides flags a command takes: import takes
// exactly ADDRESS and ID, state takes "rm" and at least one ADDRESS, and the
// others none. max < 0 means no upper bound.
func positional(name string) (min, max int) {
	switch name {
	case Import:
		return 2, 2
	case State:
		return 2, -1
	}
	return 0, 0
}

// parseFlags parses the arguments of a command with flags: flags and, for
// import and state, positional words in any order (as pflag allows), then
// optionally "--" and words for terraform.
func (p Parser) parseFlags(name string, args []string) (*Command, error) {
	flags := commandFlags[name]
	cmd := &Command{Name: name}
	var words []string
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if rest := args[i+1:]; len(rest) > 0 {
				cmd.ExtraArgs = rest
			}
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			words = append(words, arg)
			continue
		}
		f, value, hasValue, written, ok := readFlag(flags, arg)
		if !ok {
			return nil, p.usageError(name, "unknown flag %s%s", quote(written), flagHint(allFlags, written))
		}
		if f.long == "help" {
			return nil, p.helpReply(name)
		}
		// A flag given again replaces its earlier value, as in pflag.
		if !f.takesValue {
			b := true
			if hasValue {
				var err error
				if b, err = strconv.ParseBool(value); err != nil {
					return nil, p.usageError(name, "flag %s takes no value, got %s", spelling(f), quote(value))
				}
			}
			switch f.long {
			case "verbose":
				cmd.Verbose = b
			case "auto-merge-disabled":
				cmd.AutoMergeDisabled = b
			case "clear-policy-approval":
				cmd.ClearPolicyApproval = b
			}
			continue
		}
		if !hasValue {
			// A following flag is a forgotten value, not a value: "-d -w x".
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return nil, p.usageError(name, "flag %s needs a value", spelling(f))
			}
			i++
			value = args[i]
		}
		if value == "" {
			return nil, p.usageError(name, "flag %s needs a value", spelling(f))
		}
		switch f.long {
		case "dir":
			cmd.Dir = value
		case "workspace":
			cmd.Workspace = value
		case "project":
			cmd.Project = value
		case "auto-merge-method":
			cmd.AutoMergeMethod = value
		case "policy-set":
			cmd.PolicySet = value
		}
	}
	if err := p.takeWords(cmd, words); err != nil {
		return nil, err
	}
	if err := p.validate(cmd); err != nil {
		return nil, err
	}
	if p.DisableApplyAll && cmd.Name == Apply && cmd.Dir == "" && cmd.Workspace == "" && cmd.Project == "" {
		return nil, p.applyAllDisabled()
	}
	return cmd, nil
}

// takeWords checks the positional words of cmd and stores them.
func (p Parser) takeWords(cmd *Command, words []string) error {
	name := cmd.Name
	min, max := positional(name)
	if name == State {
		if len(words) == 0 {
			return p.usageError(name, "subcommand required")
		}
		if words[0] != "rm" {
			return p.usageError(name, "invalid subcommand %s (not rm)", quote(words[0]))
		}
		cmd.SubName, words = words[0], words[1:]
		min--
	}
	if len(words) < min || (max >= 0 && len(words) > max) {
		if len(words) == 0 {
			return p.usageError(name, "missing argument(s): %s", usageLine(name))
		}
		if max == 0 {
			return p.usageError(name, "unexpected argument %s; terraform arguments go after \"--\"", quote(words[0]))
		}
		return p.usageError(name, "wrong number of arguments (%d): %s", len(words), usageLine(name))
	}
	if len(words) > 0 {
		cmd.Args = words
	}
	return nil
}

// usageLine is a command with its positional arguments, as Atlantis names it.
func usageLine(name string) string {
	switch name {
	case Import:
		return "import ADDRESS ID"
	case State:
		return "state rm ADDRESS..."
	}
	return name
}
