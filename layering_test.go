package atoll_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering guards WTF Dial's layering: the HTTP layer, its templates,
// the runner and its notification sender reach the database only through
// the root package's service interfaces (atoll.Store, atoll.RunnerStore),
// never the store package itself, so each rule that spans writes has one
// owner, a store method. Their tests may import store for fixtures.
func TestLayering(t *testing.T) {
	const storePkg = "github.com/atollhq/atoll/store"
	for _, dir := range []string{"web", "templates", "runner", "runner/notify"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		checked := 0
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, imp := range f.Imports {
				if path, _ := strconv.Unquote(imp.Path.Value); path == storePkg || strings.HasPrefix(path, storePkg+"/") {
					t.Errorf("%s imports %s: use the root package's services (atoll.Store, atoll.RunnerStore) instead", name, path)
				}
			}
		}
		if checked == 0 {
			t.Errorf("no non-test Go files in %s: the test must run in the module's root", dir)
		}
	}
}

// TestVCSOptionalInterfacesThroughAs: providers of a node of a pair are
// wrapped by vcs.Fenced, which implements every optional interface, so a
// type assertion (p.(vcs.Reactor)) would always succeed and call a method
// the host lacks. Optional interfaces are asked for with vcs.As.
func TestVCSOptionalInterfacesThroughAs(t *testing.T) {
	ifaces := vcsInterfaces(t)
	for _, dir := range []string{"web", "runner", "runner/notify", "cmd/atoll", "vcs"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			// The wrapper itself asks what it wraps.
			if strings.HasSuffix(name, "_test.go") || name == filepath.Join("vcs", "fence.go") {
				continue
			}
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(b), "\n") {
				for _, iface := range ifaces {
					if strings.Contains(line, ".(vcs."+iface+")") || strings.Contains(line, ".("+iface+")") {
						t.Errorf("%s:%d asserts %s: use vcs.As[%s], which looks through vcs.Fenced", name, i+1, iface, iface)
					}
				}
			}
		}
	}
}

// vcsInterfaces names every interface package vcs declares, read from its
// source, so that an optional interface added later is covered without
// anyone remembering this test.
func vcsInterfaces(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("vcs", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, spec := range g.Specs {
				if ts := spec.(*ast.TypeSpec); ts.Name.IsExported() {
					if _, ok := ts.Type.(*ast.InterfaceType); ok {
						names = append(names, ts.Name.Name)
					}
				}
			}
		}
	}
	if len(names) < 5 {
		t.Fatalf("found only %v in vcs: the parse is wrong", names)
	}
	return names
}
