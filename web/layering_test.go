package web_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWebDoesNotImportStore guards the layering: the HTTP layer reaches
// the database only through the root package's service interfaces
// (atoll.Store), never the store package itself. Tests may import store
// for their fixtures.
func TestWebDoesNotImportStore(t *testing.T) {
	const storePkg = "github.com/atollhq/atoll/store"
	files, err := filepath.Glob("*.go")
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
				t.Errorf("%s imports %s: use the root package's services (atoll.Store) instead", name, path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no non-test Go files found: the test must run in web/")
	}
}
