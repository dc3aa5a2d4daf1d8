package command

import "strings"

// fence wraps plain text in a Markdown code block so that VCS renderers keep
// its layout and do not interpret any of it.
func fence(text string) string {
	return "```\n" + text + "```"
}

// Usage returns the general help text as Markdown; it is the reply to the
// help command.
func (p Parser) Usage() string { return fence(p.generalUsage()) }

// HelpReply is the reply to a help command: the general usage, after a
// note naming the words that followed help, which are ignored as in
// Atlantis.
func (p Parser) HelpReply(cmd *Command) string {
	if cmd == nil || len(cmd.Args) == 0 {
		return p.Usage()
	}
	return fence("Words after help are ignored: " + quote(strings.Join(cmd.Args, " ")) + ".\n\n" + p.generalUsage())
}

// CommandUsage returns the usage of one command as Markdown, or the general
// usage when name is not a command.
func (p Parser) CommandUsage(name string) string { return fence(p.usageText(name)) }

// usageText is the plain text of CommandUsage.
func (p Parser) usageText(name string) string {
	switch name {
	case Unlock:
		return p.render(`Usage of unlock:
  {{exe}} unlock

Releases every lock this pull request holds and discards its plans.
It takes no flags or arguments.
`)
	case Cancel:
		return p.render(`Usage of cancel:
  {{exe}} cancel

Cancels this pull request's queued commands and interrupts a running
plan. A running apply is never interrupted.
It takes no flags or arguments.
`)
	case Help:
		return p.generalUsage()
	}
	if _, ok := commandFlags[name]; ok {
		return p.flagsUsage(name)
	}
	return p.generalUsage()
}

// commandLines are the lines of the general usage, by command.
var commandLines = map[string]string{
	Plan: `  plan     Run terraform plan for the projects this pull request changes.
           Use -d, -w or -p to plan a single project.`,
	Apply: `  apply    Apply the plans of this pull request that are not applied yet.
           Use -d, -w or -p to apply a single project.`,
	Cancel: `  cancel   Cancel this pull request's queued commands and a running plan.
           A running apply is never interrupted.`,
	Unlock: `  unlock   Release this pull request's locks and discard its plans.`,
	ApprovePolicies: `  approve_policies
           Approve the pull request's policy check failures.`,
	Version: `  version  Print the Terraform version of each project.`,
	Import: `  import ADDRESS ID
           Run terraform import for the resource at ADDRESS.
           Use -d, -w or -p to choose the project.`,
	State: `  state rm ADDRESS...
           Run terraform state rm for the resources at ADDRESS.
           Use -d, -w or -p to choose the project.`,
}

func (p Parser) generalUsage() string {
	var b strings.Builder
	b.WriteString(`{{exe}}: Terraform pull request automation

Usage:
  {{exe}} <command> [flags] [-- terraform-args...]

Commands:
`)
	for _, n := range AllCommands {
		if p.Allowed(n) {
			b.WriteString(commandLines[n] + "\n")
		}
	}
	b.WriteString("  help     Show this text.\n")
	var ex []string
	if p.Allowed(Plan) {
		ex = append(ex, "  # plan the root directory, passing -target to terraform\n  {{exe}} plan -d . -- -target=aws_instance.web\n")
	}
	if p.Allowed(Apply) {
		ex = append(ex, "  # apply every pending plan\n  {{exe}} apply\n",
			"  # apply only the staging workspace of the root directory\n  {{exe}} apply -d . -w staging\n")
	}
	if len(ex) > 0 {
		b.WriteString("\nExamples:\n" + strings.Join(ex, "\n"))
	}
	b.WriteString("\nRun \"{{exe}} <command> --help\" to see a command's flags.\n")
	return p.render(b.String())
}

// what describes each command with flags in its usage.
var what = map[string]string{
	Plan:            "Runs terraform plan for the projects this pull request changes,\nor only for those the flags select.",
	Apply:           "Applies the pending plans of this pull request, or only those\nthe flags select.",
	ApprovePolicies: "Approves the policy check failures of this pull request, or only\nthose of the projects the flags select.",
	Version:         "Prints the Terraform version of each project of this pull request,\nor only of those the flags select.",
	Import:          "Runs terraform import ADDRESS ID in the project the flags select.",
	State:           "Runs terraform state rm ADDRESS... in the project the flags select.",
}

// flagLines are the usage lines of each flag.
var flagLines = map[string]string{
	"dir": `  -d, --dir string         Only this directory, relative to the repository
                           root, e.g. 'child/dir'; '.' is the root.`,
	"workspace": `  -w, --workspace string   Only this Terraform workspace.`,
	"project": `  -p, --project string     Only the project with this name in the repo
                           config. Cannot be combined with -d or -w.`,
	"auto-merge-disabled": `      --auto-merge-disabled
                           Do not automerge after this apply.`,
	"auto-merge-method": `      --auto-merge-method string
                           How to automerge: merge, rebase or squash.`,
	"policy-set": `      --policy-set string  Only this policy set.`,
	"clear-policy-approval": `      --clear-policy-approval
                           Clear existing policy approvals.`,
	"verbose": `      --verbose            Append Atoll's log to the reply.`,
	"help":    `  -h, --help               Show this text.`,
}

func (p Parser) flagsUsage(name string) string {
	var b strings.Builder
	tail := " [flags] [-- terraform-args...]"
	if name == Version || name == ApprovePolicies {
		tail = " [flags]"
	}
	b.WriteString("Usage of " + usageLine(name) + ":\n  {{exe}} " + usageLine(name) + tail + "\n\n")
	b.WriteString(what[name] + "\n\nFlags:\n")
	for _, f := range commandFlags[name] {
		b.WriteString(flagLines[f.long] + "\n")
	}
	if name != Version && name != ApprovePolicies {
		b.WriteString(extraArgsUsage(name))
	}
	return p.render(b.String())
}

// render fills in the executable name, so usage matches what users type.
func (p Parser) render(text string) string {
	return strings.ReplaceAll(text, "{{exe}}", p.executable())
}

// extraArgsUsage tells which Terraform flags may follow "--" (the
// allowlist in tfargs.go), with an example.
func extraArgsUsage(name string) string {
	example := map[string]string{
		Plan:   "plan -d . -- -var 'env=staging' -target=module.vpc",
		Apply:  "apply -d . -- -parallelism=5",
		Import: "import ADDRESS ID -d . -- -var 'env=staging'",
		State:  "state rm ADDRESS -d . -- -dry-run",
	}[name]
	var b strings.Builder
	b.WriteString("\nFlags after \"--\" go to terraform " + stepCommand(commentStep(name)) + "; these are allowed:\n")
	line := " "
	for _, f := range strings.Split(allowedList(commentStep(name)), ", ") {
		if len(line)+len(f) > 70 {
			b.WriteString(line + "\n")
			line = " "
		}
		line += " " + f
	}
	b.WriteString(line + "\ne.g.\n  {{exe}} " + example + "\n")
	return b.String()
}
