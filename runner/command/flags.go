package command

import (
	"strconv"
	"strings"
)

// flagSpec describes one flag of plan and apply.
type flagSpec struct {
	short, long string // without dashes; short may be empty
	takesValue  bool
}

var planApplyFlags = []flagSpec{
	{"d", "dir", true},
	{"w", "workspace", true},
	{"p", "project", true},
	{"", "verbose", false},
	{"h", "help", false},
}

// lookupFlag finds the flag spelled arg ("-d" or "--dir"). Only these two
// spellings are accepted: pflag-style attached values ("-dfoo") and
// single-dash long names ("-dir") are too easy to misread.
func lookupFlag(arg string) (flagSpec, bool) {
	for _, f := range planApplyFlags {
		if (f.short != "" && arg == "-"+f.short) || arg == "--"+f.long {
			return f, true
		}
	}
	return flagSpec{}, false
}

// flagHint suggests the right spelling of a misspelt known flag, or "".
func flagHint(arg string) string {
	bare := strings.TrimLeft(arg, "-")
	for _, f := range planApplyFlags {
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

// parsePlanApply parses the arguments of plan or apply: flags, then
// optionally "--" and words for terraform.
func (p Parser) parsePlanApply(name string, args []string) (*Command, error) {
	cmd := &Command{Name: name}
	seen := map[string]bool{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			if rest := args[i+1:]; len(rest) > 0 {
				cmd.ExtraArgs = rest
			}
			break
		}
		if len(arg) < 2 || arg[0] != '-' {
			return nil, p.usageError(name, "unexpected argument %s; terraform arguments go after \"--\"", quote(arg))
		}
		flagName, value, hasValue := strings.Cut(arg, "=")
		f, ok := lookupFlag(flagName)
		if !ok {
			return nil, p.usageError(name, "unknown flag %s%s", quote(flagName), flagHint(flagName))
		}
		if f.long == "help" {
			return nil, p.helpReply(name)
		}
		// Repeats are refused rather than last-one-wins: "-d a -d b" is a typo.
		if seen[f.long] {
			return nil, p.usageError(name, "flag %s given more than once", spelling(f))
		}
		seen[f.long] = true

		if !f.takesValue {
			cmd.Verbose = true
			if hasValue {
				b, err := strconv.ParseBool(value)
				if err != nil {
					return nil, p.usageError(name, "flag %s takes no value, got %s", spelling(f), quote(value))
				}
				cmd.Verbose = b
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
		}
	}
	if err := p.validate(cmd); err != nil {
		return nil, err
	}
	return cmd, nil
}
