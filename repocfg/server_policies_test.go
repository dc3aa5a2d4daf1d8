package repocfg_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/repocfg"
)

func TestParseServerPolicies(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(`
policies:
  owners: {users: [alice], teams: [sec]}
  approve_count: 2
  policy_sets:
    - name: strict
      path: policies/strict
      owners: {users: [bob]}
      approve_count: 3
      prevent_self_approve: true
    - name: loose
      path: /etc/atoll/loose.rego
      source: local
`))
	if err != nil {
		t.Fatal(err)
	}
	want := &repocfg.Policies{
		Owners:       repocfg.PolicyOwners{Users: []string{"alice"}, Teams: []string{"sec"}},
		ApproveCount: 2,
		Sets: []repocfg.PolicySet{
			{Name: "strict", Path: "policies/strict", Source: "local", Owners: repocfg.PolicyOwners{Users: []string{"bob"}}, ApproveCount: 3, PreventSelfApprove: true},
			{Name: "loose", Path: "/etc/atoll/loose.rego", Source: "local", ApproveCount: 2},
		},
	}
	if !reflect.DeepEqual(sc.Policies, want) {
		t.Fatalf("policies = %+v\nwant %+v", sc.Policies, want)
	}
	if !sc.Policies.HasTeams() || !want.Owners.IsOwner("ALICE", nil) || !want.Owners.IsOwner("x", []string{"Sec"}) || want.Owners.IsOwner("bob", nil) {
		t.Fatal("owner matching")
	}
	def, err := repocfg.ParseServerConfig("repos.yaml", []byte("policies:\n  policy_sets: [{name: a, path: p}]\n"))
	if err != nil || def.Policies.ApproveCount != 1 || def.Policies.Sets[0].ApproveCount != 1 {
		t.Fatalf("defaults: %+v, %v", def.Policies, err)
	}
}

func TestParseServerPoliciesErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"policies: {owners: {users: [a]}}", "policy_sets: cannot be empty"},
		{"policies:\n  policy_sets: [{path: p}]", "policy_sets[0].name: is required"},
		{"policies:\n  policy_sets: [{name: a}]", "policy_sets[0].path: is required"},
		{"policies:\n  policy_sets: [{name: a, path: p, source: github}]", "only local policy sets"},
		{"policies:\n  policy_sets: [{name: a, path: p}, {name: a, path: q}]", "used twice"},
		{"policies:\n  policy_sets: [{name: a, path: p, owner: x}]", `unknown key "owner"`},
		{"policies:\n  approve_count: two\n  policy_sets: [{name: a, path: p}]", "approve_count: must be a whole number"},
	} {
		_, err := repocfg.ParseServerConfig("repos.yaml", []byte(tc.in))
		if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want EINVALID with %q", tc.in, err, tc.want)
		}
	}
}

func TestPolicyCheckFor(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(`
repos:
  - id: /.*/
  - id: /^github\.com/acme/.*$/
    policy_check: false
  - id: github.com/acme/strict
    policy_check: true
policies:
  policy_sets: [{name: a, path: p}]
`))
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"github.com/other/x": true, "github.com/acme/infra": false, "github.com/acme/strict": true} {
		if got := sc.PolicyCheckFor(id); got != want {
			t.Errorf("PolicyCheckFor(%s) = %v, want %v", id, got, want)
		}
	}
	if !repocfg.DefaultServerConfig().PolicyCheckFor("github.com/acme/infra") {
		t.Error("with the flag and no repos entries, every repository is checked")
	}
}

// custom_policy_check: the last matching entry that sets it decides, off
// by default; setting it warns no more.
func TestCustomPolicyCheckFor(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(`
repos:
  - id: /.*/
  - id: /^github\.com/acme/.*$/
    custom_policy_check: true
  - id: github.com/acme/plain
    custom_policy_check: false
policies:
  policy_sets: [{name: a, path: p}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Warnings) != 0 {
		t.Errorf("warnings: %q", sc.Warnings)
	}
	for id, want := range map[string]bool{"github.com/other/x": false, "github.com/acme/infra": true, "github.com/acme/plain": false} {
		if got := sc.CustomPolicyCheckFor(id); got != want {
			t.Errorf("CustomPolicyCheckFor(%s) = %v, want %v", id, got, want)
		}
	}
}

// sticky_policy_approvals and policy_item_regex: the top level's, unless a
// policy set says otherwise; Atlantis's default regex is the whole output.
func TestStickyPolicyConfig(t *testing.T) {
	sc, err := repocfg.ParseServerConfig("repos.yaml", []byte(`
policies:
  sticky_policy_approvals: true
  policy_item_regex: "(?m)^FAIL.*"
  policy_sets:
    - {name: inherits, path: p}
    - {name: opts-out, path: p, sticky_policy_approvals: false}
    - {name: lines, path: p, policy_item_regex: ".+"}
`))
	if err != nil {
		t.Fatal(err)
	}
	out := "FAIL - one\nok\nFAIL - two"
	for _, tc := range []struct {
		set    string
		sticky bool
		items  []string
	}{
		{"inherits", true, []string{"FAIL - one", "FAIL - two"}},
		{"opts-out", false, []string{"FAIL - one", "FAIL - two"}},
		{"lines", true, []string{"FAIL - one", "ok", "FAIL - two"}},
		{"unknown", true, []string{"FAIL - one", "FAIL - two"}},
	} {
		sticky, re := sc.Policies.StickyFor(tc.set)
		if items := re.FindAllString(out, -1); sticky != tc.sticky || !reflect.DeepEqual(items, tc.items) {
			t.Errorf("%s: sticky %v, items %q; want %v, %q", tc.set, sticky, items, tc.sticky, tc.items)
		}
	}
	def, err := repocfg.ParseServerConfig("repos.yaml", []byte("policies:\n  policy_sets: [{name: a, path: p, sticky_policy_approvals: true}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sticky, re := def.Policies.StickyFor("a"); !sticky || re.String() != repocfg.DefaultPolicyItemRegex || len(re.FindAllString(out, -1)) != 1 {
		t.Errorf("defaults: sticky %v, regex %v", sticky, re)
	}
	for _, tc := range []struct{ in, want string }{
		{"policies:\n  policy_item_regex: '(['\n  policy_sets: [{name: a, path: p}]", "policy_item_regex: is not a valid regular expression"},
		{"policies:\n  policy_sets: [{name: a, path: p, policy_item_regex: ''}]", "policy_sets[0].policy_item_regex: cannot be empty"},
		{"policies:\n  sticky_policy_approvals: maybe\n  policy_sets: [{name: a, path: p}]", "sticky_policy_approvals"},
	} {
		_, err := repocfg.ParseServerConfig("repos.yaml", []byte(tc.in))
		if atoll.ErrorCode(err) != atoll.EINVALID || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want EINVALID with %q", tc.in, err, tc.want)
		}
	}
}
