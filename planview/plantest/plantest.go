// Package plantest makes real `terraform show -json` output for tests, with
// the Terraform binary named by ATOLL_TEST_TERRAFORM (or bin/terraform at
// the repository root): fixtures come from Terraform itself, never by hand.
package plantest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Binary returns the Terraform binary, or skips the test without one.
func Binary(t testing.TB) string {
	t.Helper()
	bin := os.Getenv("ATOLL_TEST_TERRAFORM")
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		bin = filepath.Join(filepath.Dir(file), "..", "..", "bin", "terraform")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("terraform binary not available (%v); run make or set ATOLL_TEST_TERRAFORM", err)
	}
	return bin
}

// Step is one configuration: its files (written over the previous step's),
// applied with Vars when Apply is set (building the prior state), else
// planned with Vars.
type Step struct {
	Files map[string]string // path relative to the root module → contents
	Vars  map[string]string
	Apply bool
}

// ShowJSON runs the steps in one fresh directory (init before each) and
// returns `terraform show -json` of the last step's plan, with the plan's
// human-readable output.
func ShowJSON(t testing.TB, steps ...Step) (show []byte, planText string) {
	t.Helper()
	bin := Binary(t)
	dir := t.TempDir()
	rc := filepath.Join(t.TempDir(), "terraformrc")
	if err := os.WriteFile(rc, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0", "TF_CLI_CONFIG_FILE="+rc)
	run := func(args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("terraform %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
		}
		return stdout.Bytes()
	}
	for i, s := range steps {
		for name, body := range s.Files {
			p := filepath.Join(dir, name)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var vars []string
		for k, v := range s.Vars {
			vars = append(vars, "-var", k+"="+v)
		}
		run("init", "-input=false", "-no-color")
		if s.Apply {
			run(append([]string{"apply", "-auto-approve", "-input=false", "-no-color"}, vars...)...)
			continue
		}
		if i != len(steps)-1 {
			t.Fatalf("step %d plans but is not the last step", i)
		}
		planText = string(run(append([]string{"plan", "-input=false", "-no-color", "-out", "plan.tfplan"}, vars...)...))
		return run("show", "-json", "plan.tfplan"), planText
	}
	t.Fatal("plantest: the last step must plan, not apply")
	return nil, ""
}
