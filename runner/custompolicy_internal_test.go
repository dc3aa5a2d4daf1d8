package runner

import "testing"

// A custom policy check's output is judged as Atlantis judges it.
func TestCustomPolicyPassed(t *testing.T) {
	for _, tc := range []struct {
		out  string
		want bool
	}{
		{"3 tests, 3 passed, 0 warnings, 0 failures, 0 exceptions", true},
		{"all good", true},
		{"", false},
		{"  \n", false},
		{"FAIL - plan.json - main - no production", false},
		{"2 tests, 1 passed, 0 warnings, 1 failure, 0 exceptions", false},
		{"12 failures", false},
		{`{"failures": [{"msg": "x"}]}`, false},
		{`{"failures": []}`, false}, // as Atlantis: any JSON failures list
	} {
		if got := customPassed(tc.out); got != tc.want {
			t.Errorf("customPassed(%q) = %v, want %v", tc.out, got, tc.want)
		}
	}
}
