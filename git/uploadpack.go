package git

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
)

// gitProtocol is a Git-Protocol header git may pass on: version=2 and
// nothing stranger (it reaches upload-pack's environment).
var gitProtocol = regexp.MustCompile(`^version=[0-9]$`)

// UploadPack serves git's smart HTTP upload-pack of the bare repository
// dir: with advertise, the ref advertisement (GET info/refs); else the
// answer to the request read from in (POST git-upload-pack). Only fetches
// are served: there is no receive-pack here. protocol is the client's
// Git-Protocol header ("" for the original protocol).
func UploadPack(ctx context.Context, dir string, advertise bool, protocol string, in io.Reader, out io.Writer) error {
	args := []string{"upload-pack", "--stateless-rpc"}
	if advertise {
		args = append(args, "--advertise-refs")
	}
	cmd := exec.CommandContext(ctx, "git", append(args, dir)...)
	cmd.Env = baseEnv()
	v2 := gitProtocol.MatchString(protocol) && protocol != "version=0" && protocol != "version=1"
	if v2 {
		cmd.Env = append(cmd.Env, "GIT_PROTOCOL="+protocol)
	}
	if advertise && !v2 {
		// The smart HTTP advertisement starts with the service's name, as
		// git http-backend writes it; protocol v2 has none.
		if _, err := io.WriteString(out, pktLine("# service=git-upload-pack\n")+"0000"); err != nil {
			return err
		}
	}
	var stderr strings.Builder
	cmd.Stdin, cmd.Stdout, cmd.Stderr = in, out, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git upload-pack: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// pktLine frames s as a git pkt-line.
func pktLine(s string) string { return fmt.Sprintf("%04x%s", len(s)+4, s) }

// Mirror brings the bare mirror of s's repository to s.HeadSHA (fetching
// only when needed) and returns its path: what UploadPack serves.
func (w *Workdirs) Mirror(ctx context.Context, s Spec) (string, error) {
	if !validKey(s.Key) {
		return "", fmt.Errorf("mirror: invalid repository key")
	}
	return w.syncMirror(ctx, s)
}
