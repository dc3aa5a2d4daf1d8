// Package procs starts Atoll's child processes (Terraform, git) so that none
// outlives the server unnoticed. Each runs in its own process group; its
// leader gets SIGKILL when the server dies (Linux), and the group is recorded
// in a directory so that the next start, or a node that lost its lease, can
// kill whatever a crash left running (a provisioner's command, a provider).
package procs

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Registry records running process groups as files in Dir, one per group.
// A nil Registry or an empty Dir records nothing; Start still isolates and
// ties the process to the server.
type Registry struct {
	Dir string // e.g. <work-dir>/procs
}

// Start starts cmd in a new process group whose leader is killed when this
// process dies, and records the group. Call release once cmd.Wait has
// returned: it kills what is left of the group (a stray grandchild) and
// removes the record.
func (r *Registry) Start(cmd *exec.Cmd) (release func(), err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setDeathSignal(cmd.SysProcAttr)
	if err := startOnLockedThread(cmd); err != nil {
		return nil, err
	}
	pgid := cmd.Process.Pid
	file, err := r.record(pgid)
	if err != nil {
		// A group that a later start could not find is not started at all.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		_ = cmd.Wait()
		return nil, err
	}
	return func() {
		// The group id cannot have been reused while members exist, and
		// without members the kill is a no-op.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		if file != "" {
			_ = os.Remove(file)
		}
	}, nil
}

// record writes "<pgid> <start time> <boot id>" to Dir/<pgid>, atomically.
func (r *Registry) record(pgid int) (string, error) {
	if r == nil || r.Dir == "" {
		return "", nil
	}
	st, err := readStat(pgid)
	if err != nil {
		return "", fmt.Errorf("record process %d: %w", pgid, err)
	}
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return "", fmt.Errorf("record process %d: %w", pgid, err)
	}
	file := filepath.Join(r.Dir, strconv.Itoa(pgid))
	tmp := file + ".tmp"
	line := fmt.Sprintf("%d %d %s\n", pgid, st.start, bootID())
	if err := os.WriteFile(tmp, []byte(line), 0o644); err != nil {
		return "", fmt.Errorf("record process %d: %w", pgid, err)
	}
	if err := os.Rename(tmp, file); err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("record process %d: %w", pgid, err)
	}
	return file, nil
}

// KillAll kills (SIGKILL) every recorded process group that is still
// running and provably the one recorded, waits until its members are gone,
// and removes the records. A group whose number now belongs to another
// process (a different start time, or a member older than the recorded
// leader) or that was recorded before a reboot is left alone. The start-up
// path calls it before any checkout is reused; fencing calls it to stop all
// Terraform work of this node, and must first stop new processes from
// starting: one started during the call may survive it.
func (r *Registry) KillAll() (killed int, err error) {
	if r == nil || r.Dir == "" {
		return 0, nil
	}
	entries, err := os.ReadDir(r.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	} else if err != nil {
		return 0, fmt.Errorf("kill recorded processes: %w", err)
	}
	var recs []record
	var errs []error
	for _, e := range entries {
		file := filepath.Join(r.Dir, e.Name())
		if strings.HasSuffix(e.Name(), ".tmp") {
			// Written by a Start that did not finish: it never ran
			// unrecorded for long, and its process got the death signal.
			os.Remove(file)
			continue
		}
		rec, err := readRecord(file)
		if err != nil {
			// Unverifiable: never kill on a guess.
			os.Remove(file)
			continue
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return 0, nil
	}
	groups, err := scanGroups()
	if err != nil {
		return 0, fmt.Errorf("kill recorded processes: %w", err)
	}
	boot := bootID()
	for _, rec := range recs {
		if rec.boot == boot && ours(rec, groups[rec.pgid]) {
			if err := killGroup(rec.pgid, groups[rec.pgid]); err != nil {
				errs = append(errs, err)
				continue // keep the record: the next call tries again
			}
			killed++
		}
		if err := os.Remove(rec.file); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("kill recorded processes: %w", err))
		}
	}
	return killed, errors.Join(errs...)
}

type record struct {
	file  string
	pgid  int
	start uint64
	boot  string
}

func readRecord(file string) (record, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return record{}, err
	}
	f := strings.Fields(string(b))
	if len(f) != 3 {
		return record{}, fmt.Errorf("process record %s: malformed", file)
	}
	pgid, err1 := strconv.Atoi(f[0])
	start, err2 := strconv.ParseUint(f[1], 10, 64)
	if err1 != nil || err2 != nil || pgid <= 1 || strconv.Itoa(pgid) != filepath.Base(file) {
		return record{}, fmt.Errorf("process record %s: malformed", file)
	}
	return record{file: file, pgid: pgid, start: start, boot: f[2]}, nil
}

// ours reports whether the live members of a group are the recorded one's:
// its leader, if still there, started when recorded, and every member
// started no earlier (members are forked by the leader's descendants). A
// group with no live member has nothing to kill.
func ours(rec record, members []stat) bool {
	alive := false
	for _, m := range members {
		if m.pid == rec.pgid && m.start != rec.start {
			return false
		}
		if m.start < rec.start {
			return false
		}
		alive = alive || !m.zombie
	}
	return alive
}

// spawner is one goroutine locked to its OS thread for the life of the
// process. Linux sends the death signal when the *thread* that forked the
// child exits, and Go ends threads (when a goroutine locked to one exits),
// so children are forked only from a thread that never ends.
var spawner struct {
	once sync.Once
	reqs chan spawnReq
}

type spawnReq struct {
	cmd *exec.Cmd
	err chan error
}

func startOnLockedThread(cmd *exec.Cmd) error {
	spawner.once.Do(func() {
		spawner.reqs = make(chan spawnReq)
		go func() {
			runtime.LockOSThread() // never unlocked: this thread must outlive every child
			for req := range spawner.reqs {
				req.err <- req.cmd.Start()
			}
		}()
	})
	errc := make(chan error, 1)
	spawner.reqs <- spawnReq{cmd: cmd, err: errc}
	return <-errc
}
