package atoll_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/atollhq/atoll"

// allowedImports is which of Atoll's packages each package may import
// (outside its tests), by path relative to the module; "atoll" is the root.
// It is the one statement of the layering: TestImportTable fails on an
// import missing here, on a package missing here, and on an entry that no
// longer exists, and docs/architecture.md's table is generated from it.
// Growing an entry is a design decision: say why in the commit.
var allowedImports = map[string][]string{
	"atoll":                     nil,
	"ansi":                      nil,
	"assets":                    nil,
	"browsertest":               nil,
	"drift":                     nil, // the drift API's rules and wire shapes: pure, standard library only
	"metrics":                   nil,
	"planview":                  nil,
	"planview/plantest":         nil,
	"procs":                     nil,
	"replica/s3test":            nil,
	"tfinstall":                 nil,
	"vcs/azuredevops/azuretest": nil,
	"vcs/github/githubtest":     nil,
	"store/storetest":           {"atoll", "store"}, // a test helper, like those above
	"inmem":                     {"atoll"},
	"mock":                      {"atoll"},
	"replica":                   {"atoll"},
	"store":                     {"atoll"},
	"vcs":                       {"atoll"},
	"command":                   {"atoll"},
	"runner/notify":             {"atoll", "drift"},
	"runner/executor":           {"atoll"},
	"repocfg":                   {"atoll"},
	"git":                       {"procs"},
	"gitcred":                   {"vcs"},
	"node":                      {"atoll", "replica", "store"},
	"terraform":                 {"atoll", "ansi", "procs"},
	"runner/markdown":           {"atoll", "terraform"},
	"vcs/github":                {"atoll", "vcs"},
	"vcs/azuredevops":           {"atoll", "vcs"},
	"vcs/local":                 {"atoll", "git", "store", "vcs"},
	"templates":                 {"atoll", "ansi", "planview"},
	"demo":                      {"atoll", "git", "repocfg", "store"},
	// Worker pools: the control plane's side sees the store and the
	// runner only through the root interfaces and the executor seam.
	"dispatch": {"atoll", "runner/executor"},
	"runner": {"atoll", "drift", "git", "gitcred", "metrics", "procs", "command", "runner/executor", "runner/markdown",
		"runner/notify", "repocfg", "terraform", "tfinstall", "vcs"},
	// The worker process runs jobs with the runner's own in-process
	// executor (runner.LocalExecutor): one code path for a job's steps.
	"worker": {"atoll", "git", "runner", "runner/executor", "terraform", "tfinstall"},
	// The HTTP side sees the runner only through the root package's
	// interfaces (atoll.CommandService, LogStream, ApprovalPolicy,
	// UnlockReporter), and writes no comment itself.
	"web": {"atoll", "ansi", "assets", "drift", "metrics", "planview", "templates", "vcs"},
	// Wiring only: it may import every package but the test helpers.
	"cmd/atoll": {"atoll", "demo", "dispatch", "git", "kube", "gitcred", "inmem", "node", "procs", "replica", "runner",
		"command", "runner/markdown", "runner/notify", "repocfg", "terraform",
		"tfinstall", "store", "vcs", "vcs/azuredevops", "vcs/github", "vcs/local", "web", "worker"},
	// Kubernetes Jobs for worker pools: client-go's typed clientset only,
	// nothing of Atoll's (the dispatcher wires it in), and its fake API
	// server, a test helper like those above.
	"kube":          {"dispatch"},
	"kube/kubetest": nil,
}

// moduleImports is each package's imports of Atoll's own packages, as go
// list reports them (non-test files, this platform's build).
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	got := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := relPackage(fields[0])
		got[pkg] = nil
		for _, imp := range fields[1:] {
			if imp == modulePath || strings.HasPrefix(imp, modulePath+"/") {
				got[pkg] = append(got[pkg], relPackage(imp))
			}
		}
	}
	return got
}

func relPackage(path string) string {
	if path == modulePath {
		return "atoll"
	}
	return strings.TrimPrefix(path, modulePath+"/")
}

// TestImportTable checks every package's imports against allowedImports and
// keeps docs/architecture.md's table the one generated from it (run with
// ATOLL_UPDATE_DOCS=1 to rewrite the table after changing allowedImports).
func TestImportTable(t *testing.T) {
	got := moduleImports(t)
	for pkg, imports := range got {
		allowed, ok := allowedImports[pkg]
		if !ok {
			t.Errorf("package %s is not in allowedImports: add it with what it may import", pkg)
			continue
		}
		for _, imp := range imports {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s, which allowedImports does not allow", pkg, imp)
			}
		}
	}
	for pkg := range allowedImports {
		if _, ok := got[pkg]; !ok {
			t.Errorf("allowedImports names %s, which is not a package any more", pkg)
		}
	}
	const doc = "docs/architecture.md"
	const begin, end = "<!-- imports:begin (generated by TestImportTable) -->\n", "<!-- imports:end -->\n"
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	i, j := bytes.Index(b, []byte(begin)), bytes.Index(b, []byte(end))
	if i < 0 || j < i {
		t.Fatalf("%s has no generated imports table between %q and %q", doc, begin, end)
	}
	want := importTable()
	if string(b[i+len(begin):j]) == want {
		return
	}
	if os.Getenv("ATOLL_UPDATE_DOCS") == "" {
		t.Fatalf("%s's imports table is not the one allowedImports generates; rerun with ATOLL_UPDATE_DOCS=1:\n%s", doc, want)
	}
	updated := append(append(append([]byte{}, b[:i+len(begin)]...), want...), b[j:]...)
	if err := os.WriteFile(doc, updated, 0o644); err != nil {
		t.Fatal(err)
	}
}

// importTable renders allowedImports as the block in the docs, in layers:
// a package after everything it may import.
func importTable() string {
	var order []string
	placed := map[string]bool{}
	for len(order) < len(allowedImports) {
		var layer []string
		for pkg, deps := range allowedImports {
			if !placed[pkg] && !slices.ContainsFunc(deps, func(d string) bool { return !placed[d] }) {
				layer = append(layer, pkg)
			}
		}
		if len(layer) == 0 {
			panic("allowedImports has a cycle")
		}
		slices.Sort(layer)
		for _, pkg := range layer {
			placed[pkg] = true
		}
		order = append(order, layer...)
	}
	var b strings.Builder
	b.WriteString("```\n")
	for _, pkg := range order {
		deps := "imports nothing of Atoll"
		if len(allowedImports[pkg]) > 0 {
			deps = "→ " + strings.Join(allowedImports[pkg], ", ")
		}
		fmt.Fprintf(&b, "%-26s %s\n", pkg, deps)
	}
	b.WriteString("```\n")
	return b.String()
}

// TestHTTPSideImportsNoRunner keeps the web layer, its templates and the
// demo off the runner and the comment grammar: they work through the root
// package's interfaces, so that the runner can change (or move out of
// process) under them. Allowing it is not a table edit to make lightly.
func TestHTTPSideImportsNoRunner(t *testing.T) {
	for _, pkg := range []string{"web", "templates", "demo"} {
		allowed, ok := allowedImports[pkg]
		if !ok {
			t.Fatalf("allowedImports has no entry for %s", pkg)
		}
		for _, imp := range allowed {
			if imp == "runner" || strings.HasPrefix(imp, "runner/") || imp == "command" {
				t.Errorf("allowedImports lets %s import %s: use the root package's interfaces", pkg, imp)
			}
		}
	}
}
