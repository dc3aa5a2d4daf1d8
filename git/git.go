// Package git runs the git command line (never through a shell) to keep a
// mirror of each repository and a checkout per pull request and workspace.
package git

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"

	"github.com/atollhq/atoll/procs"
)

// Run runs git with args in dir and returns its trimmed stdout. env adds to a
// minimal environment; stderr is included in the error.
func Run(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	return run(ctx, nil, dir, env, args...)
}

// run is Run with git's process group recorded in reg (nil: not recorded).
// Either way git runs in its own group and dies with the server.
func run(ctx context.Context, reg *procs.Registry, dir string, env []string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = dir
	cmd.Env = append(baseEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	release, err := reg.Start(cmd)
	if err == nil {
		// Checkouts run in the background; let request handling go first.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, 10)
		err = cmd.Wait()
		release()
	}
	if err != nil {
		msg := strings.TrimSpace(stderr.String())
		if len(msg) > 2000 {
			msg = msg[len(msg)-2000:]
		}
		return "", fmt.Errorf("git %s: %w: %s", args[0], err, msg)
	}
	return strings.TrimSpace(stdout.String()), nil
}

// baseEnv keeps git away from the user's and system's configuration and from
// any terminal prompt, so that runs are reproducible and never hang.
func baseEnv() []string {
	env := []string{
		"GIT_TERMINAL_PROMPT=0",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"LC_ALL=C",
	}
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Remote is a fetch URL split from its credentials, which travel in an HTTP
// header set through the environment: never on disk, in argv or in errors.
type Remote struct {
	URL string   // without userinfo
	Env []string // GIT_CONFIG_* carrying the Authorization header, if any
}

// NewRemoteAuthorization is a remote at rawURL (without userinfo) that
// git fetches with the Authorization header value authorization ("Bearer
// TOKEN", as Azure Repos documents for Entra ID tokens), set as NewRemote
// sets it.
func NewRemoteAuthorization(rawURL, authorization string) (Remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.User != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return Remote{}, fmt.Errorf("git remote: not an http(s) URL without credentials")
	}
	if authorization == "" || strings.ContainsAny(authorization, "\r\n") {
		return Remote{}, fmt.Errorf("git remote: invalid authorization")
	}
	return Remote{URL: rawURL, Env: authEnv(authorization)}, nil
}

func authEnv(authorization string) []string {
	return []string{
		"GIT_CONFIG_COUNT=1",
		"GIT_CONFIG_KEY_0=http.extraHeader",
		"GIT_CONFIG_VALUE_0=Authorization: " + authorization,
	}
}

// NewRemote splits rawURL's userinfo into an Authorization header.
func NewRemote(rawURL string) (Remote, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Remote{}, fmt.Errorf("git remote: invalid URL")
	}
	if u.User == nil || (u.Scheme != "https" && u.Scheme != "http") {
		return Remote{URL: rawURL}, nil
	}
	user := u.User.Username()
	pass, _ := u.User.Password()
	u.User = nil
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	return Remote{URL: u.String(), Env: authEnv("Basic " + auth)}, nil
}

// Files lists the files git tracks in the checkout at dir, relative to it.
func Files(ctx context.Context, dir string) ([]string, error) {
	out, err := run(ctx, nil, dir, nil, "ls-files", "-z")
	if err != nil {
		return nil, fmt.Errorf("list files: %w", err)
	}
	var files []string
	for _, f := range strings.Split(out, "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}
