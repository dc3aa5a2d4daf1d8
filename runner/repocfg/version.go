package repocfg

import (
	"fmt"
	"regexp"
	"strings"
)

// versionRe accepts what Terraform releases are called: 1 to 3 numeric parts,
// optional "v", pre-release and build suffixes ("v0.12.0-beta1", "1.5").
// It mirrors the leniency of hashicorp/go-version, which Atlantis uses,
// without the dependency.
var versionRe = regexp.MustCompile(`^v?[0-9]+(\.[0-9]+){0,2}(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$`)

// constraintOps are Terraform's version constraint operators, longest first
// so that ">=" is not read as ">" followed by "=1.0".
var constraintOps = []string{"!=", ">=", "<=", "~>", "=", ">", "<"}

// checkTerraformVersion accepts an exact version or a comma-separated
// constraint list such as ">= 1.5, < 2.0".
func checkTerraformVersion(s string) error {
	if versionRe.MatchString(s) {
		return nil
	}
	parts := strings.Split(s, ",")
	for _, part := range parts {
		part = strings.TrimSpace(part)
		for _, op := range constraintOps {
			if strings.HasPrefix(part, op) {
				part = strings.TrimSpace(part[len(op):])
				break
			}
		}
		if !versionRe.MatchString(part) {
			return fmt.Errorf("%q is not a Terraform version (e.g. 1.5.7 or v1.5.7) or version constraint (e.g. ~> 1.5)", s)
		}
	}
	return nil
}
