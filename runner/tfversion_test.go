package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/tfinstall"
)

func TestSatisfies(t *testing.T) {
	v := version.Must(version.NewVersion("1.5.7"))
	cases := []struct {
		want string
		ok   bool
		err  bool
	}{
		{"1.5.7", true, false},
		{"v1.5.7", true, false},
		{"1.5.6", false, false},
		{"~> 1.5", true, false},
		{"~> 1.5.0", true, false},
		{">= 1.6", false, false},
		{">= 1.3, < 2.0", true, false},
		{"= 1.5.7", true, false},
		{"!= 1.5.7", false, false},
		{"latest", false, true},
	}
	for _, c := range cases {
		ok, err := runner.Satisfies(v, c.want)
		if ok != c.ok || (err != nil) != c.err {
			t.Errorf("Satisfies(1.5.7, %q) = %v, %v; want %v, error %v", c.want, ok, err, c.ok, c.err)
		}
	}
}

// A failed version check is not remembered: once the binary exists (here a
// link to the real Terraform appearing after the first call) the next call
// reads its version.
func TestTerraformVersionRetriesAfterFailure(t *testing.T) {
	real := os.Getenv("ATOLL_TEST_TERRAFORM")
	if real == "" {
		real, _ = filepath.Abs(filepath.Join("..", "bin", "terraform"))
	}
	if _, err := os.Stat(real); err != nil {
		t.Skipf("terraform binary not available (%v); run make or set ATOLL_TEST_TERRAFORM", err)
	}
	t.Setenv("CHECKPOINT_DISABLE", "1")
	bin := filepath.Join(t.TempDir(), "terraform")
	r := &runner.Runner{Terraform: terraform.Runner{Bin: bin}}
	ctx := context.Background()
	if v, err := r.TerraformVersion(ctx); err == nil {
		t.Fatalf("TerraformVersion with a missing binary = %v, want an error", v)
	}
	if err := os.Symlink(real, bin); err != nil {
		t.Fatal(err)
	}
	v, err := r.TerraformVersion(ctx)
	if err != nil {
		t.Fatalf("TerraformVersion after the binary appeared: %v", err)
	}
	if v.String() == "" {
		t.Fatal("empty version")
	}
	// The success is cached: removing the binary does not change the answer.
	os.Remove(bin)
	if again, err := r.TerraformVersion(ctx); err != nil || !again.Equal(v) {
		t.Fatalf("cached TerraformVersion = %v, %v; want %v", again, err, v)
	}
}

// A project asking for a version gets the binary of --tf-bin-dir, the
// default binary counting as installed; no version asks for nothing and
// runs --terraform-bin; what cannot be run names what is installed.
func TestSelectTerraform(t *testing.T) {
	dir := t.TempDir()
	script := func(name, v string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("#!/bin/sh\necho 'Terraform v"+v+"'\n"), 0o755)
		return p
	}
	def := filepath.Join(t.TempDir(), "terraform")
	os.WriteFile(def, []byte("#!/bin/sh\necho 'Terraform v1.5.7'\n"), 0o755)
	script("terraform1.6.0", "1.6.0")
	script("terraform1.4.2", "1.4.2")
	script("tofu1.8.0", "1.8.0")
	r := &runner.Runner{Terraform: terraform.Runner{Bin: def}, TFInstall: &tfinstall.Installer{Dir: dir}}
	ctx := context.Background()
	cases := []struct {
		dist, want string
		path       string // "" for an error
		errHas     string
	}{
		{"", "", def, ""},
		{"terraform", "~> 1.5.0", def, ""},
		{"", "1.5.7", def, ""},
		{"", ">= 1.4", filepath.Join(dir, "terraform1.6.0"), ""},
		{"", "1.4.2", filepath.Join(dir, "terraform1.4.2"), ""},
		{"opentofu", "", filepath.Join(dir, "tofu1.8.0"), ""},
		{"opentofu", "~> 1.8", filepath.Join(dir, "tofu1.8.0"), ""},
		{"", "~> 1.9", "", "installed: 1.6.0, 1.5.7, 1.4.2; downloads are off"},
		{"opentofu", "1.9.0", "", "tofu1.9.0 is not installed"},
	}
	for _, c := range cases {
		b, err := r.SelectTerraform(ctx, c.dist, c.want)
		if c.path == "" {
			if err == nil || !strings.Contains(err.Error(), c.errHas) {
				t.Errorf("SelectTerraform(%q, %q) = %+v, %v; want an error containing %q", c.dist, c.want, b, err, c.errHas)
			}
			continue
		}
		if err != nil || b.Path != c.path {
			t.Errorf("SelectTerraform(%q, %q) = %+v, %v; want %s", c.dist, c.want, b, err, c.path)
		}
	}
	// --default-tf-version is the version of projects that ask for none.
	r.DefaultTFVersion = "1.6.0"
	if b, err := r.SelectTerraform(ctx, "", ""); err != nil || b.Path != filepath.Join(dir, "terraform1.6.0") {
		t.Errorf("with --default-tf-version 1.6.0: %+v, %v", b, err)
	}
	// Without a directory of versions, --terraform-bin must do.
	old := &runner.Runner{Terraform: terraform.Runner{Bin: def}}
	if _, err := old.SelectTerraform(ctx, "", "~> 1.6"); err == nil || !strings.Contains(err.Error(), "runs Terraform 1.5.7") {
		t.Errorf("without TFInstall: %v", err)
	}
}
