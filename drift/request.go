package drift

import (
	"slices"
	"strings"
)

// PathSelector names one project by directory, and optionally workspace.
type PathSelector struct {
	Directory string `json:"directory"`
	Workspace string `json:"workspace"`
}

// DetectRequest is the body of POST /api/drift/detect. Projects and Paths
// are alternative selectors; with neither, every project is checked (a
// "full" detection, the only kind that may forget stale records).
type DetectRequest struct {
	Repository        string         `json:"repository"`
	Ref               string         `json:"ref"`
	BaseBranch        string         `json:"base_branch"`
	Type              string         `json:"type"`
	Projects          []string       `json:"projects"`
	Paths             []PathSelector `json:"paths"`
	IncludePlanOutput bool           `json:"include_plan_output"`
}

// RemediateRequest is the body of POST /api/drift/remediate. Unlike
// detection, Projects and Paths may be combined, and Workspaces narrows
// (or, for paths without their own workspace, supplies) the workspaces.
type RemediateRequest struct {
	Repository string         `json:"repository"`
	Ref        string         `json:"ref"`
	BaseBranch string         `json:"base_branch"`
	Type       string         `json:"type"`
	Action     string         `json:"action"`
	Projects   []string       `json:"projects"`
	Paths      []PathSelector `json:"paths"`
	Workspaces []string       `json:"workspaces"`
	DriftOnly  bool           `json:"drift_only"`
}

// The remediation actions; an empty action means ActionPlan.
const (
	ActionPlan  = "plan"
	ActionApply = "apply"
)

// FieldError is one invalid field of a request, as the API lists them in a
// validation error's details.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// The field error messages, worded as Atlantis words them: clients may
// show or match them.
const (
	MsgRepositoryRequired = "repository is required"
	MsgRefRequired        = "ref is required"
	MsgRefInvalid         = "ref is invalid"
	MsgBaseBranchRequired = "base_branch is required when ref is a commit SHA, tag, or ambiguous bare ref"
	MsgBaseBranchInvalid  = "base_branch is invalid"
	MsgTypeRequired       = "type is required"
	MsgTypeUnsupported    = "type must be one of: " + supportedTypesList
	MsgRepositoryShape    = "repository must be a valid repository path for the VCS type"
	MsgSelectorsExclusive = "projects and paths cannot both be set"
	MsgProjectEmpty       = "project names cannot be empty"
	MsgProjectNotExact    = "project names must be exact; use paths to target multiple projects"
	MsgPathDirectory      = "path directories must be clean repo-relative paths"
	MsgPathWorkspace      = "path workspaces are invalid"
	MsgPathWorkspaceNotIn = "path workspace must be included in workspaces"
	MsgWorkspacesInvalid  = "workspaces are invalid"
	MsgActionInvalid      = "action must be 'plan' or 'apply'"
)

// The request fields that field errors name, as spelled in the JSON.
const (
	fieldRepository = "repository"
	fieldRef        = "ref"
	fieldBaseBranch = "base_branch"
	fieldType       = "type"
	fieldProjects   = "projects"
	fieldPaths      = "paths"
	fieldWorkspaces = "workspaces"
	fieldAction     = "action"
)

// Validate returns every problem with the request, in the order the API
// lists them, so a client can fix them all in one round trip. It is nil
// for a valid request.
func (r DetectRequest) Validate() []FieldError {
	errs := validateScope(r.Repository, r.Ref, r.BaseBranch, r.Type)
	if len(r.Projects) > 0 && len(r.Paths) > 0 {
		errs = append(errs, FieldError{fieldPaths, MsgSelectorsExclusive})
	}
	for _, p := range r.Projects {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, FieldError{fieldProjects, MsgProjectEmpty})
			break
		}
	}
	for _, p := range r.Paths {
		if e, bad := checkPath(p, nil); bad {
			errs = append(errs, e)
			break
		}
	}
	return errs
}

// Validate returns every problem with the request, in the order the API
// lists them. Only the first bad project and the first bad path are
// reported, and one error covers all bad workspaces.
func (r RemediateRequest) Validate() []FieldError {
	errs := validateScope(r.Repository, r.Ref, r.BaseBranch, r.Type)
	if r.Action != "" && r.Action != ActionPlan && r.Action != ActionApply {
		errs = append(errs, FieldError{fieldAction, MsgActionInvalid})
	}
	for _, p := range r.Projects {
		if strings.TrimSpace(p) == "" {
			errs = append(errs, FieldError{fieldProjects, MsgProjectEmpty})
			break
		}
		if !ExactProjectName(p) {
			errs = append(errs, FieldError{fieldProjects, MsgProjectNotExact})
			break
		}
	}
	for _, p := range r.Paths {
		if e, bad := checkPath(p, r.Workspaces); bad {
			errs = append(errs, e)
			break
		}
	}
	for _, ws := range r.Workspaces {
		if !ValidWorkspace(ws) {
			errs = append(errs, FieldError{fieldWorkspaces, MsgWorkspacesInvalid})
			break
		}
	}
	return errs
}

// validateScope checks what detection and remediation share: which
// repository, on which VCS, at which ref and base branch.
//
// Emptiness is tested on the values as sent (a ref of spaces is not
// "required" but fails later checks, as in Atlantis), except that a base
// branch of spaces counts as missing when the ref needs one.
func validateScope(repository, ref, baseBranch, vcsType string) []FieldError {
	var errs []FieldError
	if repository == "" {
		errs = append(errs, FieldError{fieldRepository, MsgRepositoryRequired})
	}
	switch {
	case ref == "":
		errs = append(errs, FieldError{fieldRef, MsgRefRequired})
	case UnsafeRef(ref):
		errs = append(errs, FieldError{fieldRef, MsgRefInvalid})
	case NeedsBaseBranch(ref) && strings.TrimSpace(baseBranch) == "":
		errs = append(errs, FieldError{fieldBaseBranch, MsgBaseBranchRequired})
	}
	if baseBranch != "" {
		if _, ok := CheckBaseBranch(baseBranch); !ok {
			errs = append(errs, FieldError{fieldBaseBranch, MsgBaseBranchInvalid})
		}
	}
	switch {
	case vcsType == "":
		errs = append(errs, FieldError{fieldType, MsgTypeRequired})
	case !SupportedType(vcsType):
		errs = append(errs, FieldError{fieldType, MsgTypeUnsupported})
	case repository != "" && !ValidRepository(vcsType, repository):
		errs = append(errs, FieldError{fieldRepository, MsgRepositoryShape})
	}
	return errs
}

// checkPath returns the error for path selector p, if any. workspaces is
// remediation's top-level list; when it is non-empty a path's own
// workspace must be in it, or the two filters could never both match.
func checkPath(p PathSelector, workspaces []string) (FieldError, bool) {
	if _, ok := CleanPath(p.Directory); !ok {
		return FieldError{fieldPaths, MsgPathDirectory}, true
	}
	if p.Workspace == "" {
		return FieldError{}, false
	}
	if !ValidWorkspace(p.Workspace) {
		return FieldError{fieldPaths, MsgPathWorkspace}, true
	}
	if len(workspaces) > 0 && !slices.Contains(workspaces, p.Workspace) {
		return FieldError{fieldPaths, MsgPathWorkspaceNotIn}, true
	}
	return FieldError{}, false
}

// BaseBranchOrRef is the base branch a request's drift is keyed by: the
// normalized base_branch, or the normalized ref when none is given.
func BaseBranchOrRef(ref, baseBranch string) string {
	if b := NormalizeRef(baseBranch); b != "" {
		return b
	}
	return NormalizeRef(ref)
}

// Full reports whether the detection covers every project of the
// repository: only then may it forget records it did not see again.
func (r DetectRequest) Full() bool {
	return len(r.Projects) == 0 && len(r.Paths) == 0
}
