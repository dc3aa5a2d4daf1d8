package runner_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll/runner"
	"github.com/atollhq/atoll/runner/terraform"
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
