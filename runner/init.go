package runner

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/terraform"
)

// initMarker, in terraform's data dir, holds the fingerprint of the inputs
// of the last successful init there (see initFingerprint).
const initMarker = "atoll-init"

// init runs terraform init in dir unless the last init there had the same
// inputs: same args, environment, binary, backend config files, root and
// local modules, and the data dir as that init left it. A skip is taken only
// when that is proven; any doubt runs init. Checkouts are pooled, so the
// last init may have been another project's with another backend: init then
// runs with -reconfigure, which takes this project's backend config as it
// is and never migrates state.
func (x *execution) init(ctx context.Context, tf terraform.Runner, dir string, initArgs []string) error {
	j, sink := x.j, x.sink
	dataDir := tf.DataDir(dir)
	marker := filepath.Join(dataDir, initMarker)
	fingerprint := func() (string, error) {
		v, err := x.terraformVersion(ctx)
		if err != nil {
			return "", fmt.Errorf("init fingerprint: %w", err)
		}
		// The run's credential nonce differs every run; it is no input.
		fpTF := tf
		fpTF.RunEnv = nil
		return initFingerprint(initInputs{Dir: dir, DataDir: dataDir, Args: initArgs, Env: fpTF.Environ(), Bin: tf.Bin, Version: v.String()})
	}
	fp, err := fingerprint()
	switch {
	case err != nil:
		x.log.Info("init cannot be skipped", "job", j.ID, "err", err)
	case alwaysInit(initArgs):
	default:
		if prev, err := os.ReadFile(marker); err == nil && string(prev) == fp {
			sink.Write(atoll.StreamAtoll, "Nothing init depends on changed since the last init in this checkout: skipping terraform init.")
			return nil
		}
	}
	// From here on the data dir may match neither the old inputs nor the
	// new ones until init succeeds.
	if err := os.Remove(marker); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("init marker: %w", err)
	}
	// The workspace selected by the last job here may not exist in this
	// project's backend, and init fails without input when it does not.
	// Init starts from the default one, as in a fresh clone; the job's
	// workspace is selected right after.
	if err := os.Remove(filepath.Join(dataDir, "environment")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reset selected workspace: %w", err)
	}
	args := initArgs
	if _, err := os.Stat(filepath.Join(dataDir, "terraform.tfstate")); err == nil && !hasFlag(args, "reconfigure") {
		args = append([]string{"-reconfigure"}, args...)
	}
	sink.Write(atoll.StreamAtoll, commandLine(terraform.InitArgv(args)))
	start := time.Now()
	err = tf.Init(ctx, dir, args, x.emit)
	x.log.Debug("terraform init", "job", j.ID, "ms", time.Since(start).Milliseconds())
	if err != nil {
		return err
	}
	// The marker describes the data dir as init left it (with the lock file
	// and modules it may have written).
	if fp, err = fingerprint(); err != nil {
		x.log.Info("init cannot be skipped next time", "job", j.ID, "err", err)
		return nil
	}
	// Init makes no data dir for a configuration with nothing to install.
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return fmt.Errorf("init marker: %w", err)
	}
	if err := os.WriteFile(marker, []byte(fp), 0o644); err != nil {
		return fmt.Errorf("init marker: %w", err)
	}
	return nil
}

// hasFlag reports whether args hold -name or -name=value (or with --).
func hasFlag(args []string, name string) bool {
	for _, a := range args {
		if !strings.HasPrefix(a, "-") {
			continue
		}
		if n, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); n == name {
			return true
		}
	}
	return false
}
