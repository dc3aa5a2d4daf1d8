package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/atollhq/atoll/procs"
)

// A process group recorded by an earlier run (as a kill -9 leaves it) is
// killed when the server starts, before any worker can reuse a checkout.
func TestStartKillsProcessesLeftByAnEarlierRun(t *testing.T) {
	testEnv(t)
	dataDir := t.TempDir()
	reg := &procs.Registry{Dir: filepath.Join(dataDir, "work", "procs")}
	orphan := exec.Command("sleep", "300")
	if _, err := reg.Start(orphan); err != nil { // never released, as after a crash
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- orphan.Wait() }()
	t.Cleanup(func() { orphan.Process.Kill() })

	m := startMain(t, dataDir, nil)
	t.Cleanup(func() { m.Close() })
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the recorded process is still running after the server started")
	}
	if ws, ok := orphan.ProcessState.Sys().(syscall.WaitStatus); !ok || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("orphan ended with %v, want SIGKILL", orphan.ProcessState)
	}
	if entries, _ := os.ReadDir(reg.Dir); len(entries) != 0 {
		t.Fatalf("records left after start: %v", entries)
	}
}
