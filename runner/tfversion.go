package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/terraform"
)

// terraformFor is the Terraform runner of a job: the server's, with the
// request's credential helper settings, plus the env of the project's
// workflow.
func (r *Runner) terraformFor(w *work, j *atoll.Job) terraform.Runner {
	tf := r.Terraform
	tf.RunEnv = w.credEnv
	if len(j.Spec.Env) > 0 {
		tf.Env = append(append([]string{}, tf.Env...), j.Spec.Env...)
	}
	return tf
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

// checkTerraformVersion fails a project whose terraform_version (a version
// or a constraint) this server's one Terraform binary does not satisfy:
// applying with another version than a team pinned can upgrade its state.
func (r *Runner) checkTerraformVersion(ctx context.Context, want string) error {
	if want == "" {
		return nil
	}
	have, err := r.TerraformVersion(ctx)
	if err != nil {
		return fmt.Errorf("terraform version: %w", err)
	}
	if ok, err := Satisfies(have, want); err != nil {
		return atoll.Errorf(atoll.EINVALID, "terraform_version %q is not a version or constraint.", want)
	} else if !ok {
		return atoll.Errorf(atoll.EINVALID, "This project asks for Terraform %s (terraform_version), but this server runs Terraform %s. Running several Terraform versions is not supported yet.", want, have)
	}
	return nil
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
