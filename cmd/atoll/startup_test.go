package main_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// buildAtoll returns the atoll command, built once per test binary
// (atollBinary in ha_harness_test.go).
func buildAtoll(t *testing.T) string {
	t.Helper()
	return atollBinary(t)
}

// A start-up error is one line on stderr, "atoll: ...", and exit code 1;
// only a command line that does not parse exits 2. Errors after the
// runner is built used to panic (close of nil channel in Runner.Stop).
func TestStartupErrors(t *testing.T) {
	bin := buildAtoll(t)
	falseBin, err := exec.LookPath("false")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "token")
	os.WriteFile(secretFile, []byte("s3cret\n"), 0o600)
	server := func(args ...string) []string {
		return append([]string{"server", "--addr", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"), "--repo-allowlist", "github.com/acme/*"}, args...)
	}
	cases := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"--terraform-bin is not Terraform", server("--terraform-bin", falseBin, "--default-tf-version", "1.5.7", "--tf-download=false"), 1, "--default-tf-version 1.5.7: no version that satisfies it can be run: terraform1.5.7 is not installed"},
		{"--terraform-bin missing", server("--terraform-bin", filepath.Join(dir, "nope"), "--default-tf-version", "~> 1.5", "--tf-download=false"), 1, "--default-tf-version ~> 1.5: no version that satisfies it can be run (installed: none; downloads are off"},
		{"bad --tf-download-url", server("--tf-download-url", "releases.example.com"), 1, "--tf-download-url"},
		{"--demo with a token", []string{"server", "--demo", "--gh-token", "x"}, 1, "--demo takes no VCS credentials"},
		{"--demo with a token file", []string{"server", "--demo", "--gh-token-file", secretFile}, 1, "--demo takes no VCS credentials"},
		{"a secret and its file", server("--api-secret", "x", "--api-secret-file", secretFile), 1, "--api-secret and --api-secret-file are both set"},
		{"missing secret file", server("--api-secret-file", filepath.Join(dir, "missing")), 1, "--api-secret-file"},
		{"bad port", server("--port", "70000"), 1, "--port"},
		{"bad pod template", server("--repo-config-json", `{"execution_pools":{"k8s":{"kubernetes":{"image":"x","limits":{"memory":"lots"}}}}}`), 1,
			`--repo-config-json line 1: execution_pools.k8s.kubernetes: limits memory: "lots" is not a quantity`},
		{"unknown pod template key", server("--repo-config-json", "execution_pools:\n  k8s:\n    kubernetes:\n      image: x\n      memory: 2Gi\n"), 1,
			`--repo-config-json line 3: execution_pools.k8s.kubernetes: unknown field "memory"`},
		{"pod template without an image", server("--repo-config-json", `{"execution_pools":{"k8s":{"kubernetes":{}}}}`), 1, "image: empty (and no default image)"},
		{"kubernetes pools outside a cluster", server("--repo-config-json", `{"execution_pools":{"k8s":{"kubernetes":{}}}}`, "--kube-worker-image", "img"), 1,
			"the repo config runs pools on Kubernetes (execution_pools), and this server is not in a cluster"},
		{"missing kubeconfig", server("--repo-config-json", `{"execution_pools":{"k8s":{"kubernetes":{}}}}`, "--kube-worker-image", "img", "--kubeconfig", filepath.Join(dir, "nope")), 1, "--kubeconfig"},
		{"bad --kube-server-url", server("--repo-config-json", `{"execution_pools":{"k8s":{"kubernetes":{"image":"x"}}}}`, "--kube-server-url", "atoll.ci.svc"), 1, `--kube-server-url: "atoll.ci.svc" is not an http(s) URL`},
		{"unknown command", []string{"serve"}, 2, "unknown command"},
		{"stray argument", server("extra"), 2, "unexpected argument"},
	}
	if tf := os.Getenv("ATOLL_TEST_TERRAFORM"); tf != "" {
		cases = append(cases, struct {
			name string
			args []string
			code int
			want string
		}{"--default-tf-version not matching", server("--terraform-bin", tf, "--default-tf-version", "0.12.31", "--tf-download=false"), 1, "--default-tf-version 0.12.31: no version that satisfies it can be run: terraform0.12.31 is not installed"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, stderr := runAtoll(t, bin, c.args...)
			if code != c.code {
				t.Errorf("exit code %d; want %d", code, c.code)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "atoll: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q; want one line \"atoll: ...\" containing %q", stderr, c.want)
			}
			if strings.Contains(stderr, "s3cret") {
				t.Errorf("stderr shows the secret: %q", stderr)
			}
		})
	}

	// The flag package reports an unknown flag with the usage; exit 2.
	code, stderr := runAtoll(t, bin, "server", "--no-such-flag")
	if code != 2 || !strings.Contains(stderr, "flag provided but not defined: -no-such-flag") || strings.Contains(stderr, "goroutine") {
		t.Errorf("unknown flag: exit %d, stderr %q", code, stderr)
	}
}

// runAtoll runs bin with a clean environment and returns its exit code and
// stderr; a server that starts instead of failing is killed.
func runAtoll(t *testing.T, bin string, args ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "CHECKPOINT_DISABLE=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("atoll %v did not exit: %s", args, stderr.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), stderr.String()
}
