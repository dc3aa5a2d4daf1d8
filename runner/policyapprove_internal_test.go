package runner

import (
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

func TestDecidePolicyApproval(t *testing.T) {
	p := &repocfg.Policies{
		Owners: repocfg.PolicyOwners{Users: []string{"admin"}},
		Sets: []repocfg.PolicySet{
			{Name: "strict", Owners: repocfg.PolicyOwners{Users: []string{"Carol", "alice"}}, ApproveCount: 2, PreventSelfApprove: true},
			{Name: "loose", Owners: repocfg.PolicyOwners{Users: []string{"alice"}}, ApproveCount: 1},
			{Name: "teams", Owners: repocfg.PolicyOwners{Teams: []string{"sec"}}, ApproveCount: 1},
		},
	}
	failed := func(set string, approvers ...string) atoll.PolicyCheck {
		c := atoll.PolicyCheck{PolicySet: set, ApproveCount: p.Set(set).ApproveCount}
		for _, a := range approvers {
			c.Approvals = append(c.Approvals, atoll.PolicyApproval{User: a})
		}
		return c
	}
	for _, tc := range []struct {
		name         string
		check        atoll.PolicyCheck
		user, target string
		teams        []string
		clear        bool
		want         policyAction
		why          string
	}{
		{"set owner approves", failed("strict"), "carol", "", nil, false, policyApprove, ""},
		{"top-level owner approves", failed("strict"), "ADMIN", "", nil, false, policyApprove, ""},
		{"non-owner refused", failed("strict"), "bob", "", nil, false, policyRefuse, "bob is not a policy owner"},
		{"author refused with prevent_self_approve", failed("strict"), "alice", "", nil, false, policyRefuse, "author of this pull request"},
		{"author may approve without prevent_self_approve", failed("loose"), "alice", "", nil, false, policyApprove, ""},
		{"second approval by the same owner refused", failed("strict", "carol"), "carol", "", nil, false, policyRefuse, "already approved by carol; 1 more"},
		{"second owner completes approve_count", failed("strict", "carol"), "admin", "", nil, false, policyApprove, ""},
		{"approved enough: nothing to do", failed("loose", "admin"), "bob", "", nil, false, policySkip, ""},
		{"passed set: nothing to do", atoll.PolicyCheck{PolicySet: "strict", Passed: true}, "bob", "", nil, false, policySkip, ""},
		{"other --policy-set: skipped", failed("strict"), "bob", "loose", nil, false, policySkip, ""},
		{"owner clears approvals", failed("loose", "admin"), "admin", "", nil, true, policyClear, ""},
		{"non-owner cannot clear", failed("loose", "admin"), "bob", "", nil, true, policyRefuse, "not a policy owner"},
		{"clear with no approvals: nothing to do", failed("loose"), "admin", "", nil, true, policySkip, ""},
		{"a member of an owning team approves", failed("teams"), "dave", "", []string{"dev", "SEC"}, false, policyApprove, ""},
		{"a member of other teams is refused", failed("teams"), "dave", "", []string{"dev"}, false, policyRefuse, "dave is not a policy owner"},
		{"set gone from the config", atoll.PolicyCheck{PolicySet: "old", ApproveCount: 1}, "admin", "", nil, false, policyRefuse, "no longer in the server's config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := decidePolicyApproval(p, tc.check, tc.user, tc.teams, "alice", tc.target, tc.clear)
			if got != tc.want || !strings.Contains(why, tc.why) || (tc.why == "") != (why == "") {
				t.Fatalf("got %v %q, want %v %q", got, why, tc.want, tc.why)
			}
		})
	}
}
