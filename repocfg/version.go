package repocfg

import (
	"fmt"

	"github.com/hashicorp/go-version"
)

// checkTerraformVersion accepts what Atlantis accepts, a version as
// hashicorp/go-version reads it ("v1.5.7", "1.5"), and also, unlike
// Atlantis, a constraint such as "~> 1.5" or ">= 1.5, < 2.0". The runner
// reads the value with the same library, so whatever passes here it can
// compare with --terraform-bin's version.
func checkTerraformVersion(s string) error {
	if _, err := version.NewVersion(s); err == nil {
		return nil
	}
	if _, err := version.NewConstraint(s); err == nil {
		return nil
	}
	return fmt.Errorf("%q is not a Terraform version (e.g. 1.5.7 or v1.5.7) or version constraint (e.g. ~> 1.5)", s)
}
