package procs

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

func setDeathSignal(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// stat is what /proc/<pid>/stat tells about a process.
type stat struct {
	pid    int
	pgrp   int
	start  uint64 // clock ticks after boot
	zombie bool
}

func readStat(pid int) (stat, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return stat{}, err
	}
	return parseStat(pid, b)
}

// parseStat reads the fields after the command name, which may itself hold
// spaces and parentheses: state is field 3, pgrp 5, starttime 22.
func parseStat(pid int, b []byte) (stat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return stat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return stat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	pgrp, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[19], 10, 64)
	if err1 != nil || err2 != nil {
		return stat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	return stat{pid: pid, pgrp: pgrp, start: start, zombie: f[0] == "Z" || f[0] == "X"}, nil
}

// scanGroups lists every process by process group.
func scanGroups() (map[int][]stat, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	groups := map[int][]stat{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil {
			continue // exited meanwhile
		}
		groups[st.pgrp] = append(groups[st.pgrp], st)
	}
	return groups, nil
}

// killGroup sends SIGKILL to the group and waits until none of its members
// is left running, so that a caller may reuse the checkout it worked in.
// A group that gets SIGKILL can fork no new member, so watching the members
// seen before is enough.
func killGroup(pgid int, members []stat) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		alive := false
		for _, m := range members {
			st, err := readStat(m.pid)
			alive = alive || (err == nil && st.pgrp == pgid && st.start == m.start && !st.zombie)
		}
		if !alive {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kill process group %d: still running 10s after SIGKILL", pgid)
		}
	}
}

// bootID tells records of this boot from older ones, whose pids and start
// times mean nothing now.
var bootID = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	id := strings.TrimSpace(string(b))
	if err != nil || id == "" || strings.ContainsAny(id, " \t\n") {
		return "unknown"
	}
	return id
})
