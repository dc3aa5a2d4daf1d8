package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
)

// A pull request can commit a symbolic link: a -var-file that is a
// relative path inside the repository as written may still lead to a
// server file, which Terraform would read and quote in its errors; a
// project dir may lead anywhere, and Terraform would write .terraform
// there. Both are refused once the checkout shows where they lead.
func TestSecurityVarFileSymlinks(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.tfvars")
	write := func(p, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := func(target, p string) {
		t.Helper()
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, `password = "hunter2"`)
	dir := filepath.Join(root, "stacks", "app")
	write(filepath.Join(dir, "ok.tfvars"), "a = 1")
	write(filepath.Join(root, "shared.tfvars"), "b = 2")
	link(secret, filepath.Join(dir, "evil.tfvars"))
	link("../ok.tfvars", filepath.Join(dir, "inner.tfvars"))
	write(filepath.Join(dir, "env", "placeholder"), "")
	link(secret, filepath.Join(dir, "env", "default.tfvars"))
	link(outside, filepath.Join(root, "escape"))

	for _, tc := range []struct {
		args    []string
		refused bool
	}{
		{[]string{"-var-file=ok.tfvars"}, false},
		{[]string{"-var-file", "inner.tfvars"}, false},
		{[]string{"-var-file=../../shared.tfvars"}, false}, // inside, as written and resolved
		{[]string{"-var-file=missing.tfvars"}, false},      // Terraform reports it
		{[]string{"-var-file=evil.tfvars"}, true},
		{[]string{"-target=a.b", "--var-file", "evil.tfvars"}, true},
		{[]string{"-var-file", "env/default.tfvars"}, true}, // what planArgs adds for the default workspace
		{[]string{"-var", "x=evil.tfvars"}, false},
	} {
		err := checkVarFiles(dir, "stacks/app", tc.args)
		switch {
		case tc.refused && (err == nil || atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), "symbolic link")):
			t.Errorf("%q: err = %v, want refused", tc.args, err)
		case !tc.refused && err != nil:
			t.Errorf("%q refused: %v", tc.args, err)
		}
	}
	if ok, err := inside(root, filepath.Join(root, "escape")); err != nil || ok {
		t.Errorf("a linked project dir leading outside: inside = %v, %v", ok, err)
	}
	if ok, err := inside(root, dir); err != nil || !ok {
		t.Errorf("a plain project dir: inside = %v, %v", ok, err)
	}
	if got := checkoutRoot(dir, "stacks/app"); got != root {
		t.Errorf("checkoutRoot = %q, want %q", got, root)
	}
	if got := checkoutRoot(root, "."); got != root {
		t.Errorf("checkoutRoot of the root = %q", got)
	}
}
