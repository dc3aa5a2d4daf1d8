package procs_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/atollhq/atoll/procs"
)

// The test binary doubles as a server that starts a process tree through a
// registry and is then killed with SIGKILL (see crashHelper).
func TestMain(m *testing.M) {
	if dir := os.Getenv("ATOLL_PROCS_HELPER_DIR"); dir != "" {
		crashHelper(dir)
		return
	}
	os.Exit(m.Run())
}

// crashHelper starts a shell (the group leader) that backgrounds a sleep
// (a grandchild in the same group), prints both pids, and waits forever.
func crashHelper(dir string) {
	pidFile := filepath.Join(dir, "grandchild.pid")
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > "$1"; wait`, "sh", pidFile)
	reg := &procs.Registry{Dir: filepath.Join(dir, "procs")}
	if _, err := reg.Start(cmd); err != nil {
		fmt.Println("ERROR", err)
		os.Exit(1)
	}
	for {
		b, err := os.ReadFile(pidFile)
		if err == nil && strings.HasSuffix(string(b), "\n") {
			fmt.Printf("READY %d %s", cmd.Process.Pid, b)
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {}
}

// state is the process state letter from /proc, "" when the process is gone.
func state(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return f[0]
}

func running(pid int) bool { s := state(pid); return s != "" && s != "Z" && s != "X" }

func waitGone(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) still running", what, pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func records(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A server killed with SIGKILL takes its child down (parent-death signal);
// a grandchild in the child's group survives, and the next start's KillAll
// kills it.
func TestCrashLeavesNothingAfterKillAll(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	dir := t.TempDir()
	server := exec.Command(os.Args[0])
	server.Env = append(os.Environ(), "ATOLL_PROCS_HELPER_DIR="+dir)
	out, err := server.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { server.Process.Kill(); server.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v (%q)", err, line)
	}
	var leader, grandchild int
	if _, err := fmt.Sscanf(line, "READY %d %d", &leader, &grandchild); err != nil {
		t.Fatalf("helper said %q", line)
	}
	t.Cleanup(func() { syscall.Kill(-leader, syscall.SIGKILL) }) // the group, on failure
	reg := &procs.Registry{Dir: filepath.Join(dir, "procs")}
	if got := records(t, reg.Dir); len(got) != 1 || got[0] != strconv.Itoa(leader) {
		t.Fatalf("records while running = %v, want [%d]", got, leader)
	}

	if err := server.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	server.Wait()
	waitGone(t, leader, "the child of the killed server")
	if !running(grandchild) {
		t.Fatalf("grandchild %d died with the server: this test no longer shows what KillAll is for", grandchild)
	}

	killed, err := reg.KillAll()
	if err != nil || killed != 1 {
		t.Fatalf("KillAll = %d, %v; want 1 group killed", killed, err)
	}
	if running(grandchild) {
		t.Fatalf("grandchild %d still running after KillAll", grandchild)
	}
	if got := records(t, reg.Dir); len(got) != 0 {
		t.Fatalf("records after KillAll = %v", got)
	}
	if killed, err := reg.KillAll(); err != nil || killed != 0 {
		t.Fatalf("second KillAll = %d, %v; want 0", killed, err)
	}
}

// A record that does not prove the running process is the one recorded is
// dropped without killing anything.
func TestKillAllSparesProcessesNotRecorded(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	cases := []struct {
		name       string
		edit       func(f []string) []string // fields: pgid, start time, boot id
		wantKilled int
	}{
		{"as recorded", func(f []string) []string { return f }, 1},
		{"other start time (reused pid)", func(f []string) []string {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			f[1] = strconv.FormatUint(n+1, 10)
			return f
		}, 0},
		{"earlier start time than a member", func(f []string) []string {
			n, _ := strconv.ParseUint(f[1], 10, 64)
			f[1] = strconv.FormatUint(n+100, 10)
			return f
		}, 0},
		{"recorded before a reboot", func(f []string) []string { f[2] = "another-boot"; return f }, 0},
		{"malformed", func(f []string) []string { return f[:2] }, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := &procs.Registry{Dir: t.TempDir()}
			cmd := exec.Command("sleep", "300")
			done, err := reg.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			pid := cmd.Process.Pid
			t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL); cmd.Wait(); done() })
			file := filepath.Join(reg.Dir, strconv.Itoa(pid))
			b, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			f := strings.Fields(string(b))
			if len(f) != 3 {
				t.Fatalf("record %q", b)
			}
			if err := os.WriteFile(file, []byte(strings.Join(c.edit(f), " ")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}

			killed, err := reg.KillAll()
			if err != nil || killed != c.wantKilled {
				t.Fatalf("KillAll = %d, %v; want %d", killed, err, c.wantKilled)
			}
			if alive := running(pid); alive != (c.wantKilled == 0) {
				t.Fatalf("process running after KillAll = %v, want %v", alive, c.wantKilled == 0)
			}
			if got := records(t, reg.Dir); len(got) != 0 {
				t.Fatalf("records after KillAll = %v", got)
			}
		})
	}
}

// done, called after Wait, kills what the command left in its group and
// removes the record.
func TestDoneKillsStrayGroupMembers(t *testing.T) {
	dir := t.TempDir()
	reg := &procs.Registry{Dir: dir}
	pidFile := filepath.Join(t.TempDir(), "pid")
	cmd := exec.Command("sh", "-c", `sleep 300 & echo $! > "$1"`, "sh", pidFile)
	done, err := reg.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	stray, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	t.Cleanup(func() { syscall.Kill(stray, syscall.SIGKILL) })
	if !running(stray) {
		t.Fatal("the backgrounded sleep is not running")
	}
	if len(records(t, dir)) != 1 {
		t.Fatalf("records = %v, want one", records(t, dir))
	}
	done()
	waitGone(t, stray, "the stray group member")
	if got := records(t, dir); len(got) != 0 {
		t.Fatalf("records after done = %v", got)
	}
}
