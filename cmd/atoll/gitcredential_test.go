package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// `atoll git-credential` is git's credential helper protocol on stdin and
// stdout; outside a run Atoll started it answers nothing and says why.
func TestGitCredentialCommand(t *testing.T) {
	bin := atollBinary(t)
	cases := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{"get outside a run", []string{"git-credential", "get"}, "protocol=https\nhost=github.com\n\n", 1, "ATOLL_CREDENTIAL_SOCKET and ATOLL_CREDENTIAL_NONCE must be set"},
		{"store is a no-op", []string{"git-credential", "store"}, "protocol=https\nhost=github.com\nusername=u\npassword=p\n\n", 0, ""},
		{"erase is a no-op", []string{"git-credential", "erase"}, "protocol=https\nhost=github.com\n\n", 0, ""},
		{"no action", []string{"git-credential"}, "", 1, "usage: atoll git-credential"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Env = []string{"PATH=/usr/bin:/bin"}
			cmd.Stdin = strings.NewReader(c.stdin)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code || !strings.Contains(stderr.String(), c.stderr) || stdout.Len() != 0 {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and stderr containing %q", code, stdout.String(), stderr.String(), c.code, c.stderr)
			}
		})
	}
}
