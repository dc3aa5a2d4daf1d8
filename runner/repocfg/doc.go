// Package repocfg reads a repository's atlantis.yaml and decides which
// Terraform projects a pull request touches.
//
// The file format is Atlantis's repo-level config, versions 2 and 3. Parsing
// is strict like Atlantis: unknown keys, wrong types and invalid values are
// errors, each reported with the file line of the offending node so that the
// message can be posted back on the pull request as is.
//
// Accepted but ignored (type-checked, then dropped, because Atoll has no
// matching feature yet): top-level delete_source_branch_on_merge,
// parallel_policy_check, abort_on_execution_order_fail and
// allowed_regexp_prefixes; project branch, execution_order_group,
// delete_source_branch_on_merge, repo_locking, repo_locks,
// custom_policy_check, terraform_distribution, depends_on,
// import_requirements, silence_pr_comments and policy_check. Workflow stages
// other than plan and apply (policy_check, import, state_rm) are parsed and
// kept but not run.
//
// Without a config (or with a config that lists no projects, as in Atlantis)
// projects are autodiscovered from the changed files; see Select.
package repocfg
