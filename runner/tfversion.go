package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/runner/terraform"
)

// terraformFor is the Terraform runner of a job: the server's, plus the env
// of the project's workflow.
func (r *Runner) terraformFor(j *atoll.Job) terraform.Runner {
	tf := r.Terraform
	if len(j.Spec.Env) > 0 {
		tf.Env = append(append([]string{}, tf.Env...), j.Spec.Env...)
	}
	return tf
}

// TerraformVersion is the version of --terraform-bin, read once.
func (r *Runner) TerraformVersion(ctx context.Context) (*version.Version, error) {
	r.tfOnce.Do(func() {
		v, err := r.Terraform.Version(ctx)
		if err == nil {
			r.tfVersion, err = version.NewVersion(v)
		}
		r.tfErr = err
	})
	return r.tfVersion, r.tfErr
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
