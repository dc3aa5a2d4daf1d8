package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Readers for the deployment files (Dockerfile, systemd units, env files) and
// for the flags of the real binary, used by deploy_test.go.

// repoRoot is the repository root (tests run in cmd/atoll).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

var usageFlag = regexp.MustCompile(`^\s+-([a-z0-9][a-z0-9-]*)`)

// serverFlags is every flag `atoll server` accepts, as the built binary's
// usage text lists them.
func serverFlags(t *testing.T, bin string) map[string]bool {
	t.Helper()
	// -h prints the usage and exits 2.
	out, _ := exec.Command(bin, "server", "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			flags[m[1]] = true
		}
	}
	if !flags["data-dir"] || !flags["stop-timeout"] {
		t.Fatalf("no flags found in the output of `atoll server -h`:\n%s", out)
	}
	return flags
}

// dockerStage is one FROM section of a Dockerfile.
type dockerStage struct {
	From, Name string
	Instrs     []dockerInstr
}

type dockerInstr struct {
	Cmd  string // upper case: RUN, COPY, ...
	Args string
}

// all returns the arguments of every instruction cmd in the stage.
func (s dockerStage) all(cmd string) []string {
	var args []string
	for _, in := range s.Instrs {
		if in.Cmd == cmd {
			args = append(args, in.Args)
		}
	}
	return args
}

// last returns the arguments of the stage's last instruction cmd: the one
// that takes effect for ENTRYPOINT, CMD, USER and WORKDIR.
func (s dockerStage) last(cmd string) string {
	all := s.all(cmd)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1]
}

// parseDockerfile splits a Dockerfile into stages of instructions, joining
// continuation lines and dropping comments.
func parseDockerfile(t *testing.T, path string) []dockerStage {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var stages []dockerStage
	var logical strings.Builder
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		if line == "" {
			return
		}
		cmd, args, _ := strings.Cut(line, " ")
		in := dockerInstr{Cmd: strings.ToUpper(cmd), Args: strings.TrimSpace(args)}
		if in.Cmd == "FROM" {
			from := strings.Fields(in.Args)
			s := dockerStage{From: from[0]}
			if len(from) == 3 && strings.EqualFold(from[1], "AS") {
				s.Name = from[2]
			}
			stages = append(stages, s)
			return
		}
		if len(stages) == 0 {
			t.Fatalf("%s: %s before FROM", path, in.Cmd)
		}
		stages[len(stages)-1].Instrs = append(stages[len(stages)-1].Instrs, in)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if body, ok := strings.CutSuffix(strings.TrimRight(line, " \t"), `\`); ok {
			logical.WriteString(body + " ")
			continue
		}
		logical.WriteString(line)
		flush()
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	flush()
	if len(stages) == 0 {
		t.Fatalf("%s: no FROM", path)
	}
	return stages
}

// execForm decodes the JSON (exec) form of ENTRYPOINT, CMD or VOLUME.
func execForm(t *testing.T, what, args string) []string {
	t.Helper()
	var argv []string
	if err := json.Unmarshal([]byte(args), &argv); err != nil {
		t.Errorf("%s %s: want the exec form [\"...\"] so that signals reach atoll, not a shell: %v", what, args, err)
	}
	return argv
}

// shellCommands splits a shell command line into simple commands at &&, ||,
// ; and |, each as words. Enough for the RUN lines of our Dockerfile.
func shellCommands(line string) [][]string {
	var cmds [][]string
	for _, part := range regexp.MustCompile(`&&|\|\||;|\|`).Split(line, -1) {
		if words := strings.Fields(part); len(words) > 0 {
			cmds = append(cmds, words)
		}
	}
	return cmds
}

// unitFile is a systemd unit: section → key → values in order.
type unitFile map[string]map[string][]string

func (u unitFile) get(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

func parseUnit(t *testing.T, path string) unitFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	u := unitFile{}
	section := ""
	var pending string
	for _, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if pending == "" && (line == "" || line[0] == '#' || line[0] == ';') {
			continue
		}
		if body, ok := strings.CutSuffix(line, `\`); ok {
			pending += body + " "
			continue
		}
		line, pending = pending+line, ""
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok || section == "" {
			t.Fatalf("%s: not a setting: %q", path, line)
		}
		key = strings.TrimSpace(key)
		u[section][key] = append(u[section][key], strings.TrimSpace(value))
	}
	return u
}

var timespanPart = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*([a-z]*)`)

// systemdTimespan parses a systemd time span ("6min", "5min 30s", "90").
func systemdTimespan(s string) (time.Duration, error) {
	units := map[string]time.Duration{
		"": time.Second, "s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"ms": time.Millisecond, "msec": time.Millisecond,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
	}
	var total time.Duration
	if strings.TrimSpace(timespanPart.ReplaceAllString(s, "")) != "" || strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("time span %q: not understood", s)
	}
	for _, m := range timespanPart.FindAllStringSubmatch(s, -1) {
		unit, ok := units[m[2]]
		if !ok {
			return 0, fmt.Errorf("time span %q: unknown unit %q", s, m[2])
		}
		n, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, fmt.Errorf("time span %q: %w", s, err)
		}
		total += time.Duration(n * float64(unit))
	}
	return total, nil
}

// envLine is one NAME=value line of an env file; Commented is true for an
// example left commented out (#NAME=value), which users uncomment as is.
type envLine struct {
	Name, Value string
	Commented   bool
}

var envAssign = regexp.MustCompile(`^#?\s*([A-Z][A-Z0-9_]*)=(.*)$`)

func parseEnvFile(t *testing.T, path string) []envLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []envLine
	for _, raw := range strings.Split(string(data), "\n") {
		line := strings.TrimSpace(raw)
		if line == "" {
			continue
		}
		m := envAssign.FindStringSubmatch(line)
		if m == nil {
			if line[0] != '#' {
				t.Errorf("%s: not NAME=value: %q", path, line)
			}
			continue
		}
		lines = append(lines, envLine{Name: m[1], Value: strings.Trim(m[2], `"'`), Commented: line[0] == '#'})
	}
	return lines
}

// envValue is the value of an uncommented NAME in lines, or "".
func envValue(lines []envLine, name string) string {
	for _, l := range lines {
		if l.Name == name && !l.Commented {
			return l.Value
		}
	}
	return ""
}
