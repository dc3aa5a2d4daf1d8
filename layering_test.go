package atoll_test

import (
	"go/parser"
	"go/token"
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
