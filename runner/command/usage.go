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

// CommandUsage returns the usage of one command as Markdown, or the general
// usage when name is not a command.
func (p Parser) CommandUsage(name string) string { return fence(p.usageText(name)) }

// usageText is the plain text of CommandUsage.
func (p Parser) usageText(name string) string {
	switch name {
	case Plan, Apply:
		return p.planApplyUsage(name)
	case Unlock:
		return p.render(`Usage of unlock:
  {{exe}} unlock

Releases every lock this pull request holds and discards its plans.
It takes no flags or arguments.
`)
	case Version:
		return p.render(`Usage of version:
  {{exe}} version

Prints version information. It takes no flags or arguments.
`)
	case Help:
		return p.render(`Usage of help:
  {{exe}} help

Shows the list of commands. It takes no flags or arguments.
`)
	}
	return p.generalUsage()
}

func (p Parser) generalUsage() string {
	return p.render(`{{exe}}: Terraform pull request automation

Usage:
  {{exe}} <command> [flags] [-- terraform-args...]

Commands:
  plan     Run terraform plan for the projects this pull request changes.
           Use -d, -w or -p to plan a single project.
  apply    Apply the plans of this pull request that are not applied yet.
           Use -d, -w or -p to apply a single project.
  unlock   Release this pull request's locks and discard its plans.
  version  Print version information.
  help     Show this text.

Examples:
  # plan the root directory, passing -target to terraform
  {{exe}} plan -d . -- -target=aws_instance.web

  # apply every pending plan
  {{exe}} apply

  # apply only the staging workspace of the root directory
  {{exe}} apply -d . -w staging

Run "{{exe}} <command> --help" to see a command's flags.
`)
}

func (p Parser) planApplyUsage(name string) string {
	what := "Runs terraform plan for the projects this pull request changes,\nor only for those the flags select."
	if name == Apply {
		what = "Applies the pending plans of this pull request, or only those\nthe flags select."
	}
	text := `Usage of {{name}}:
  {{exe}} {{name}} [flags] [-- terraform-args...]

{{what}}

Flags:
  -d, --dir string         Only this directory, relative to the repository
                           root, e.g. 'child/dir'; '.' is the root.
  -w, --workspace string   Only this Terraform workspace.
  -p, --project string     Only the project with this name in the repo
                           config. Cannot be combined with -d or -w.
      --verbose            Append Atoll's log to the reply.
  -h, --help               Show this text.

Words after "--" are passed to terraform {{name}}, e.g.
  {{exe}} {{name}} -d . -- -var 'env=staging'
`
	return p.render(strings.NewReplacer("{{name}}", name, "{{what}}", what).Replace(text))
}

// render fills in the executable name, so usage matches what users type.
func (p Parser) render(text string) string {
	return strings.ReplaceAll(text, "{{exe}}", p.executable())
}
