package terraform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/atollhq/atoll"
)

// MaxShowJSON bounds `show -json` output held in memory.
const MaxShowJSON = 256 << 20

// Init runs `terraform init` without prompts or colors, plus extra args.
func (r Runner) Init(ctx context.Context, dir string, extra []string, emit func(Line)) error {
	_, err := r.Run(ctx, dir, InitArgv(extra), emit)
	return err
}

// The argument vectors below put the extra arguments first and Atoll's own
// flags last. Terraform reads its flags with Go's flag package, where the
// last of a repeated flag wins, so even an extra argument that slipped past
// the checks (command's allowlist) could not replace Atoll's plan
// file, input or color settings. Flags must come before the positional
// arguments, which go last.

// InitArgv is the argument vector of `terraform init`.
func InitArgv(extra []string) []string {
	return append(append([]string{"init"}, extra...), "-input=false", "-no-color")
}

// PlanArgv is the argument vector of `terraform plan` writing planFile.
func PlanArgv(planFile string, extra []string) []string {
	return append(append([]string{"plan"}, extra...), "-input=false", "-no-color", "-detailed-exitcode", "-out="+planFile)
}

// ApplyArgv is the argument vector of `terraform apply` of planFile.
func ApplyArgv(planFile string, extra []string) []string {
	return append(append([]string{"apply"}, extra...), "-input=false", "-no-color", planFile)
}

// SelectWorkspace selects workspace, creating it if needed. The default
// workspace always exists, so it costs a terraform run only when another
// workspace was left selected in dir.
func (r Runner) SelectWorkspace(ctx context.Context, dir, workspace string, emit func(Line)) error {
	if workspace == "" || workspace == atoll.DefaultWorkspace {
		if current, err := r.currentWorkspace(dir); err != nil || current == atoll.DefaultWorkspace {
			return err
		}
		workspace = atoll.DefaultWorkspace
	}
	out, err := r.Run(ctx, dir, []string{"workspace", "select", "-or-create=true", "-no-color", workspace}, emit)
	if err == nil || !strings.Contains(out, "-or-create") {
		return err
	}
	// Before terraform 1.4 there is no -or-create: select, else create.
	if _, err = r.Run(ctx, dir, []string{"workspace", "select", "-no-color", workspace}, emit); err == nil {
		return nil
	}
	_, err = r.Run(ctx, dir, []string{"workspace", "new", "-no-color", workspace}, emit)
	return err
}

// currentWorkspace reads the workspace terraform last selected in dir, from
// its data directory.
func (r Runner) currentWorkspace(dir string) (string, error) {
	b, err := os.ReadFile(filepath.Join(r.DataDir(dir), "environment"))
	if errors.Is(err, os.ErrNotExist) {
		return atoll.DefaultWorkspace, nil
	} else if err != nil {
		return "", fmt.Errorf("read selected workspace: %w", err)
	}
	if ws := strings.TrimSpace(string(b)); ws != "" {
		return ws, nil
	}
	return atoll.DefaultWorkspace, nil
}

// Plan writes a plan to planFile (relative to dir unless absolute).
// hasChanges comes from -detailed-exitcode, where exit code 2 means success
// with changes.
func (r Runner) Plan(ctx context.Context, dir, planFile string, extra []string, emit func(Line)) (output string, hasChanges bool, err error) {
	out, err := r.Run(ctx, dir, PlanArgv(planFile, extra), emit)
	var ee *ExitError
	if errors.As(err, &ee) && ee.Code == 2 {
		return out, true, nil
	}
	return out, false, err
}

// ShowJSON returns `terraform show -json planFile`. Nothing is emitted: the
// JSON is data, not log output.
func (r Runner) ShowJSON(ctx context.Context, dir, planFile string) ([]byte, error) {
	return r.stdout(ctx, dir, []string{"show", "-json", "-no-color", planFile})
}

// stdout runs terraform and returns its standard output alone, so that
// warnings on stderr cannot corrupt machine-readable output.
func (r Runner) stdout(ctx context.Context, dir string, args []string) ([]byte, error) {
	var stdout limitedBuffer
	stderr := newCollector(64<<10, nil)
	err := r.execute(ctx, dir, args, &stdout, stderr.writer(streamStderr))
	stderr.flush()
	if err != nil {
		return nil, r.wrapErr(ctx, args, err, stderr.stderrTail())
	}
	if stdout.over {
		return nil, fmt.Errorf("terraform %s: output exceeds %d bytes", commandName(args), MaxShowJSON)
	}
	return stdout.Bytes(), nil
}

// limitedBuffer keeps up to MaxShowJSON bytes and notes if there was more;
// it never fails a write so terraform is not killed by a broken pipe.
type limitedBuffer struct {
	bytes.Buffer
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if b.Len()+len(p) > MaxShowJSON {
		b.over = true
		return len(p), nil
	}
	return b.Buffer.Write(p)
}

// Apply applies a saved plan. Extra args go before the plan file, which
// terraform requires to be last.
func (r Runner) Apply(ctx context.Context, dir, planFile string, extra []string, emit func(Line)) (string, error) {
	return r.Run(ctx, dir, ApplyArgv(planFile, extra), emit)
}

// Version returns the binary's version without a "v", e.g. "1.5.7".
func (r Runner) Version(ctx context.Context) (string, error) {
	dir := os.TempDir() // any directory: version reads no configuration
	out, err := r.stdout(ctx, dir, []string{"version", "-json"})
	if err == nil {
		var v struct {
			Version string `json:"terraform_version"`
		}
		if json.Unmarshal(out, &v) == nil && v.Version != "" {
			return v.Version, nil
		}
	}
	// Versions before 0.13 have no -json; their first line is "Terraform vX".
	out, err = r.stdout(ctx, dir, []string{"version"})
	if err != nil {
		return "", err
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if v, ok := strings.CutPrefix(first, "Terraform v"); ok {
		return strings.TrimSpace(v), nil
	}
	return "", fmt.Errorf("terraform version: unexpected output %q", first)
}
