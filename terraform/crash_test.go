package terraform_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atollhq/atoll/procs"
	"github.com/atollhq/atoll/terraform"
)

// The test binary doubles as a server that applies a plan and is killed
// with SIGKILL meanwhile (see crashingServer).
func TestMain(m *testing.M) {
	if os.Getenv("ATOLL_TF_CRASH_DIR") != "" {
		crashingServer()
		return
	}
	os.Exit(m.Run())
}

// crashingServer applies the saved plan in ATOLL_TF_CRASH_DIR/project with
// terraform processes recorded in ATOLL_TF_CRASH_DIR/procs, says RUNNING once
// the provisioner runs, and waits to be killed.
func crashingServer() {
	dir := os.Getenv("ATOLL_TF_CRASH_DIR")
	r := terraform.Runner{Bin: os.Getenv("ATOLL_TF_CRASH_BIN"), Env: strings.Split(os.Getenv("ATOLL_TF_CRASH_ENV"), "\n"),
		Procs: &procs.Registry{Dir: filepath.Join(dir, "procs")}}
	emit := func(l terraform.Line) {
		if strings.Contains(l.Text, "(local-exec): Executing") {
			fmt.Println("RUNNING")
		}
	}
	out, err := r.Apply(context.Background(), filepath.Join(dir, "project"), "tfplan", nil, emit)
	fmt.Printf("ENDED %v\n%s\n", err, out)
	os.Exit(1)
}

func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	return err == nil && !strings.Contains(string(b), ") Z ")
}

// kill -9 of the server: terraform dies with it (parent-death signal), and
// the provisioner's command it leaves in its process group is killed by the
// next start's KillAll.
func TestServerCrashDuringApply(t *testing.T) {
	r := newRunner(t)
	ctx := context.Background()
	arg := fmt.Sprintf("300.%06d", rand.IntN(1e6))
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	writeTF(t, project, `
resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "sleep `+arg+`"
  }
}
`)
	if err := r.Init(ctx, project, nil, nil); err != nil {
		t.Fatalf("init: %v", err)
	}
	if _, _, err := r.Plan(ctx, project, "tfplan", nil, nil); err != nil {
		t.Fatalf("plan: %v", err)
	}

	server := exec.Command(os.Args[0])
	server.Env = append(os.Environ(), "ATOLL_TF_CRASH_DIR="+dir, "ATOLL_TF_CRASH_BIN="+r.Bin,
		"ATOLL_TF_CRASH_ENV="+strings.Join(r.Env, "\n"))
	stdout, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		server.Process.Kill()
		server.Wait()
		for _, p := range sleepers(arg) {
			pid, _ := strconv.Atoi(p)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "RUNNING" {
		t.Fatalf("server said %q (%v)", line, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(sleepers(arg)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the provisioner's sleep did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	reg := &procs.Registry{Dir: filepath.Join(dir, "procs")}
	entries, err := os.ReadDir(reg.Dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("process records while applying = %v, %v; want one (terraform's group)", entries, err)
	}
	tf, _ := strconv.Atoi(entries[0].Name())

	server.Process.Signal(syscall.SIGKILL)
	server.Wait()
	// Without the death signal terraform lives on until its next line of
	// output ("Still creating... [10s elapsed]") meets the closed pipe; with
	// it, terraform is killed at once. The bound tells the two apart.
	for deadline := time.Now().Add(5 * time.Second); alive(tf); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("terraform (pid %d) outlived the killed server", tf)
		}
	}
	if len(sleepers(arg)) == 0 {
		t.Fatal("the provisioner's sleep died with terraform: this test no longer shows what KillAll is for")
	}

	killed, err := reg.KillAll()
	if err != nil || killed != 1 {
		t.Fatalf("KillAll = %d, %v; want 1", killed, err)
	}
	if pids := sleepers(arg); len(pids) > 0 {
		t.Fatalf("sleep %s still running as %v after KillAll", arg, pids)
	}
}
