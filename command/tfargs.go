package command

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/atollhq/atoll"
)

// This file owns the rule for the words a comment passes to Terraform after
// "--" and for the extra_args of a workflow that came from a repository's
// atlantis.yaml. It is an allowlist: a flag passes only when it is listed
// for the Terraform command it reaches.
//
// The rule follows how Terraform and OpenTofu read their flags: Go's
// standard flag package (command/arguments and command/meta*.go in both),
// so "-name" and "--name" are the same flag, "-name=v" and "-name v" the
// same value, names are case-sensitive, parsing stops at the first word
// that is not a flag (or at "--"), and for a flag given twice the last
// value wins. That last rule is why a denylist of prefixes was not enough:
// Atoll's own "-out" came first and a comment's second. A few flags are
// taken out of the argument list before the flag set sees them (-no-color,
// -compact-warnings; OpenTofu's -concise and -consolidate-*), and the CLI
// layer acts on -h/-help/--help, -v/-version and -install-autocomplete
// anywhere in the list.

// ArgStep is the Terraform command arguments reach: a workflow step name
// ("init", "plan", "apply", "import", "state_rm").
type ArgStep = string

// tfArgKind is what a Terraform flag takes.
type tfArgKind int

const (
	tfBool          tfArgKind = iota // -name or -name=true|false
	tfValue                          // -name=v or -name v
	tfPath                           // a value Terraform reads as a file path
	tfBackendConfig                  // init's -backend-config: key=value, or a path
)

// tfFlag is a Terraform flag arguments may carry, and the steps it may
// reach. Terraform refuses a flag its command does not define, but Atoll
// refuses it first with a reply that says why.
type tfFlag struct {
	kind  tfArgKind
	steps []ArgStep
}

var (
	planOnly     = []ArgStep{"plan"}
	planApply    = []ArgStep{"plan", "apply"}
	planApplyImp = []ArgStep{"plan", "apply", "import"}
	stateSteps   = []ArgStep{"import", "state_rm", "init"}
	allSteps     = []ArgStep{"init", "plan", "apply", "import", "state_rm"}
	initOnly     = []ArgStep{"init"}
)

// allowedTFFlags are the flags that change what Terraform plans or how it
// waits, never where it reads its configuration or writes its output.
var allowedTFFlags = map[string]tfFlag{
	"destroy":      {tfBool, planOnly},
	"refresh-only": {tfBool, planOnly},
	"refresh":      {tfBool, planOnly},
	"target":       {tfValue, planOnly},
	"replace":      {tfValue, planOnly},
	"exclude":      {tfValue, planOnly}, // OpenTofu 1.9+
	"var":          {tfValue, planApplyImp},
	"var-file":     {tfPath, planApplyImp},
	"parallelism":  {tfValue, planApplyImp},
	"lock-timeout": {tfValue, allSteps},
	// Output shape only: Terraform's view parsing takes these out of the
	// argument list wherever they are.
	"compact-warnings":      {tfBool, planApplyImp},
	"concise":               {tfBool, planApply}, // OpenTofu
	"consolidate-warnings":  {tfBool, planApply}, // OpenTofu
	"consolidate-errors":    {tfBool, planApply}, // OpenTofu
	"ignore-remote-version": {tfBool, stateSteps},
	"dry-run":               {tfBool, []ArgStep{"state_rm"}},
	// init: only a workflow's extra_args reach it, never a comment.
	"backend":        {tfBool, initOnly},
	"backend-config": {tfBackendConfig, initOnly},
	"cloud":          {tfBool, initOnly},
	"get":            {tfBool, initOnly},
	"upgrade":        {tfBool, initOnly},
	"reconfigure":    {tfBool, initOnly},
	"lockfile":       {tfValue, initOnly},
}

// Why a known flag is refused everywhere.
const (
	whyAtollSets = "Atoll sets %s itself; arguments cannot change or repeat it"
	whyDir       = "%s would run Terraform in another directory than the project's"
	whyState     = "%s would move Terraform's state away from the backend Atoll plans and applies against"
	whyWrites    = "%s would make Terraform write files where the arguments say, outside the job's working directory"
	whyReads     = "%s would make Terraform read configuration or plugins from outside the checkout"
	whyJSON      = "%s changes Terraform's output into JSON, which Atoll does not read back"
	whySensitive = "%s would print sensitive values into the job log and the pull request"
	whyCLI       = "%s is read by Terraform's command line before the command runs, and would run something else"
)

// refusedTFFlags are flags Terraform or OpenTofu define that arguments may
// never carry, with the reason given in the reply.
var refusedTFFlags = map[string]string{
	"out":                    whyAtollSets,
	"input":                  whyAtollSets,
	"no-color":               whyAtollSets,
	"detailed-exitcode":      whyAtollSets,
	"chdir":                  whyDir,
	"lock":                   whyAtollSets,
	"auto-approve":           whyAtollSets,
	"state":                  whyState,
	"state-out":              whyState,
	"backup":                 whyState,
	"migrate-state":          whyState,
	"force-copy":             whyState,
	"generate-config-out":    whyWrites,
	"json-into":              whyWrites, // OpenTofu
	"from-module":            whyWrites,
	"install-autocomplete":   whyWrites,
	"uninstall-autocomplete": whyWrites,
	"plugin-dir":             whyReads,
	"config":                 whyReads, // import's configuration directory
	"target-file":            whyReads, // OpenTofu; -target says the same inline
	"exclude-file":           whyReads, // OpenTofu; -exclude says the same inline
	"json":                   whyJSON,
	"show-sensitive":         whySensitive, // OpenTofu
	"h":                      whyCLI,
	"help":                   whyCLI,
	"v":                      whyCLI,
	"version":                whyCLI,
}

// argIssue is why a list of Terraform arguments is refused: the message
// alone, without usage, so that comments and atlantis.yaml errors can each
// frame it.
type argIssue string

// CheckTerraformArgs checks args, the extra_args of a workflow step from a
// repository's atlantis.yaml, for step ("init", "plan", "apply", "import"
// or "state_rm"). It returns an EINVALID error saying what is refused and
// why, or nil. Steps of other kinds take no Terraform arguments and pass.
func (p Parser) CheckTerraformArgs(step ArgStep, args []string) error {
	if !slices.Contains(allSteps, step) {
		return nil
	}
	if issue := p.terraformArgsIssue(step, args); issue != "" {
		return atoll.Errorf(atoll.EINVALID, "%s extra_args: %s.", step, issue)
	}
	return nil
}

// commentStep is the Terraform command a comment's words after "--" reach.
func commentStep(name string) ArgStep {
	if name == State {
		return "state_rm"
	}
	return name
}

// terraformArgsIssue walks args as Go's flag package would and explains the
// first word that is refused, or returns "".
func (p Parser) terraformArgsIssue(step ArgStep, args []string) argIssue {
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if msg := checkText(arg); msg != "" {
			return issuef("argument %s %s", quote(arg), msg)
		}
		if arg == "--" {
			return issuef(`a second "--" would end Terraform's flags, and Terraform would read the words after it as paths`)
		}
		name, value, hasValue, isFlag := splitFlag(arg)
		if !isFlag {
			return issuef("%s is not a flag: Terraform would read it as a path (give values as -name=value)", quote(arg))
		}
		if flag := p.blockedFlag(arg); flag != "" {
			return issuef("terraform flag %s is not allowed on this server", quote(flag))
		}
		if name == "" || name[0] == '-' || name[0] == '=' {
			return issuef("%s is not a flag Terraform can read", quote(arg))
		}
		spelt := "-" + name
		f, ok := allowedTFFlags[name]
		if !ok {
			return p.unlistedFlag(step, name)
		}
		if !slices.Contains(f.steps, step) {
			return issuef("%s is not a flag of terraform %s that Atoll passes on (it may pass: %s)", spelt, stepCommand(step), allowedList(step))
		}
		if f.kind == tfBool {
			if hasValue {
				if _, err := strconv.ParseBool(value); err != nil {
					return issuef("%s takes true or false, got %s", spelt, quote(value))
				}
			}
			continue
		}
		if !hasValue {
			// Go's flag package takes the next word whatever it is; a word
			// that looks like a flag is far more likely a forgotten value.
			if i+1 >= len(args) || strings.HasPrefix(args[i+1], "-") {
				return issuef("%s needs a value (write %s=VALUE)", spelt, spelt)
			}
			i++
			value = args[i]
			if msg := checkText(value); msg != "" {
				return issuef("argument %s %s", quote(value), msg)
			}
		}
		if issue := p.checkTFValue(f.kind, spelt, value); issue != "" {
			return issue
		}
	}
	return ""
}

// unlistedFlag explains a flag that is not on the allowlist: a known flag
// with its reason, a known flag in another case, or an unknown flag.
func (p Parser) unlistedFlag(step ArgStep, name string) argIssue {
	lower := strings.ToLower(name)
	if why, ok := refusedTFFlags[lower]; ok {
		return issuef(why, "-"+lower)
	}
	if _, ok := allowedTFFlags[lower]; ok {
		return issuef("%s: Terraform's flags are lower case (write -%s)", quote("-"+name), lower)
	}
	return issuef("%s is not a flag of terraform %s that Atoll passes on (it may pass: %s)", quote("-"+name), stepCommand(step), allowedList(step))
}

// checkTFValue checks the value of a flag that takes one.
func (p Parser) checkTFValue(kind tfArgKind, spelt, value string) argIssue {
	if value == "" {
		return issuef("%s needs a value", spelt)
	}
	path := value
	switch kind {
	case tfValue:
		return ""
	case tfBackendConfig:
		if strings.Contains(value, "=") {
			return "" // key=value, not a file
		}
	}
	if !p.varFileAllowed(path) {
		return issuef("%s %s is not allowed: name a file inside the repository%s", spelt, quote(path), p.varFileDirs())
	}
	return ""
}

// stepCommand names the Terraform command of a step.
func stepCommand(step ArgStep) string {
	if step == "state_rm" {
		return "state rm"
	}
	return step
}

// allowedList is the flags step may carry, for replies.
func allowedList(step ArgStep) string {
	var names []string
	for name, f := range allowedTFFlags {
		if slices.Contains(f.steps, step) {
			names = append(names, "-"+name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

func issuef(format string, args ...any) argIssue {
	return argIssue(fmt.Sprintf(format, args...))
}

// VarFiles returns the paths that -var-file arguments among args name, read
// as Terraform reads them ("-var-file=X", "-var-file X", one or two
// dashes), so that the runner can check where each resolves once the
// checkout exists: a path inside the repository may be a symbolic link.
func VarFiles(args []string) []string {
	var paths []string
	for i := 0; i < len(args); i++ {
		name, value, hasValue, isFlag := splitFlag(args[i])
		f, ok := allowedTFFlags[name]
		if !isFlag || !ok || f.kind == tfBool {
			continue
		}
		if !hasValue && i+1 < len(args) {
			i++
			value = args[i]
		}
		if name == "var-file" {
			paths = append(paths, value)
		}
	}
	return paths
}

// splitFlag reads arg as Go's flag package does: a flag is a word of two
// or more characters starting with "-" (or "--"), and its value follows
// "=" when given inline.
func splitFlag(arg string) (name, value string, hasValue, isFlag bool) {
	if len(arg) < 2 || arg[0] != '-' {
		return "", "", false, false
	}
	name, value, hasValue = strings.Cut(strings.TrimPrefix(arg[1:], "-"), "=")
	return name, value, hasValue, true
}
