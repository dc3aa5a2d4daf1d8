package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/tfinstall"
)

// jobBinaries are the binaries selected for a request's jobs, by job.
type jobBinaries = map[int64]tfinstall.Binary

// terraformBinary is the binary selected for job id, if any.
func (w *work) terraformBinary(id int64) (tfinstall.Binary, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, ok := w.tfBins[id]
	return b, ok
}

// TerraformVersion is the version of --terraform-bin. Only a success is
// cached: a binary installed after a failure is picked up on the next call.
func (r *Runner) TerraformVersion(ctx context.Context) (*version.Version, error) {
	r.tfMu.Lock()
	defer r.tfMu.Unlock()
	if r.tfVersion != nil {
		return r.tfVersion, nil
	}
	s, err := r.Terraform.Version(ctx)
	if err != nil {
		return nil, err
	}
	v, err := version.NewVersion(s)
	if err != nil {
		return nil, fmt.Errorf("terraform version %q: %w", s, err)
	}
	r.tfVersion = v
	return v, nil
}

// distribution is the job's Terraform distribution: the project's
// terraform_distribution, else --tf-distribution.
func (r *Runner) distribution(j *atoll.Job) string {
	return cmp.Or(j.Spec.TerraformDistribution, r.defaultDistribution())
}

func (r *Runner) defaultDistribution() string {
	return cmp.Or(r.TFDistribution, tfinstall.Terraform)
}

// selectTerraform picks the job's binary once, before its checkout, so
// that every step of the job runs the same one even when another job
// installs a newer version meanwhile. A project asking for what cannot be
// run fails with a message naming what it asks for and what is installed.
func (r *Runner) selectTerraform(ctx context.Context, w *work, j *atoll.Job) (tfinstall.Binary, error) {
	dist := r.distribution(j)
	b, err := r.SelectTerraform(ctx, dist, j.Spec.TerraformVersion)
	if err != nil {
		name := "Terraform"
		if dist == tfinstall.OpenTofu {
			name = "OpenTofu"
		}
		asked, key := name+" "+cmp.Or(j.Spec.TerraformVersion, r.DefaultTFVersion), "terraform_version"
		if j.Spec.TerraformVersion == "" && r.DefaultTFVersion == "" {
			asked, key = name, "terraform_distribution"
		} else if j.Spec.TerraformVersion == "" {
			key = "--default-tf-version"
		}
		return b, atoll.Errorf(atoll.EINVALID, "This project asks for %s (%s), but %s.", asked, key, err)
	}
	if j.Kind == atoll.JobPlan && b.Version != nil {
		// Stored with the plan (SetJobSpec), so that its apply asks for
		// exactly this version: a plan file applies only with the
		// Terraform that made it, and a newer one meeting the constraint
		// may be installed meanwhile.
		j.Spec.TerraformVersion = b.Version.String()
	}
	w.mu.Lock()
	if w.tfBins == nil {
		w.tfBins = jobBinaries{}
	}
	w.tfBins[j.ID] = b
	w.mu.Unlock()
	return b, nil
}

// SelectTerraform is the binary for a project of distribution dist
// ("terraform", "opentofu"; "" is --tf-distribution) asking for want (its
// terraform_version; "" is --default-tf-version): --terraform-bin when
// neither asks for anything, else the binary of --tf-bin-dir that
// tfinstall.Select picks, --terraform-bin counting as installed. Without
// TFInstall, --terraform-bin runs everything and a project it does not
// satisfy is refused. The Version of the result is nil for --terraform-bin
// picked without looking at its version. Errors read after "but".
func (r *Runner) SelectTerraform(ctx context.Context, dist, want string) (tfinstall.Binary, error) {
	dist = cmp.Or(dist, r.defaultDistribution())
	want = cmp.Or(strings.TrimSpace(want), r.DefaultTFVersion)
	native := dist == r.defaultDistribution()
	if want == "" && native {
		return tfinstall.Binary{Path: r.Terraform.Bin}, nil
	}
	if want == "" {
		want = ">= 0" // another distribution, any version: the newest installed
	}
	var extra []tfinstall.Binary
	if native {
		have, err := r.TerraformVersion(ctx)
		switch {
		case err == nil:
			extra = append(extra, tfinstall.Binary{Path: r.Terraform.Bin, Version: have})
		case r.TFInstall == nil:
			return tfinstall.Binary{}, fmt.Errorf("the version of --terraform-bin could not be read: %w", err)
		}
	}
	if r.TFInstall == nil {
		if !native {
			return tfinstall.Binary{}, errors.New("this server runs only --terraform-bin")
		}
		if ok, err := Satisfies(extra[0].Version, want); err != nil {
			return tfinstall.Binary{}, fmt.Errorf("%q is not a version or constraint", want)
		} else if !ok {
			return tfinstall.Binary{}, fmt.Errorf("this server runs Terraform %s and has no directory of other versions", extra[0].Version)
		}
		return extra[0], nil
	}
	return r.TFInstall.Select(ctx, dist, want, extra...)
}

// Satisfies reports whether v meets want: "1.5.7" and "v1.5.7" mean exactly
// that version, anything else is a constraint such as "~> 1.5".
func Satisfies(v *version.Version, want string) (bool, error) {
	want = strings.TrimSpace(want)
	if exact, err := version.NewVersion(want); err == nil {
		return v.Equal(exact), nil
	}
	c, err := version.NewConstraint(want)
	if err != nil {
		return false, err
	}
	return c.Check(v), nil
}

// terraformPath is what goes before PATH in run steps: a directory whose
// `terraform` (or `tofu`) is bin, the job's binary of distribution dist,
// then --tf-bin-dir, where Atlantis's `terraform${ATLANTIS_TERRAFORM_VERSION}`
// names it too. For --terraform-bin, its directory when it is named
// terraform.
func (r *Runner) terraformPath(dist, bin string) []string {
	if bin == "" || bin == r.Terraform.Bin || r.TFInstall == nil {
		bin := r.Terraform.Bin
		if filepath.Base(bin) != "terraform" {
			return nil
		}
		abs, err := filepath.Abs(bin)
		if err != nil {
			return nil
		}
		return []string{filepath.Dir(abs)}
	}
	dir, err := r.TFInstall.PathDir(dist, tfinstall.Binary{Path: bin})
	if err != nil {
		r.Logger.Warn("run steps: no PATH entry for the job's terraform", "bin", bin, "err", err)
		return []string{r.TFInstall.Dir}
	}
	return []string{dir, r.TFInstall.Dir}
}
