package main_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// The deployment files (fly.toml, Dockerfile, deploy/systemd) are not run by
// CI: no Docker engine, Fly.io or systemd here. These tests hold them to the
// code instead: the command and its flags, the environment variable names,
// the health check route, the make targets, the stop timeouts. The Helm
// chart (deploy/helm/atoll) has its own tests: deploy_helm_test.go.

// pendingFlags are flags the deployment files already use but `atoll server`
// does not have yet (docs/ha.md). Remove each one when it lands: the test
// fails until you do, and then checks it like any other flag.
var pendingFlags = map[string]bool{}

// flyMaxKillTimeout is the longest kill_timeout Fly.io accepts.
const flyMaxKillTimeout = 300 * time.Second

// closeBudget is what Main.Close adds to --stop-timeout: up to 10 s of HTTP
// shutdown, then 30 s between Terraform's SIGINT and its SIGKILL.
const closeBudget = 40 * time.Second

// secretName matches variables that hold secrets: never in a committed file.
var secretName = regexp.MustCompile(`TOKEN|SECRET|PASSWORD`)

// flyConfig is the part of fly.toml Atoll uses. Keys outside it fail the test
// (a typo such as min_machine_running would otherwise be silently ignored).
type flyConfig struct {
	App           string `toml:"app"`
	PrimaryRegion string `toml:"primary_region"`
	KillSignal    string `toml:"kill_signal"`
	KillTimeout   any    `toml:"kill_timeout"` // seconds, or a duration string
	Build         struct {
		Dockerfile string `toml:"dockerfile"`
	} `toml:"build"`
	Deploy struct {
		Strategy string `toml:"strategy"`
	} `toml:"deploy"`
	Env          map[string]string `toml:"env"`
	Processes    map[string]string `toml:"processes"`
	Experimental struct {
		Cmd []string `toml:"cmd"`
	} `toml:"experimental"`
	HTTPService struct {
		Processes          []string `toml:"processes"`
		InternalPort       int      `toml:"internal_port"`
		ForceHTTPS         bool     `toml:"force_https"`
		AutoStopMachines   any      `toml:"auto_stop_machines"` // "off" or false
		AutoStartMachines  bool     `toml:"auto_start_machines"`
		MinMachinesRunning int      `toml:"min_machines_running"`
		Checks             []struct {
			Method      string `toml:"method"`
			Path        string `toml:"path"`
			Interval    string `toml:"interval"`
			Timeout     string `toml:"timeout"`
			GracePeriod string `toml:"grace_period"`
		} `toml:"checks"`
	} `toml:"http_service"`
	Checks  map[string]any `toml:"checks"`
	Restart []struct {
		Policy    string   `toml:"policy"`
		Processes []string `toml:"processes"`
	} `toml:"restart"`
	Mounts flyMounts `toml:"mounts"`
	VM     []struct {
		Size   string `toml:"size"`
		Memory string `toml:"memory"`
	} `toml:"vm"`
}

type flyMount struct{ Source, Destination string }

// flyMounts reads both [mounts] (one table) and [[mounts]] (an array).
type flyMounts []flyMount

func (m *flyMounts) UnmarshalTOML(v any) error {
	tables, ok := v.([]map[string]any)
	if t, one := v.(map[string]any); one {
		tables, ok = []map[string]any{t}, true
	}
	if !ok {
		return fmt.Errorf("mounts: want a table, got %T", v)
	}
	for _, t := range tables {
		src, _ := t["source"].(string)
		dst, _ := t["destination"].(string)
		*m = append(*m, flyMount{Source: src, Destination: dst})
	}
	return nil
}

func TestDeployFlyToml(t *testing.T) {
	root := repoRoot(t)
	var fly flyConfig
	md, err := toml.DecodeFile(filepath.Join(root, "fly.toml"), &fly)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range md.Undecoded() {
		if !strings.HasPrefix(k.String(), "mounts.") {
			t.Errorf("fly.toml: key %q is not one this test knows: a typo, or add it to flyConfig", k)
		}
	}
	flags := serverFlags(t, buildAtoll(t))
	defaults := main.NewMain().Config

	// The command: the image's ENTRYPOINT plus the process command, which
	// replaces the image's CMD (Fly keeps the ENTRYPOINT).
	if fly.Build.Dockerfile == "" {
		t.Fatal("fly.toml: [build] dockerfile is not set")
	}
	stages := parseDockerfile(t, filepath.Join(root, fly.Build.Dockerfile))
	image := stages[len(stages)-1]
	argv := execForm(t, "ENTRYPOINT", image.last("ENTRYPOINT"))
	switch {
	case fly.Processes["app"] != "":
		argv = append(argv, strings.Fields(fly.Processes["app"])...)
	case len(fly.Experimental.Cmd) > 0:
		argv = append(argv, fly.Experimental.Cmd...)
	default:
		argv = append(argv, execForm(t, "CMD", image.last("CMD"))...)
	}
	checkServerCommand(t, "fly.toml", argv, flags)
	if len(fly.Processes) > 0 && !slices.Contains(fly.HTTPService.Processes, "app") {
		t.Errorf("fly.toml: [http_service] processes = %v: the app process (atoll server) gets no traffic", fly.HTTPService.Processes)
	}

	checkEnvNames(t, "fly.toml [env]", fly.Env, flags)
	for name := range fly.Env {
		if secretName.MatchString(name) {
			t.Errorf("fly.toml: %s in [env]: set secrets with `fly secrets set`", name)
		}
	}

	// Two Machines that are never stopped for being idle.
	if fly.HTTPService.MinMachinesRunning != 2 {
		t.Errorf("fly.toml: min_machines_running = %d, want 2 (active and standby)", fly.HTTPService.MinMachinesRunning)
	}
	if stop := fmt.Sprint(fly.HTTPService.AutoStopMachines); stop != "off" && stop != "false" {
		t.Errorf("fly.toml: auto_stop_machines = %v, want \"off\": the proxy would stop the idle standby", fly.HTTPService.AutoStopMachines)
	}
	port := defaults.Port
	if p := fly.Env["ATOLL_PORT"]; p != "" {
		fmt.Sscan(p, &port)
	}
	if fly.HTTPService.InternalPort != port {
		t.Errorf("fly.toml: internal_port = %d, atoll listens on %d", fly.HTTPService.InternalPort, port)
	}

	// Health checks: service checks (routing, never restarts), on a route
	// the real server answers with 2xx, as Fly requires.
	if len(fly.Checks) > 0 {
		t.Errorf("fly.toml: top-level [checks] %v: they do not affect routing; use [[http_service.checks]]", fly.Checks)
	}
	if len(fly.HTTPService.Checks) == 0 {
		t.Fatal("fly.toml: no [[http_service.checks]]")
	}
	var paths []string
	for _, c := range fly.HTTPService.Checks {
		if c.Method != "" && !strings.EqualFold(c.Method, "GET") {
			t.Errorf("fly.toml: check %s uses %s; atoll's health routes are GET", c.Path, c.Method)
		}
		for _, d := range []string{c.Interval, c.Timeout, c.GracePeriod} {
			if _, err := time.ParseDuration(d); err != nil {
				t.Errorf("fly.toml: check %s: %v", c.Path, err)
			}
		}
		paths = append(paths, c.Path)
		// A standby answers 503 on /readyz, and a rolling deploy waits for
		// every check of each updated Machine to pass: it would time out.
		if c.Path == "/readyz" && fly.Deploy.Strategy != "immediate" {
			t.Errorf("fly.toml: [deploy] strategy = %q with a /readyz check: the standby's 503 fails a rolling deploy; want \"immediate\"", fly.Deploy.Strategy)
		}
	}
	for p, code := range getFromServer(t, paths) {
		if code < 200 || code > 299 {
			t.Errorf("fly.toml: health check GET %s: the server answers %d, Fly wants 2xx", p, code)
		}
	}

	// The volume holds the data dir.
	if len(fly.Mounts) != 1 {
		t.Fatalf("fly.toml: %d mounts, want 1 (a volume per Machine)", len(fly.Mounts))
	}
	mount := fly.Mounts[0]
	if mount.Source == "" || mount.Destination == "" {
		t.Errorf("fly.toml: mount %+v lacks a source or destination", mount)
	}
	if dataDir := fly.Env["ATOLL_DATA_DIR"]; path.Clean(dataDir) != path.Clean(mount.Destination) {
		t.Errorf("fly.toml: ATOLL_DATA_DIR = %q is not the volume's mount point %q", dataDir, mount.Destination)
	}

	// Stopping: atoll must get to finish within Fly's kill_timeout.
	if fly.KillSignal != "SIGTERM" && fly.KillSignal != "SIGINT" {
		t.Errorf("fly.toml: kill_signal = %q; atoll stops gracefully on SIGTERM or SIGINT", fly.KillSignal)
	}
	var kill time.Duration
	switch v := fly.KillTimeout.(type) {
	case int64:
		kill = time.Duration(v) * time.Second
	case string:
		if kill, err = time.ParseDuration(v); err != nil {
			t.Errorf("fly.toml: kill_timeout: %v", err)
		}
	default:
		t.Errorf("fly.toml: kill_timeout = %v (%T): want seconds", v, v)
	}
	stop := stopTimeout(t, "fly.toml", fly.Env["ATOLL_STOP_TIMEOUT"], defaults.StopTimeout)
	if kill > flyMaxKillTimeout {
		t.Errorf("fly.toml: kill_timeout %v is over Fly's maximum %v", kill, flyMaxKillTimeout)
	}
	if kill < stop+closeBudget {
		t.Errorf("fly.toml: kill_timeout %v < stop timeout %v + %v: running jobs would be killed", kill, stop, closeBudget)
	}
}

func TestDeployDockerfile(t *testing.T) {
	root := repoRoot(t)
	stages := parseDockerfile(t, filepath.Join(root, "Dockerfile"))
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and a runtime stage", len(stages))
	}
	build, image := stages[0], stages[len(stages)-1]

	// The build stage uses the Go of go.mod and the make targets CI uses.
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if goVersion == nil || !strings.HasPrefix(build.From, "golang:"+string(goVersion[1])+"-") {
		t.Errorf("Dockerfile: build stage FROM %s, go.mod wants Go %s", build.From, goVersion[1])
	}
	workdir := build.last("WORKDIR")
	var targets []string
	for _, run := range build.all("RUN") {
		for _, words := range shellCommands(run) {
			for len(words) > 0 && strings.Contains(words[0], "=") { // VAR=value make ...
				words = words[1:]
			}
			if len(words) == 0 || words[0] != "make" {
				continue
			}
			for _, w := range words[1:] {
				if !strings.HasPrefix(w, "-") && !strings.Contains(w, "=") {
					targets = append(targets, w)
				}
			}
		}
	}
	if !slices.Contains(targets, "build") {
		t.Errorf("Dockerfile: make targets %v do not include build (what CI builds)", targets)
	}
	builtTerraform := false
	for _, target := range targets {
		// The Makefile's rules are $(CURDIR)/bin/...: in the image CURDIR is
		// the build stage's WORKDIR, here it is the repository root.
		local := target
		if rel, ok := strings.CutPrefix(target, workdir+"/"); ok && workdir != "" {
			local = filepath.Join(root, rel)
		}
		// -B: print the recipe even where the target is already built.
		out, err := exec.Command("make", "-n", "-B", "-C", root, local).CombinedOutput()
		if err != nil {
			t.Errorf("Dockerfile: make %s: not a target of the Makefile (make -n %s: %v)\n%s", target, local, err, out)
			continue
		}
		if strings.Contains(string(out), "github.com/hashicorp/terraform@v") {
			builtTerraform = true
		}
	}
	if !builtTerraform {
		t.Errorf("Dockerfile: no make target builds Terraform the way the Makefile does (targets %v)", targets)
	}

	// The runtime stage.
	if image.From != "debian:bookworm-slim" {
		t.Errorf("Dockerfile: runtime stage FROM %s, want debian:bookworm-slim", image.From)
	}
	var installed []string
	for _, run := range image.all("RUN") {
		for _, words := range shellCommands(run) {
			if len(words) > 2 && words[0] == "apt-get" && words[1] == "install" {
				installed = append(installed, words[2:]...)
			}
		}
	}
	for _, pkg := range []string{"git", "ca-certificates", "tini"} {
		if !slices.Contains(installed, pkg) {
			t.Errorf("Dockerfile: runtime stage does not apt-get install %s (installs %v)", pkg, installed)
		}
	}
	for _, bin := range []string{"atoll", "terraform"} {
		found := false
		for _, cp := range image.all("COPY") {
			words := strings.Fields(cp)
			if len(words) == 3 && words[0] == "--from="+build.Name && path.Base(words[1]) == bin &&
				path.Clean(words[2]) == "/usr/local/bin/"+bin {
				found = true
			}
		}
		if !found {
			t.Errorf("Dockerfile: runtime stage does not COPY --from=%s .../%s /usr/local/bin/%s", build.Name, bin, bin)
		}
	}
	if user := image.last("USER"); user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("Dockerfile: runtime USER %q, want a non-root user", user)
	}
	argv := stripInit(append(execForm(t, "ENTRYPOINT", image.last("ENTRYPOINT")), execForm(t, "CMD", image.last("CMD"))...))
	if len(argv) != 2 || argv[0] != "atoll" || argv[1] != "server" {
		t.Errorf("Dockerfile: ENTRYPOINT + CMD run %v, want atoll server", argv)
	}
	if len(argv) > 0 && !strings.Contains(image.last("ENTRYPOINT"), "tini") {
		t.Errorf("Dockerfile: no init in ENTRYPOINT: nothing would reap the processes Terraform orphans")
	}
	if expose := image.last("EXPOSE"); expose != fmt.Sprint(main.NewMain().Config.Port) {
		t.Errorf("Dockerfile: EXPOSE %q, atoll listens on %d", expose, main.NewMain().Config.Port)
	}
	volumes := execForm(t, "VOLUME", image.last("VOLUME"))
	if !slices.Contains(volumes, "/data") || !strings.Contains(image.last("ENV"), "ATOLL_DATA_DIR=/data") {
		t.Errorf("Dockerfile: want VOLUME [\"/data\"] and ENV ATOLL_DATA_DIR=/data, have %v and %q", volumes, image.last("ENV"))
	}

	// COPY . . must not bring a host bin/ over the Terraform built above.
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^/?bin/?$`).Match(ignore) {
		t.Errorf(".dockerignore does not exclude bin/")
	}
}

func TestDeploySystemdUnit(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "deploy", "systemd")
	unitPath := filepath.Join(dir, "atoll.service")
	unit := parseUnit(t, unitPath)
	bin := buildAtoll(t)
	flags := serverFlags(t, bin)
	defaults := main.NewMain().Config

	svc := func(key string) string { return unit.get("Service", key) }
	if u := svc("User"); u == "" || u == "root" || u == "0" {
		t.Errorf("atoll.service: User=%q, want a dedicated user", u)
	}
	execStart := unit["Service"]["ExecStart"]
	if len(execStart) != 1 {
		t.Fatalf("atoll.service: %d ExecStart lines, want 1", len(execStart))
	}
	argv := strings.Fields(strings.TrimLeft(execStart[0], "-@+!:"))
	checkServerCommand(t, "atoll.service ExecStart", argv, flags)

	for key, want := range map[string]string{
		"Restart":         "always",
		"KillMode":        "mixed", // SIGTERM to atoll only; SIGKILL to Terraform leftovers at the end
		"NoNewPrivileges": "yes",
		"ProtectSystem":   "strict",
		"PrivateTmp":      "yes",
		"StateDirectory":  "atoll",
	} {
		if got := svc(key); got != want {
			t.Errorf("atoll.service: %s=%q, want %q", key, got, want)
		}
	}

	// The env files: the example is installed as /etc/atoll/atoll.env, the
	// secrets file lives under /etc/atoll/secrets.
	envFiles := unit["Service"]["EnvironmentFile"]
	for _, want := range []string{"/etc/atoll/atoll.env", "/etc/atoll/secrets/"} {
		if !slices.ContainsFunc(envFiles, func(f string) bool { return strings.HasPrefix(strings.TrimPrefix(f, "-"), want) }) {
			t.Errorf("atoll.service: no EnvironmentFile=%s... (have %v)", want, envFiles)
		}
	}
	settings := parseEnvFile(t, filepath.Join(dir, "atoll.env"))
	secrets := parseEnvFile(t, filepath.Join(dir, "secrets.env.example"))
	for _, file := range []struct {
		name  string
		lines []envLine
	}{{"atoll.env", settings}, {"secrets.env.example", secrets}} {
		vars := map[string]string{}
		for _, l := range file.lines {
			vars[l.Name] = l.Value
		}
		checkEnvNames(t, file.name, vars, flags)
	}
	for _, l := range settings {
		if secretName.MatchString(l.Name) {
			t.Errorf("atoll.env: %s belongs in the secrets file", l.Name)
		}
	}
	if len(secrets) == 0 {
		t.Error("secrets.env.example: no variables")
	}
	for _, l := range secrets {
		if l.Value != "" {
			t.Errorf("secrets.env.example: %s has a value: commit no secret", l.Name)
		}
	}

	// The data dir is systemd's state directory, writable despite
	// ProtectSystem=strict.
	stateDir := "/var/lib/" + svc("StateDirectory")
	if got := envValue(settings, "ATOLL_DATA_DIR"); path.Clean(got) != stateDir {
		t.Errorf("atoll.env: ATOLL_DATA_DIR=%q, want the StateDirectory %s", got, stateDir)
	}
	if rw := strings.Fields(svc("ReadWritePaths")); !slices.Contains(rw, stateDir) {
		t.Errorf("atoll.service: ReadWritePaths=%v does not include %s", rw, stateDir)
	}

	stopWait, err := systemdTimespan(svc("TimeoutStopSec"))
	if err != nil {
		t.Fatalf("atoll.service: TimeoutStopSec: %v", err)
	}
	stop := stopTimeout(t, "atoll.env", envValue(settings, "ATOLL_STOP_TIMEOUT"), defaults.StopTimeout)
	if stopWait <= stop+closeBudget {
		t.Errorf("atoll.service: TimeoutStopSec %v <= stop timeout %v + %v: systemd would kill running jobs", stopWait, stop, closeBudget)
	}

	// systemd's own parser, where there is one: unknown keys or bad values
	// are only warned about, so any output fails.
	if analyze, err := exec.LookPath("systemd-analyze"); err == nil {
		data, err := os.ReadFile(unitPath)
		if err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(t.TempDir(), "atoll.service")
		os.WriteFile(copyPath, []byte(strings.ReplaceAll(string(data), argv[0], bin)), 0o644)
		out, err := exec.Command(analyze, "verify", copyPath).CombinedOutput()
		if err != nil || len(strings.TrimSpace(string(out))) > 0 {
			t.Errorf("systemd-analyze verify atoll.service: %v\n%s", err, out)
		}
	} else {
		t.Log("systemd-analyze not installed: unit syntax not verified by systemd")
	}
}

// TestDeployDocs checks that docs/ha.md names files that exist and lists
// every flag that is still pending.
func TestDeployDocs(t *testing.T) {
	root := repoRoot(t)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ha.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := regexp.MustCompile(`(?:fly\.toml|Dockerfile|\.dockerignore|(?:deploy|docs|cmd)/[A-Za-z0-9_./-]+[A-Za-z0-9])`).FindAllString(string(doc), -1)
	if len(files) == 0 {
		t.Fatal("docs/ha.md names no deployment file")
	}
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(root, f)); err != nil {
			t.Errorf("docs/ha.md names %s: %v", f, err)
		}
	}
	for flag := range pendingFlags {
		if !strings.Contains(string(doc), flag) {
			t.Errorf("docs/ha.md does not mention the pending --%s", flag)
		}
	}
}

// checkServerCommand checks that argv runs `atoll server` with flags that
// exist (or are pending).
func checkServerCommand(t *testing.T, where string, argv []string, flags map[string]bool) {
	t.Helper()
	argv = stripInit(argv)
	if len(argv) < 2 || path.Base(argv[0]) != "atoll" || argv[1] != "server" {
		t.Errorf("%s: runs %v, want atoll server ...", where, argv)
		return
	}
	for i, a := range argv[2:] {
		if !strings.HasPrefix(a, "-") {
			// A flag's value, or an argument atoll server refuses.
			if prev := argv[1+i]; !strings.HasPrefix(prev, "-") || strings.Contains(prev, "=") {
				t.Errorf("%s: argument %q in %v: atoll server takes flags only", where, a, argv)
			}
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		checkFlag(t, where, "--"+name, name, flags)
	}
}

// checkEnvNames checks that every ATOLL_ variable names a flag: atoll reads
// ATOLL_<FLAG> only for flags it has and ignores the rest.
func checkEnvNames(t *testing.T, where string, env map[string]string, flags map[string]bool) {
	t.Helper()
	for name := range env {
		flag, ok := strings.CutPrefix(name, "ATOLL_")
		if !ok {
			continue
		}
		checkFlag(t, where, name, strings.ToLower(strings.ReplaceAll(flag, "_", "-")), flags)
	}
}

func checkFlag(t *testing.T, where, as, name string, flags map[string]bool) {
	t.Helper()
	switch {
	case flags[name] && pendingFlags[name]:
		t.Errorf("--%s exists now: remove it from pendingFlags in deploy_test.go", name)
	case !flags[name] && !pendingFlags[name]:
		t.Errorf("%s: %s: `atoll server` has no flag --%s", where, as, name)
	}
}

// stripInit drops an init wrapper (tini ... --) in front of the command.
func stripInit(argv []string) []string {
	if len(argv) > 0 && path.Base(argv[0]) == "tini" {
		if i := slices.Index(argv, "--"); i >= 0 {
			return argv[i+1:]
		}
		return argv[1:]
	}
	return argv
}

// stopTimeout is the --stop-timeout a deployment runs with.
func stopTimeout(t *testing.T, where, env string, def time.Duration) time.Duration {
	t.Helper()
	if env == "" {
		return def
	}
	d, err := time.ParseDuration(env)
	if err != nil {
		t.Errorf("%s: ATOLL_STOP_TIMEOUT: %v", where, err)
	}
	return d
}

// getFromServer starts the real server and returns the status of a GET of
// each path. A path no route serves must come back 404 (the pages' catch-all
// route answers every GET), or the answers would prove nothing.
func getFromServer(t *testing.T, paths []string) map[string]int {
	t.Helper()
	m := main.NewMain()
	m.Config.Addr = "127.0.0.1:0"
	m.Config.DataDir = t.TempDir()
	m.Config.LogLevel = "error"
	m.Config.APISecret = testAPISecret
	// Health routes do not run Terraform; a missing binary is only warned about.
	m.Config.TerraformBin = filepath.Join(t.TempDir(), "terraform")
	if err := m.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	get := func(p string) int {
		resp, err := authClient.Get(m.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get("/no-such-route-for-deploy-test"); code != http.StatusNotFound {
		t.Fatalf("GET of an unknown path: %d, want 404", code)
	}
	codes := map[string]int{}
	for _, p := range paths {
		codes[p] = get(p)
	}
	return codes
}
