package templates

import "github.com/atollhq/atoll"

// policyState names a policy set's standing on the plan page: passed,
// approved (failed, and approved by enough owners) or failed.
func policyState(c atoll.PolicyCheck) string {
	switch {
	case c.Passed:
		return "passed"
	case c.Satisfied():
		return "approved"
	}
	return "failed"
}
