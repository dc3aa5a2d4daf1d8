// Package repocfg reads a repository's atlantis.yaml and decides which
// Terraform projects a pull request touches.
//
// The file format is Atlantis's repo-level config, versions 2 and 3, with
// every key Atlantis v0.47 accepts. Parsing is strict like Atlantis: unknown
// keys, wrong types and the values Atlantis rejects are errors, each
// reported with the file line of the offending node so that the message can
// be posted back on the pull request as is. Beyond Atlantis, Atoll also
// rejects a depends_on that names no project or forms a cycle, glob and
// regular-expression values that do not compile, env steps without exactly
// one of value and command, and run output options other than Atlantis's.
// Unlike Atlantis, terraform_version may also be a constraint ("~> 1.5").
// One key is Atoll's own: execution_pool, the pool whose workers run a
// project's jobs, set per repository in the server-side repo config and
// per project where allowed_overrides lists it (never at the top level).
//
// Keys Atoll has no feature for are checked like the others and then
// reported in Config.Warnings, one message with its line per key whose value
// asks for something Atoll does not do (a value Atoll behaves as anyway,
// such as repo_locks mode on_plan, gives none): top-level
// allowed_regexp_prefixes, emoji_reaction and policies; project
// policy_check and terraform_distribution. The policy_check workflow
// stage is parsed and kept; the runner runs it (policyworkflow.go).
//
// A project dir with a glob pattern stands for every directory of the
// checkout it matches that holds Terraform files; Load expands it, Parse
// (which has no checkout) keeps it as written. As in Atlantis, such an
// entry's name is dropped (with a warning): its projects cannot share it.
//
// Without a config (or with a config that lists no projects, as in Atlantis)
// projects are autodiscovered from the changed files; see Select.
package repocfg
