package drift

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

var sha40 = strings.Repeat("0123456789", 4)

// validDetect is a detect request that passes validation; each case
// changes one thing.
func validDetect() DetectRequest {
	return DetectRequest{Repository: "owner/repo", Ref: "main", Type: Github}
}

func validRemediate() RemediateRequest {
	return RemediateRequest{Repository: "owner/repo", Ref: "main", Type: Github}
}

// badScope are the changes to a request's repository, ref, base branch
// and type that Atlantis's alpha drift API (v0.47) refuses in both detect
// and remediate, with the field its first error names: its model tests'
// bad refs, base branches, types and repositories.
var badScope = []struct {
	name                          string
	repository, ref, base, vcsTyp string
	field                         string
}{
	{"no repository", "", "main", "", Github, "repository"},
	{"no ref", "owner/repo", "", "", Github, "ref"},
	{"no type", "owner/repo", "main", "", "", "type"},
	{"BitbucketCloud", "owner/repo", "main", "", BitbucketCloud, "type"},
	{"BitbucketServer", "owner/repo", "main", "", BitbucketServer, "type"},
	{"AzureDevops", "owner/repo", "main", "", AzureDevops, "type"},
	{"unknown type", "owner/repo", "main", "", "github", "type"},
	{"SHA without base", "owner/repo", sha40, "", Github, "base_branch"},
	{"tag without base", "owner/repo", "refs/tags/v1.0.0", "", Github, "base_branch"},
	{"prod tag without base", "owner/repo", "refs/tags/prod", "", Github, "base_branch"},
	{"bare version without base", "owner/repo", "v1.0.0", "", Github, "base_branch"},
	{"prod without base", "owner/repo", "prod", "", Github, "base_branch"},
	{"latest without base", "owner/repo", "latest", "", Github, "base_branch"},
	{"stable without base", "owner/repo", "stable", "", Github, "base_branch"},
	{"SHA with blank base", "owner/repo", sha40, "   ", Github, "base_branch"},
	{"ref refs/pull/123/head", "owner/repo", "refs/pull/123/head", "", Github, "ref"},
	{"ref refs/pull/123/merge", "owner/repo", "refs/pull/123/merge", "", Github, "ref"},
	{"ref pull/123/head", "owner/repo", "pull/123/head", "", Github, "ref"},
	{"ref pull/123/merge", "owner/repo", "pull/123/merge", "", Github, "ref"},
	{"ref +refs/pull/123/head", "owner/repo", "+refs/pull/123/head", "", Github, "ref"},
	{"ref refs/merge-requests/123/head", "owner/repo", "refs/merge-requests/123/head", "", Gitlab, "ref"},
	{"ref refs/merge-requests/123/merge", "owner/repo", "refs/merge-requests/123/merge", "", Gitlab, "ref"},
	{"ref merge-requests/123/head", "owner/repo", "merge-requests/123/head", "", Gitlab, "ref"},
	{"ref merge-requests/123/merge", "owner/repo", "merge-requests/123/merge", "", Gitlab, "ref"},
	{"ref +refs/merge-requests/123/head", "owner/repo", "+refs/merge-requests/123/head", "", Gitlab, "ref"},
	{"ref refspec", "owner/repo", "main:refs/tmp/main", "", Github, "ref"},
	{"ref option", "owner/repo", "--upload-pack=/tmp/x", "", Github, "ref"},
	{"base refs/pull/1/head", "owner/repo", "main", "refs/pull/1/head", Github, "base_branch"},
	{"base pull/1/head", "owner/repo", "main", "pull/1/head", Github, "base_branch"},
	{"base refs/merge-requests/1/head", "owner/repo", "main", "refs/merge-requests/1/head", Gitlab, "base_branch"},
	{"base refs/tags/prod", "owner/repo", "main", "refs/tags/prod", Github, "base_branch"},
	{"base -main", "owner/repo", "main", "-main", Github, "base_branch"},
	{"base option", "owner/repo", "main", "--upload-pack=/tmp/x", Github, "base_branch"},
	{"base foo:bar", "owner/repo", "main", "foo:bar", Github, "base_branch"},
	{"base blank", "owner/repo", "main", "   ", Github, "base_branch"},
	{"repository owner", "owner", "main", "", Github, "repository"},
	{"repository /repo", "/repo", "main", "", Github, "repository"},
	{"repository owner/", "owner/", "main", "", Github, "repository"},
	{"repository owner//repo", "owner//repo", "main", "", Github, "repository"},
	{"repository owner/../repo", "owner/../repo", "main", "", Github, "repository"},
	{"repository with a space", "owner repo/name", "main", "", Github, "repository"},
	{"repository with three segments on GitHub", "owner/repo/extra", "main", "", Github, "repository"},
}

// goodScope are the scopes the same tests accept: the three supported
// types, refs that need no base, and the refs above given a base.
var goodScope = []struct {
	name                          string
	repository, ref, base, vcsTyp string
}{
	{"Github", "owner/repo", "main", "", Github},
	{"Gitlab", "owner/repo", "main", "", Gitlab},
	{"Gitea", "owner/repo", "main", "", Gitea},
	{"GitLab subgroup", "group/subgroup/repo", "main", "", Gitlab},
	{"master", "owner/repo", "master", "", Github},
	{"develop", "owner/repo", "develop", "", Github},
	{"feature/foo", "owner/repo", "feature/foo", "", Github},
	{"release/2026-06", "owner/repo", "release/2026-06", "", Github},
	{"refs/heads/release/1.2", "owner/repo", "refs/heads/release/1.2", "", Github},
	{"refs/heads/feature/foo", "owner/repo", "refs/heads/feature/foo", "", Github},
	{"SHA with base", "owner/repo", sha40, "main", Github},
	{"tag with base", "owner/repo", "refs/tags/v1.0.0", "main", Github},
	{"prod tag with base", "owner/repo", "refs/tags/prod", "main", Github},
	{"bare version with base", "owner/repo", "v1.0.0", "main", Github},
	{"prod with base", "owner/repo", "prod", "main", Github},
	{"latest with base", "owner/repo", "latest", "main", Github},
	{"stable with base", "owner/repo", "stable", "main", Github},
	{"base release/1.2", "owner/repo", "v1.0.0", "release/1.2", Github},
	{"base refs/heads/main", "owner/repo", sha40, "refs/heads/main", Github},
}

func firstField(errs []FieldError) string {
	if len(errs) == 0 {
		return ""
	}
	return errs[0].Field
}

// TestDetectValidateScope: Atlantis's alpha drift API (v0.47) model tests
// name, for each bad detect request, the field of the first error; the
// good ones validate cleanly.
func TestDetectValidateScope(t *testing.T) {
	for _, tc := range badScope {
		r := DetectRequest{Repository: tc.repository, Ref: tc.ref, BaseBranch: tc.base, Type: tc.vcsTyp}
		if got := firstField(r.Validate()); got != tc.field {
			t.Errorf("%s: first error on %q, want %q (errors %v)", tc.name, got, tc.field, r.Validate())
		}
	}
	for _, tc := range goodScope {
		r := DetectRequest{Repository: tc.repository, Ref: tc.ref, BaseBranch: tc.base, Type: tc.vcsTyp}
		if errs := r.Validate(); errs != nil {
			t.Errorf("%s: %v, want no errors", tc.name, errs)
		}
	}
}

// TestRemediateValidateScope: Atlantis's alpha drift remediation (v0.47)
// applies the same repository, ref, base branch and type rules as
// detection.
func TestRemediateValidateScope(t *testing.T) {
	for _, tc := range badScope {
		r := RemediateRequest{Repository: tc.repository, Ref: tc.ref, BaseBranch: tc.base, Type: tc.vcsTyp}
		if got := firstField(r.Validate()); got != tc.field {
			t.Errorf("%s: first error on %q, want %q (errors %v)", tc.name, got, tc.field, r.Validate())
		}
	}
	for _, tc := range goodScope {
		r := RemediateRequest{Repository: tc.repository, Ref: tc.ref, BaseBranch: tc.base, Type: tc.vcsTyp}
		if errs := r.Validate(); errs != nil {
			t.Errorf("%s: %v, want no errors", tc.name, errs)
		}
	}
}

// TestUnsupportedTypeMessage: Atlantis's alpha drift API (v0.47) tells a
// client with an unsupported type which types it may use.
func TestUnsupportedTypeMessage(t *testing.T) {
	for _, typ := range []string{BitbucketCloud, BitbucketServer, AzureDevops} {
		r := validDetect()
		r.Type = typ
		errs := r.Validate()
		if len(errs) != 1 || errs[0].Field != "type" || !strings.Contains(errs[0].Message, "Github, Gitlab, Gitea") {
			t.Errorf("type %s: %v, want one type error naming Github, Gitlab, Gitea", typ, errs)
		}
	}
}

// TestDetectValidateSelectors: Atlantis's alpha drift API (v0.47) model
// tests refuse blank project names, bad or glob path directories, bad
// path workspaces and the two selectors together, naming the field.
func TestDetectValidateSelectors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		projects []string
		paths    []PathSelector
		field    string
	}{
		{"empty project", []string{""}, nil, "projects"},
		{"blank project", []string{"   "}, nil, "projects"},
		{"empty directory", nil, []PathSelector{{Directory: ""}}, "paths"},
		{"blank directory", nil, []PathSelector{{Directory: "   "}}, "paths"},
		{"directory ../env", nil, []PathSelector{{Directory: "../env"}}, "paths"},
		{"directory /env", nil, []PathSelector{{Directory: "/env"}}, "paths"},
		{"glob envs/*", nil, []PathSelector{{Directory: "envs/*"}}, "paths"},
		{"glob envs/pro?", nil, []PathSelector{{Directory: "envs/pro?"}}, "paths"},
		{"glob envs/[prod]", nil, []PathSelector{{Directory: "envs/[prod]"}}, "paths"},
		{"glob envs/{prod}", nil, []PathSelector{{Directory: "envs/{prod}"}}, "paths"},
		{"workspace ../../tmp/plan", nil, []PathSelector{{Directory: "app", Workspace: "../../tmp/plan"}}, "paths"},
		{"workspace prod/stage", nil, []PathSelector{{Directory: "app", Workspace: "prod/stage"}}, "paths"},
		{"workspace ..", nil, []PathSelector{{Directory: "app", Workspace: ".."}}, "paths"},
		{"workspace .", nil, []PathSelector{{Directory: "app", Workspace: "."}}, "paths"},
		{"workspace leading space", nil, []PathSelector{{Directory: "app", Workspace: " prod"}}, "paths"},
		{"workspace trailing space", nil, []PathSelector{{Directory: "app", Workspace: "prod "}}, "paths"},
		{"both selectors", []string{"app"}, []PathSelector{{Directory: "app"}}, "paths"},
		{"valid projects", []string{"app", "app-.*"}, nil, ""},
		{"valid path", nil, []PathSelector{{Directory: "./modules/app/", Workspace: "staging"}}, ""},
		{"valid path without workspace", nil, []PathSelector{{Directory: "."}}, ""},
		{"valid workspaces", nil, []PathSelector{{"a", "default"}, {"b", "prod"}, {"c", "dev-us-east-1"}}, ""},
	} {
		r := validDetect()
		r.Projects, r.Paths = tc.projects, tc.paths
		if got := firstField(r.Validate()); got != tc.field {
			t.Errorf("%s: first error on %q, want %q (errors %v)", tc.name, got, tc.field, r.Validate())
		}
	}
}

// TestRemediateValidateSelectors: Atlantis's alpha drift remediation
// (v0.47) model tests: exact project names only (dots allowed), bad
// workspaces refused in paths and at the top level, and a path's
// workspace must be among the top-level workspaces when those are given.
// Unlike detection, projects and paths may be combined.
func TestRemediateValidateSelectors(t *testing.T) {
	for _, tc := range []struct {
		name       string
		action     string
		projects   []string
		paths      []PathSelector
		workspaces []string
		field      string
	}{
		{"empty project", "", []string{""}, nil, nil, "projects"},
		{"regex app-.*", "", []string{"app-.*"}, nil, nil, "projects"},
		{"regex ^app$", "", []string{"^app$"}, nil, nil, "projects"},
		{"regex app[0-9]", "", []string{"app[0-9]"}, nil, nil, "projects"},
		{"regex app|db", "", []string{"app|db"}, nil, nil, "projects"},
		{"dotted name", "", []string{"app.prod"}, nil, nil, ""},
		{"glob envs/*", "", nil, []PathSelector{{Directory: "envs/*"}}, nil, "paths"},
		{"glob envs/pro?", "", nil, []PathSelector{{Directory: "envs/pro?"}}, nil, "paths"},
		{"glob envs/[prod]", "", nil, []PathSelector{{Directory: "envs/[prod]"}}, nil, "paths"},
		{"glob envs/{prod}", "", nil, []PathSelector{{Directory: "envs/{prod}"}}, nil, "paths"},
		{"directory ../env", "", nil, []PathSelector{{Directory: "../env"}}, nil, "paths"},
		{"path workspace ../../tmp/plan", "", nil, []PathSelector{{"app", "../../tmp/plan"}}, nil, "paths"},
		{"path workspace prod/stage", "", nil, []PathSelector{{"app", "prod/stage"}}, nil, "paths"},
		{"path workspace ..", "", nil, []PathSelector{{"app", ".."}}, nil, "paths"},
		{"path workspace .", "", nil, []PathSelector{{"app", "."}}, nil, "paths"},
		{"path workspace leading space", "", nil, []PathSelector{{"app", " prod"}}, nil, "paths"},
		{"path workspace trailing space", "", nil, []PathSelector{{"app", "prod "}}, nil, "paths"},
		{"workspaces ../../tmp/plan", "", nil, nil, []string{"../../tmp/plan"}, "workspaces"},
		{"workspaces prod/stage", "", nil, nil, []string{"prod/stage"}, "workspaces"},
		{"workspaces ..", "", nil, nil, []string{".."}, "workspaces"},
		{"workspaces .", "", nil, nil, []string{"."}, "workspaces"},
		{"workspaces leading space", "", nil, nil, []string{" prod"}, "workspaces"},
		{"workspaces trailing space", "", nil, nil, []string{"prod "}, "workspaces"},
		{"workspaces empty entry", "", nil, nil, []string{""}, "workspaces"},
		{"path workspace in workspaces", "", nil, []PathSelector{{"app", "prod"}}, []string{"prod"}, ""},
		{"path workspace not in workspaces", "", nil, []PathSelector{{"app", "dev"}}, []string{"prod"}, "paths"},
		{"path without workspace and workspaces", "", nil, []PathSelector{{"app", ""}}, []string{"prod"}, ""},
		{"projects and paths together", "", []string{"app"}, []PathSelector{{"app", ""}}, nil, ""},
		{"action plan", "plan", nil, nil, nil, ""},
		{"action apply", "apply", nil, nil, nil, ""},
		{"action empty", "", nil, nil, nil, ""},
		{"action destroy", "destroy", nil, nil, nil, "action"},
		{"action Apply", "Apply", nil, nil, nil, "action"},
	} {
		r := validRemediate()
		r.Action, r.Projects, r.Paths, r.Workspaces = tc.action, tc.projects, tc.paths, tc.workspaces
		if got := firstField(r.Validate()); got != tc.field {
			t.Errorf("%s: first error on %q, want %q (errors %v)", tc.name, got, tc.field, r.Validate())
		}
	}
}

// TestValidateAllErrorsInOrder: Atlantis's alpha drift API (v0.47)
// returns every field error at once, in a fixed order, with fixed
// messages; only the first bad project and first bad path are reported.
func TestValidateAllErrorsInOrder(t *testing.T) {
	detect := []struct {
		name string
		req  DetectRequest
		want []FieldError
	}{
		{"everything wrong", DetectRequest{
			Ref:        "refs/pull/1/head",
			BaseBranch: "foo:bar",
			Projects:   []string{" ", ""},
			Paths:      []PathSelector{{Directory: "../x"}, {Directory: "a", Workspace: ".."}},
		}, []FieldError{
			{"repository", "repository is required"},
			{"ref", "ref is invalid"},
			{"base_branch", "base_branch is invalid"},
			{"type", "type is required"},
			{"paths", "projects and paths cannot both be set"},
			{"projects", "project names cannot be empty"},
			{"paths", "path directories must be clean repo-relative paths"},
		}},
		{"missing ref", DetectRequest{Repository: "owner/repo", Type: Github}, []FieldError{
			{"ref", "ref is required"},
		}},
		{"SHA without base", DetectRequest{Repository: "owner/repo", Ref: sha40, Type: Gitlab}, []FieldError{
			{"base_branch", "base_branch is required when ref is a commit SHA, tag, or ambiguous bare ref"},
		}},
		{"SHA with blank base", DetectRequest{Repository: "owner/repo", Ref: sha40, BaseBranch: " ", Type: Gitlab}, []FieldError{
			{"base_branch", "base_branch is required when ref is a commit SHA, tag, or ambiguous bare ref"},
			{"base_branch", "base_branch is invalid"},
		}},
		{"unsupported type hides the repository shape", DetectRequest{Repository: "owner", Ref: "main", Type: AzureDevops}, []FieldError{
			{"type", "type must be one of: Github, Gitlab, Gitea"},
		}},
		{"repository shape", DetectRequest{Repository: "owner", Ref: "main", Type: Github}, []FieldError{
			{"repository", "repository must be a valid repository path for the VCS type"},
		}},
		{"no type, no shape check", DetectRequest{Repository: "owner", Ref: "main"}, []FieldError{
			{"type", "type is required"},
		}},
		{"second path is the bad one", DetectRequest{Repository: "owner/repo", Ref: "main", Type: Github,
			Paths: []PathSelector{{Directory: "ok"}, {Directory: "a", Workspace: "a/b"}, {Directory: "/x"}}}, []FieldError{
			{"paths", "path workspaces are invalid"},
		}},
	}
	for _, tc := range detect {
		if got := tc.req.Validate(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("detect %s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
	remediate := []struct {
		name string
		req  RemediateRequest
		want []FieldError
	}{
		{"everything wrong", RemediateRequest{
			Repository: "owner/repo/extra",
			Ref:        "prod",
			Type:       Github,
			Action:     "destroy",
			Projects:   []string{"app|db", ""},
			Paths:      []PathSelector{{Directory: "a", Workspace: "dev"}},
			Workspaces: []string{"prod", "a/b", ".."},
		}, []FieldError{
			{"base_branch", "base_branch is required when ref is a commit SHA, tag, or ambiguous bare ref"},
			{"repository", "repository must be a valid repository path for the VCS type"},
			{"action", "action must be 'plan' or 'apply'"},
			{"projects", "project names must be exact; use paths to target multiple projects"},
			{"paths", "path workspace must be included in workspaces"},
			{"workspaces", "workspaces are invalid"},
		}},
		{"blank project first", RemediateRequest{Repository: "owner/repo", Ref: "main", Type: Gitea,
			Projects: []string{" ", "a*"}}, []FieldError{
			{"projects", "project names cannot be empty"},
		}},
		{"bad path directory", RemediateRequest{Repository: "owner/repo", Ref: "main", Type: Gitea,
			Paths: []PathSelector{{Directory: "envs/*", Workspace: "x/y"}}}, []FieldError{
			{"paths", "path directories must be clean repo-relative paths"},
		}},
	}
	for _, tc := range remediate {
		if got := tc.req.Validate(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("remediate %s:\n got %v\nwant %v", tc.name, got, tc.want)
		}
	}
}

// TestRequestJSON: Atlantis's alpha drift API (v0.47) reads these field
// names from the request bodies and ignores fields it does not know.
func TestRequestJSON(t *testing.T) {
	var d DetectRequest
	body := `{"repository":"Repo","ref":"main","base_branch":"b","type":"Gitlab","projects":["default"],
		"paths":[{"directory":"./modules/app/","workspace":"staging"}],"include_plan_output":true,"unknown":1}`
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		t.Fatal(err)
	}
	want := DetectRequest{Repository: "Repo", Ref: "main", BaseBranch: "b", Type: Gitlab, Projects: []string{"default"},
		Paths: []PathSelector{{"./modules/app/", "staging"}}, IncludePlanOutput: true}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("detect decoded as %+v, want %+v", d, want)
	}
	var r RemediateRequest
	body = `{"repository":"owner/repo","ref":"refs/heads/main","base_branch":"main","type":"Github","action":"apply",
		"projects":["app.prod"],"paths":[{"directory":"app"}],"workspaces":["prod"],"drift_only":true,"extra":"x"}`
	if err := json.Unmarshal([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	wantR := RemediateRequest{Repository: "owner/repo", Ref: "refs/heads/main", BaseBranch: "main", Type: Github,
		Action: ActionApply, Projects: []string{"app.prod"}, Paths: []PathSelector{{Directory: "app"}},
		Workspaces: []string{"prod"}, DriftOnly: true}
	if !reflect.DeepEqual(r, wantR) {
		t.Errorf("remediate decoded as %+v, want %+v", r, wantR)
	}
}

// TestBaseBranchOrRef: Atlantis's alpha drift API (v0.47) keys drift by
// the normalized base_branch, or by the normalized ref when none is
// given; refs/heads/main as ref gives base main.
func TestBaseBranchOrRef(t *testing.T) {
	for _, tc := range []struct{ ref, base, want string }{
		{"refs/heads/main", "", "main"},
		{"main", "", "main"},
		{sha40, "main", "main"},
		{"v1.0.0", "refs/heads/release", "release"},
		{"dev", "  ", "dev"},
	} {
		if got := BaseBranchOrRef(tc.ref, tc.base); got != tc.want {
			t.Errorf("BaseBranchOrRef(%q, %q) = %q, want %q", tc.ref, tc.base, got, tc.want)
		}
	}
}

// TestFull: in Atlantis's alpha drift API (v0.47) a detection with no
// selectors covers every project.
func TestFull(t *testing.T) {
	for _, tc := range []struct {
		req  DetectRequest
		full bool
	}{
		{DetectRequest{}, true},
		{DetectRequest{Projects: []string{"a"}}, false},
		{DetectRequest{Paths: []PathSelector{{Directory: "a"}}}, false},
	} {
		if got := tc.req.Full(); got != tc.full {
			t.Errorf("%+v.Full() = %v, want %v", tc.req, got, tc.full)
		}
	}
}
