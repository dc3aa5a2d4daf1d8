package command

import (
	"path"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/atollhq/atoll"
	"github.com/bmatcuk/doublestar/v4"
)

// validate checks and normalises the flag values of a command. Dir and
// Workspace end up in file paths and lock keys, so they are held to rules
// that rule out escaping the checkout.
func (p Parser) validate(cmd *Command) *atoll.Error {
	if cmd.Dir != "" {
		// A pattern selects projects for every command, as in Atlantis;
		// import refuses a selection of more than one when it runs.
		clean := cleanDir
		if IsDirPattern(cmd.Dir) {
			clean = cleanPattern
		}
		dir, msg := clean(cmd.Dir)
		if msg != "" {
			return p.usageError(cmd.Name, "invalid -d/--dir %s: %s", quote(cmd.Dir), msg)
		}
		cmd.Dir = dir
	}
	if cmd.Workspace != "" {
		if msg := checkWorkspace(cmd.Workspace); msg != "" {
			return p.usageError(cmd.Name, "invalid -w/--workspace %s: %s", quote(cmd.Workspace), msg)
		}
	}
	if cmd.Project != "" {
		if msg := checkProject(cmd.Project); msg != "" {
			return p.usageError(cmd.Name, "invalid -p/--project %s: %s", quote(cmd.Project), msg)
		}
		if cmd.Dir != "" || cmd.Workspace != "" {
			return p.usageError(cmd.Name, "cannot use -p/--project at same time as -d/--dir or -w/--workspace")
		}
		if p.EnableRegexpCmd {
			// RE2: matching takes linear time whatever the comment says.
			re, err := regexp.Compile("^(?:" + cmd.Project + ")$")
			if err != nil {
				return p.usageError(cmd.Name, "invalid -p/--project %s: not a regular expression (%v)", quote(cmd.Project), err)
			}
			cmd.ProjectRegexp = re
		}
	}
	if cmd.PolicySet != "" {
		if msg := checkProject(cmd.PolicySet); msg != "" {
			return p.usageError(cmd.Name, "invalid --policy-set %s: %s", quote(cmd.PolicySet), msg)
		}
	}
	if cmd.AutoMergeMethod != "" {
		if cmd.AutoMergeDisabled {
			return p.usageError(cmd.Name, "cannot use --auto-merge-method at the same time as --auto-merge-disabled")
		}
		switch cmd.AutoMergeMethod {
		case "merge", "rebase", "squash":
		default:
			return p.usageError(cmd.Name, "invalid --auto-merge-method %s: one of merge, rebase, squash", quote(cmd.AutoMergeMethod))
		}
	}
	for _, arg := range cmd.Args {
		if msg := checkText(arg); msg != "" {
			return p.usageError(cmd.Name, "invalid argument %s: %s", quote(arg), msg)
		}
	}
	for _, arg := range cmd.Args {
		if flag := p.blockedFlag(arg); flag != "" {
			return p.usageError(cmd.Name, "terraform flag %s is not allowed on this server", quote(flag))
		}
	}
	return p.validateExtraArgs(cmd)
}

// validateExtraArgs checks the words after "--" with the rule in tfargs.go.
// Only plan, apply, import and state pass words to Terraform; the other
// commands refuse them rather than drop them silently.
func (p Parser) validateExtraArgs(cmd *Command) *atoll.Error {
	if cmd.ExtraArgs == nil {
		return nil
	}
	switch cmd.Name {
	case Plan, Apply, Import, State:
	default:
		return p.usageError(cmd.Name, "%s passes no arguments to terraform, got %s after \"--\"", cmd.Name, quote(cmd.ExtraArgs[0]))
	}
	if issue := p.terraformArgsIssue(commentStep(cmd.Name), cmd.ExtraArgs); issue != "" {
		return p.usageError(cmd.Name, "%s", issue)
	}
	return nil
}

// cleanDir turns a -d value into a clean path relative to the repository
// root, or explains in msg why it is refused. A leading "/" or "./" means
// the root, as in Atlantis, so "/", "./" and "." all give ".".
func cleanDir(dir string) (clean, msg string) {
	if msg := checkText(dir); msg != "" {
		return "", msg
	}
	if strings.Contains(dir, `\`) {
		return "", `must use "/" as separator, not "\"`
	}
	// "C:" and "C:/x"; "a:b" stays a valid directory name.
	if len(dir) >= 2 && dir[1] == ':' && isASCIILetter(dir[0]) && (len(dir) == 2 || dir[2] == '/') {
		return "", "must be relative to the repository root, not a Windows path"
	}
	// Checked before cleaning, which would silently resolve "a/../b".
	if hasDotDot(dir) {
		return "", `must not contain ".."`
	}
	// Rooting the path first makes path.Clean drop leading "/" and "./".
	clean = strings.TrimPrefix(path.Clean("/"+dir), "/")
	if clean == "" {
		clean = "."
	}
	if hasDotDot(clean) { // unreachable after the check above; kept as a guard
		return "", `must not contain ".."`
	}
	return clean, ""
}

// IsDirPattern reports whether a -d value is a glob pattern, as Atlantis
// v0.47 decides: it selects the projects whose dir it matches.
func IsDirPattern(dir string) bool { return strings.ContainsAny(dir, "*?[") }

// cleanPattern checks a -d glob pattern as Atlantis does (no "..", valid
// doublestar syntax) and more (the text rules of a dir, no "\"), and
// cleans it as a path.
func cleanPattern(dir string) (clean, msg string) {
	if msg := checkText(dir); msg != "" {
		return "", msg
	}
	switch {
	case strings.Contains(dir, `\`):
		return "", `must use "/" as separator, not "\"`
	case strings.Contains(dir, ".."):
		return "", `must not contain ".."`
	case !doublestar.ValidatePattern(dir):
		return "", "is not a valid glob pattern"
	}
	// Cleaning as for a path drops a leading "/" or "./", doubled and
	// trailing slashes and "." elements, which would otherwise make the
	// pattern match no project's dir; it has no ".." to resolve.
	clean = strings.TrimPrefix(path.Clean("/"+dir), "/")
	if clean == "" {
		clean = "."
	}
	return clean, ""
}

func hasDotDot(p string) bool {
	for _, elem := range strings.Split(p, "/") {
		if elem == ".." {
			return true
		}
	}
	return false
}

func isASCIILetter(c byte) bool { return ('a' <= c && c <= 'z') || ('A' <= c && c <= 'Z') }

// maxWorkspace bounds workspace names, which become file and state names.
const maxWorkspace = 90

var workspaceRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// checkWorkspace explains why name is not an acceptable workspace, or
// returns "". Terraform allows more, but workspace names become parts of
// paths here, so only a safe subset is accepted.
func checkWorkspace(name string) string {
	switch {
	case len(name) > maxWorkspace:
		return "must be at most 90 characters long"
	case !workspaceRE.MatchString(name):
		return `must start with a letter or digit and contain only letters, digits, "-", "_" and "."`
	case strings.Contains(name, ".."):
		return `must not contain ".."`
	}
	return ""
}

// checkProject explains why name is not an acceptable project name, or
// returns "". Project names come from the repo config, so any visible text
// without spaces may match one.
func checkProject(name string) string {
	if msg := checkText(name); msg != "" {
		return msg
	}
	if strings.IndexFunc(name, unicode.IsSpace) >= 0 {
		return "must not contain spaces"
	}
	return ""
}

// checkText refuses what no path or name should hold: invalid UTF-8 and
// control characters, NUL included.
func checkText(s string) string {
	if !utf8.ValidString(s) {
		return "must be valid UTF-8"
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return "must not contain control characters"
	}
	return ""
}

// blockedFlag returns the flag part of arg (before any "=") when arg is a
// flag of --blocked-extra-args, in its one- or two-dash spelling, alone or
// with "=value"; else "". The flag itself must match, as Terraform reads
// it (Go's flag package): blocking -var leaves -var-file alone. Case is
// ignored so that no variant slips through. The flags no server allows
// are refused by the allowlist in tfargs.go.
func (p Parser) blockedFlag(arg string) string {
	name, _, _, isFlag := splitFlag(arg)
	if !isFlag {
		return ""
	}
	for _, b := range p.BlockedExtraArgs {
		blocked, _, _, ok := splitFlag(b)
		if ok && blocked != "" && strings.EqualFold(name, blocked) {
			flag, _, _ := strings.Cut(arg, "=")
			return flag
		}
	}
	return ""
}
