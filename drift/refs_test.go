package drift

import (
	"strings"
	"testing"
)

// TestUnsafeRef: Atlantis's alpha drift API (v0.47) refuses the first
// group of refs outright, before any checkout; the second group are
// ordinary refs it lets through.
func TestUnsafeRef(t *testing.T) {
	for _, tc := range []struct {
		ref    string
		unsafe bool
	}{
		// Refused by Atlantis's tests.
		{"refs/pull/123/head", true},
		{"refs/pull/123/merge", true},
		{"pull/123/head", true},
		{"pull/123/merge", true},
		{"+refs/pull/123/head", true},
		{"refs/merge-requests/123/head", true},
		{"refs/merge-requests/123/merge", true},
		{"merge-requests/123/head", true},
		{"merge-requests/123/merge", true},
		{"+refs/merge-requests/123/head", true},
		{"main:refs/tmp/main", true},
		{"--upload-pack=/tmp/x", true},
		// The rest of the documented rule.
		{"refs/pull-requests/7/from", true},
		{"pull-requests/7/to", true},
		{"pull/123/head/extra", true},
		{"REFS/PULL/1/HEAD", true},
		{"  refs/pull/1/head  ", true},
		{"-main", true},
		{"+main", true},
		// Allowed.
		{"main", false},
		{"refs/heads/main", false},
		{"feature/foo", false},
		{"refs/tags/v1.0.0", false},
		{"pull/abc/head", false},
		{"pull/123/other", false},
		{"pull/123", false},
		{"pulls/123/head", false},
		{"a-b", false},
	} {
		if got := UnsafeRef(tc.ref); got != tc.unsafe {
			t.Errorf("UnsafeRef(%q) = %v, want %v", tc.ref, got, tc.unsafe)
		}
	}
}

// TestNeedsBaseBranch: Atlantis's alpha drift API (v0.47) asks for a
// base_branch with tags, SHAs and ambiguous bare names, and not with
// branch names.
func TestNeedsBaseBranch(t *testing.T) {
	sha := strings.Repeat("a1", 20)
	for _, tc := range []struct {
		ref  string
		need bool
	}{
		{sha, true},
		{"deadbee", true},
		{"DEADBEEF", true},
		{"refs/tags/v1.0.0", true},
		{"refs/tags/prod", true},
		{"v1.0.0", true},
		{"V2.3", true},
		{"1.2.3", true},
		{"1.2.3-1_2", true},
		{"1.2.3-rc1", false}, // letters after the digits make it a branch name
		{"prod", true},
		{"production", true},
		{"latest", true},
		{"stable", true},
		{"release", true},
		{"PROD", true},
		{"  prod  ", true},
		{"main", false},
		{"master", false},
		{"develop", false},
		{"development", false},
		{"dev", false},
		{"trunk", false},
		{"feature/foo", false},
		{"release/2026-06", false},
		{"refs/heads/release/1.2", false},
		{"refs/heads/feature/foo", false},
		{"refs/heads/prod", false},
		{"refs/heads/" + sha, false},
		{"abc123", false},      // six hex digits: too short for a SHA
		{sha + "a", false},     // 41 hex digits: too long
		{"deadbeez", false},    // not hex
		{"v1", false},          // a version needs a dot
		{"vx.1", false},        // and digits after the v
		{"v1.0/x", false},      // and no slash
		{"1.2.3+build", false}, // '+' is not a version character here
		{"productions", false}, // only the exact ambiguous names
		{"", false},
	} {
		if got := NeedsBaseBranch(tc.ref); got != tc.need {
			t.Errorf("NeedsBaseBranch(%q) = %v, want %v", tc.ref, got, tc.need)
		}
	}
}

// TestNormalizeRef: Atlantis's alpha drift API (v0.47) stores and filters
// refs trimmed and without "refs/heads/"; a test there sends
// refs/heads/main and finds it stored as main.
func TestNormalizeRef(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"refs/heads/main", "main"},
		{"  refs/heads/main ", "main"},
		{"main", "main"},
		{"refs/heads/release/1.2", "release/1.2"},
		{"refs/tags/v1", "refs/tags/v1"},
		{"refs/heads/refs/heads/x", "refs/heads/x"},
		{"", ""},
	} {
		if got := NormalizeRef(tc.in); got != tc.want {
			t.Errorf("NormalizeRef(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestCheckBaseBranch: Atlantis's alpha drift API (v0.47) refuses the
// base branches its tests list (pull and merge request refs, tags, option
// lookalikes, refspecs, blanks) and the names git would refuse; it
// accepts release/1.2 and strips refs/heads/.
func TestCheckBaseBranch(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"release/1.2", "release/1.2", true},
		{"main", "main", true},
		{"refs/heads/x", "x", true},
		{" main ", "main", true},
		{"feature/a-b_c", "feature/a-b_c", true},
		// Atlantis's tests.
		{"refs/pull/1/head", "", false},
		{"pull/1/head", "", false},
		{"refs/merge-requests/1/head", "", false},
		{"refs/tags/prod", "", false},
		{"-main", "", false},
		{"--upload-pack=/tmp/x", "", false},
		{"foo:bar", "", false},
		{"   ", "", false},
		// The rest of the documented rule.
		{"", "", false},
		{"refs/remotes/origin/main", "", false},
		{"pull/feature", "", false},
		{"merge-requests/x", "", false},
		{"pull-requests/x", "", false},
		{"refs/heads/-x", "", false},
		{"/main", "", false},
		{"main/", "", false},
		{"a b", "", false},
		{"a\tb", "", false},
		{`a\b`, "", false},
		{"a~1", "", false},
		{"a^", "", false},
		{"a?", "", false},
		{"a*", "", false},
		{"a[b]", "", false},
		{"a..b", "", false},
		{"a@{1}", "", false},
		{"a//b", "", false},
		{"main.", "", false},
		{"main.lock", "", false},
		{"a.lock/b", "", false},
		{"a/.hidden", "", false},
		{".hidden", "", false},
	} {
		got, ok := CheckBaseBranch(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CheckBaseBranch(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestCleanPath: Atlantis's alpha drift API (v0.47) turns ./modules/vpc/
// into modules/vpc, keeps ".", and refuses paths that leave the
// repository, are absolute, or are globs (its tests: ../env, /env,
// envs/*, envs/pro?, envs/[prod], envs/{prod}).
func TestCleanPath(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"./modules/vpc/", "modules/vpc", true},
		{".", ".", true},
		{"./", ".", true},
		{"modules/app", "modules/app", true},
		{"  envs/prod  ", "envs/prod", true},
		{"a/../b", "b", true},
		{"a//b", "a/b", true},
		{"", "", false},
		{"   ", "", false},
		{"../env", "", false},
		{"/env", "", false},
		{"..", "", false},
		{"a/../../b", "", false},
		{"envs/*", "", false},
		{"envs/pro?", "", false},
		{"envs/[prod]", "", false},
		{"envs/{prod}", "", false},
		{`envs\prod`, "", false},
	} {
		got, ok := CleanPath(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CleanPath(%q) = %q, %v, want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestValidWorkspace: Atlantis's alpha drift API (v0.47) refuses
// ../../tmp/plan, prod/stage, "..", ".", " prod" and "prod ", and accepts
// default, prod and dev-us-east-1.
func TestValidWorkspace(t *testing.T) {
	for _, tc := range []struct {
		ws    string
		valid bool
	}{
		{"default", true},
		{"prod", true},
		{"dev-us-east-1", true},
		{"prod.eu", true},
		{"../../tmp/plan", false},
		{"prod/stage", false},
		{"..", false},
		{".", false},
		{" prod", false},
		{"prod ", false},
		{"", false},
		{`prod\stage`, false},
		{"a..b", false},
	} {
		if got := ValidWorkspace(tc.ws); got != tc.valid {
			t.Errorf("ValidWorkspace(%q) = %v, want %v", tc.ws, got, tc.valid)
		}
	}
}

// TestValidRepository: Atlantis's alpha drift API (v0.47) refuses the
// repository names its tests list (owner, /repo, owner/, owner//repo,
// owner/../repo, "owner repo/name", and owner/repo/extra on GitHub) and
// accepts GitLab's nested groups.
func TestValidRepository(t *testing.T) {
	for _, tc := range []struct {
		vcs, repo string
		valid     bool
	}{
		{Github, "owner/repo", true},
		{Github, "  owner/repo  ", true},
		{Gitea, "owner/repo", true},
		{Gitlab, "group/subgroup/repo", true},
		{Gitlab, "group/repo", true},
		{Gitlab, "Repo", true},
		{Github, "owner", false},
		{Github, "/repo", false},
		{Github, "owner/", false},
		{Github, "owner//repo", false},
		{Github, "owner/../repo", false},
		{Github, "owner/./repo", false},
		{Github, "./repo", false},
		{Github, "owner repo/name", false},
		{Github, "owner/repo/extra", false},
		{Github, `owner\repo`, false},
		{Github, "owner/re\tpo", false},
		{Github, "", false},
		{Github, "   ", false},
		{Gitea, "a/b/c", false},
		{Gitlab, "group//repo", false},
		{Gitlab, "/group/repo", false},
		{Gitlab, "group/repo/", false},
		{Gitlab, "group/../repo", false},
		{BitbucketCloud, "owner/repo", false},
		{AzureDevops, "org/project/repo", false},
		{"github", "owner/repo", false},
	} {
		if got := ValidRepository(tc.vcs, tc.repo); got != tc.valid {
			t.Errorf("ValidRepository(%q, %q) = %v, want %v", tc.vcs, tc.repo, got, tc.valid)
		}
	}
}

// TestTypes: Atlantis knows six VCS names, case-sensitively; its alpha
// drift API (v0.47) serves only Github, Gitlab and Gitea.
func TestTypes(t *testing.T) {
	for _, tc := range []struct {
		name             string
		valid, supported bool
	}{
		{Github, true, true},
		{Gitlab, true, true},
		{Gitea, true, true},
		{BitbucketCloud, true, false},
		{BitbucketServer, true, false},
		{AzureDevops, true, false},
		{"github", false, false},
		{"GitHub", false, false},
		{"", false, false},
	} {
		if got := ValidType(tc.name); got != tc.valid {
			t.Errorf("ValidType(%q) = %v, want %v", tc.name, got, tc.valid)
		}
		if got := SupportedType(tc.name); got != tc.supported {
			t.Errorf("SupportedType(%q) = %v, want %v", tc.name, got, tc.supported)
		}
	}
}

// TestExactProjectName: Atlantis's alpha drift remediation (v0.47)
// refuses app-.*, ^app$, app[0-9] and app|db as project names and
// accepts the dotted app.prod.
func TestExactProjectName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		exact bool
	}{
		{"app.prod", true},
		{"app", true},
		{"app-db_1", true},
		{"app-.*", false},
		{"^app$", false},
		{"app[0-9]", false},
		{"app|db", false},
		{"app(1)", false},
		{"app+", false},
		{"app?", false},
		{"app{2}", false},
		{`app\d`, false},
	} {
		if got := ExactProjectName(tc.name); got != tc.exact {
			t.Errorf("ExactProjectName(%q) = %v, want %v", tc.name, got, tc.exact)
		}
	}
}
