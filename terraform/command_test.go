package terraform_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/terraform"
)

// A workflow command runs in dir with Terraform's environment plus its
// own, its lines streamed as they come, and a non-zero exit is reported
// with its code.
func TestCommand(t *testing.T) {
	t.Setenv("VAULT_ADDR", "https://vault.example")
	t.Setenv("ATOLL_GH_TOKEN", "sentinel-secret")
	dir := t.TempDir()
	r := terraform.Runner{Procs: &procs.Registry{Dir: t.TempDir()}}
	rec := record(t)
	out, err := r.Command(context.Background(), dir, []string{"sh", "-c", `pwd; echo "v=$VAULT_ADDR x=$EXTRA t=$ATOLL_GH_TOKEN"; echo oops >&2`},
		[]string{"EXTRA=yes"}, rec.emit)
	if err != nil {
		t.Fatalf("command: %v", err)
	}
	real, _ := filepath.EvalSymlinks(dir)
	for _, want := range []string{real, "v=https://vault.example x=yes t=\n", "oops"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(rec.text("stderr"), "oops") || !strings.Contains(rec.text("stdout"), "x=yes") {
		t.Errorf("lines not streamed: stdout %q, stderr %q", rec.text("stdout"), rec.text("stderr"))
	}
	_, err = r.Command(context.Background(), dir, []string{"sh", "-c", "echo failing; exit 3"}, nil, nil)
	var ce *terraform.CommandError
	if !errors.As(err, &ce) || ce.Code != 3 {
		t.Errorf("err = %v, want exit code 3", err)
	}
	stdout, err := r.CommandStdout(context.Background(), dir, []string{"sh", "-c", "echo value; echo noise >&2"}, nil, nil)
	if err != nil || stdout != "value\n" {
		t.Errorf("stdout = %q, %v", stdout, err)
	}
}

// Cancelling a command stops its whole process group, children included.
func TestCommandCancel(t *testing.T) {
	dir := t.TempDir()
	r := terraform.Runner{Grace: time.Second, Procs: &procs.Registry{Dir: filepath.Join(dir, "procs")}}
	ctx, cancel := context.WithCancel(context.Background())
	marker := filepath.Join(dir, "child.pid")
	done := make(chan error, 1)
	go func() {
		_, err := r.Command(ctx, dir, []string{"sh", "-c", "sleep 300 & echo $! > " + marker + "; wait"}, nil, nil)
		done <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	var pid []byte
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(marker); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			pid = b
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pid == nil {
		t.Fatal("the command did not start its child")
	}
	cancel()
	if err := <-done; err == nil || !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want cancelled", err)
	}
	child := "/proc/" + strings.TrimSpace(string(pid))
	for time.Now().Before(deadline) {
		st, err := os.ReadFile(child + "/stat")
		if err != nil || strings.Contains(string(st), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Errorf("the command's child %s outlived the cancellation", child)
}
