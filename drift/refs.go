package drift

import (
	"path"
	"slices"
	"strings"
	"unicode"
)

// The VCS type names, spelled as Atlantis spells them: clients send them
// verbatim in the type field and query parameter, and the match is
// case-sensitive.
const (
	Github          = "Github"
	Gitlab          = "Gitlab"
	Gitea           = "Gitea"
	BitbucketCloud  = "BitbucketCloud"
	BitbucketServer = "BitbucketServer"
	AzureDevops     = "AzureDevops"
)

// supportedTypesList is the drift API's supported types in the order its
// messages name them.
const supportedTypesList = "Github, Gitlab, Gitea"

// ValidType reports whether t names a VCS Atlantis knows at all. The API
// tells an unknown name ("invalid VCS type") from a known one that drift
// does not support ("unsupported VCS type").
func ValidType(t string) bool {
	switch t {
	case Github, Gitlab, Gitea, BitbucketCloud, BitbucketServer, AzureDevops:
		return true
	}
	return false
}

// SupportedType reports whether the drift API serves repositories of VCS
// type t; Bitbucket and Azure DevOps are refused with a 400.
func SupportedType(t string) bool {
	switch t {
	case Github, Gitlab, Gitea:
		return true
	}
	return false
}

// NormalizeRef is the ref a drift record is stored and looked up under: a
// branch named "refs/heads/main" and one named "main" are the same record.
// Other ref forms (tags, SHAs) are kept as given, trimmed.
func NormalizeRef(ref string) string {
	return strings.TrimPrefix(strings.TrimSpace(ref), "refs/heads/")
}

// prNamespaces are the ref namespaces in which the VCS hosts publish pull
// and merge request heads. A drift check of such a ref would plan
// unreviewed code outside the pull request's own flow, so it is refused.
var prNamespaces = []string{"pull", "merge-requests", "pull-requests"}

// prRefEnds are the final names under a pull request's number that point
// at its commits.
var prRefEnds = []string{"head", "merge", "from", "to"}

// UnsafeRef reports whether ref must be refused before it reaches git: a
// leading '-' could be read as an option (--upload-pack=...), a leading
// '+' or a ':' makes it a refspec, and a pull or merge request ref would
// check out code nobody merged.
func UnsafeRef(ref string) bool {
	r := strings.ToLower(strings.TrimSpace(ref))
	if strings.HasPrefix(r, "-") || strings.HasPrefix(r, "+") || strings.Contains(r, ":") {
		return true
	}
	return isPRRef(strings.TrimPrefix(r, "refs/"))
}

// isPRRef reports whether r (without "refs/") has the shape
// <namespace>/<number>/<end>[/...] of a pull or merge request ref.
func isPRRef(r string) bool {
	parts := strings.SplitN(r, "/", 4)
	if len(parts) < 3 {
		return false
	}
	return slices.Contains(prNamespaces, parts[0]) && allDigits(parts[1]) && slices.Contains(prRefEnds, parts[2])
}

// inPRNamespace reports whether a (normalized) branch name lies anywhere
// under a pull or merge request namespace, number or not.
func inPRNamespace(b string) bool {
	for _, ns := range prNamespaces {
		if strings.HasPrefix(b, ns+"/") {
			return true
		}
	}
	return false
}

// ambiguousRefs are bare names that are as often tags or moving labels as
// branches; a record keyed by one of them needs the branch it belongs to.
var ambiguousRefs = []string{"prod", "production", "latest", "stable", "release"}

// NeedsBaseBranch reports whether ref does not name a branch unambiguously,
// so a request must say which base branch its drift belongs to: tags
// ("refs/tags/x" or a bare version such as v1.0.0), commit SHAs (7 to 40
// hex digits) and the ambiguous bare names prod, production, latest,
// stable and release (any case). "refs/heads/..." never needs one.
func NeedsBaseBranch(ref string) bool {
	r := strings.TrimSpace(ref)
	switch {
	case strings.HasPrefix(r, "refs/tags/"):
		return true
	case strings.HasPrefix(r, "refs/heads/"):
		return false
	}
	return isBareVersion(r) || slices.Contains(ambiguousRefs, strings.ToLower(r)) || isHexSHA(r)
}

// isBareVersion reports whether r looks like a version tag: no '/', at
// least one '.', an optional leading v or V, then a digit followed only by
// digits, '.', '-' and '_'.
func isBareVersion(r string) bool {
	if strings.Contains(r, "/") || !strings.Contains(r, ".") {
		return false
	}
	if strings.HasPrefix(r, "v") || strings.HasPrefix(r, "V") {
		r = r[1:]
	}
	if r == "" || r[0] < '0' || r[0] > '9' {
		return false
	}
	for _, c := range r {
		if !(c >= '0' && c <= '9') && c != '.' && c != '-' && c != '_' {
			return false
		}
	}
	return true
}

// isHexSHA reports whether r could be an abbreviated or full commit SHA.
func isHexSHA(r string) bool {
	if len(r) < 7 || len(r) > 40 {
		return false
	}
	for _, c := range r {
		if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
			return false
		}
	}
	return true
}

// CheckBaseBranch returns base branch b normalized, and whether it is a
// branch a drift record may be keyed by: not an unsafe ref, not a tag or
// any other "refs/" name once "refs/heads/" is removed, not under a pull
// request namespace, and a name git itself would accept for a branch.
func CheckBaseBranch(b string) (string, bool) {
	if UnsafeRef(b) {
		return "", false
	}
	n := NormalizeRef(b)
	if n == "" || strings.HasPrefix(n, "-") || strings.Contains(n, ":") || strings.HasPrefix(n, "refs/") {
		return "", false
	}
	if inPRNamespace(n) || !gitSafeBranch(n) {
		return "", false
	}
	return n, true
}

// gitSafeBranch is the subset of git's branch-name rules that matter for a
// name we pass on to git: no whitespace or the characters git reserves,
// no "..", "@{" or "//", no empty or hidden component, nothing ending in
// ".lock" or '.'.
func gitSafeBranch(b string) bool {
	if strings.HasPrefix(b, "/") || strings.HasSuffix(b, "/") {
		return false
	}
	if strings.ContainsAny(b, " \t\r\n\\~^:?*[]") {
		return false
	}
	for _, bad := range []string{"..", "@{", "//"} {
		if strings.Contains(b, bad) {
			return false
		}
	}
	if strings.HasSuffix(b, ".") || strings.HasSuffix(b, ".lock") {
		return false
	}
	for _, c := range strings.Split(b, "/") {
		if c == "" || strings.HasPrefix(c, ".") || strings.HasSuffix(c, ".lock") {
			return false
		}
	}
	return true
}

// CleanPath returns dir as a clean repo-relative path ("./modules/vpc/"
// is "modules/vpc", "." stays "."), and false for anything that could
// leave the repository or match several directories: empty, absolute,
// climbing out with "..", a backslash, or a glob character.
func CleanPath(dir string) (string, bool) {
	d := strings.TrimSpace(dir)
	if d == "" || strings.ContainsAny(d, `\*?[]{}`) {
		return "", false
	}
	c := path.Clean(d)
	if path.IsAbs(c) || c == ".." || strings.HasPrefix(c, "../") {
		return "", false
	}
	return c, true
}

// ValidWorkspace reports whether ws can name a Terraform workspace in a
// drift request. Workspaces become parts of file paths, so anything that
// could move between directories is refused, as is surrounding space that
// would make two spellings of one workspace.
func ValidWorkspace(ws string) bool {
	if ws == "" || ws != strings.TrimSpace(ws) {
		return false
	}
	return ws != "." && !strings.ContainsAny(ws, `/\`) && !strings.Contains(ws, "..")
}

// ValidRepository reports whether repo has the shape of a repository's
// full name on VCS type vcsType: owner/name on GitHub and Gitea, one or
// more groups then a name on GitLab. It is false for types the drift API
// does not support, since no request for them gets this far.
func ValidRepository(vcsType, repo string) bool {
	r := strings.TrimSpace(repo)
	if r == "" || strings.ContainsRune(r, '\\') || strings.IndexFunc(r, unicode.IsSpace) >= 0 {
		return false
	}
	if strings.HasPrefix(r, "/") || strings.HasSuffix(r, "/") || strings.Contains(r, "//") {
		return false
	}
	segs := strings.Split(r, "/")
	for _, s := range segs {
		if s == "" || s == "." || s == ".." {
			return false
		}
	}
	switch vcsType {
	case Github, Gitea:
		return len(segs) == 2
	case Gitlab:
		return len(segs) >= 1
	}
	return false
}

// regexChars are the characters that would make a project name a pattern.
// '.' is not among them: dotted names such as app.prod are common and
// matched literally.
const regexChars = `*[]()|^$+?{}\`

// ExactProjectName reports whether name has none of the regular-expression
// metacharacters remediation refuses: a remediation targets projects by
// exact name, and a pattern there would silently widen what gets applied.
// Paths are the way to target several projects. Blank names are refused
// separately.
func ExactProjectName(name string) bool {
	return !strings.ContainsAny(name, regexChars)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
