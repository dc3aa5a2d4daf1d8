package runner

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/terraform"
	"github.com/atollhq/atoll/tfinstall"
)

// initProject runs init in dir (see init) and selects the job's workspace.
func (x *execution) initProject(ctx context.Context, tf terraform.Runner, dir string, args []string) error {
	if err := x.init(ctx, tf, dir, args); err != nil {
		return err
	}
	// Pooled checkouts may have another workspace selected: always select.
	return tf.SelectWorkspace(ctx, dir, x.j.Workspace, x.emit)
}

// useTerraform selects the job's binary (see selectTerraform) and logs it,
// with a warning when it was downloaded without verification.
func (r *Runner) useTerraform(ctx context.Context, w *work, j *atoll.Job, sink *logSink) error {
	b, err := r.selectTerraform(ctx, w, j)
	if err != nil {
		return err
	}
	if b.Version != nil {
		sink.Write(atoll.StreamAtoll, fmt.Sprintf("Using %s %s (%s)", tfinstall.Command(r.distribution(j)), b.Version, filepath.Base(b.Path)))
	}
	if b.Unverified {
		sink.Write(atoll.StreamAtoll, fmt.Sprintf("Warning: %s was downloaded without checking its release's signature or checksums (--tf-download-skip-verify).", filepath.Base(b.Path)))
	}
	return nil
}
