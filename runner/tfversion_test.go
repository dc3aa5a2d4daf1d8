package runner_test

import (
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll/runner"
)

func TestSatisfies(t *testing.T) {
	v := version.Must(version.NewVersion("1.5.7"))
	cases := []struct {
		want string
		ok   bool
		err  bool
	}{
		{"1.5.7", true, false},
		{"v1.5.7", true, false},
		{"1.5.6", false, false},
		{"~> 1.5", true, false},
		{"~> 1.5.0", true, false},
		{">= 1.6", false, false},
		{">= 1.3, < 2.0", true, false},
		{"= 1.5.7", true, false},
		{"!= 1.5.7", false, false},
		{"latest", false, true},
	}
	for _, c := range cases {
		ok, err := runner.Satisfies(v, c.want)
		if ok != c.ok || (err != nil) != c.err {
			t.Errorf("Satisfies(1.5.7, %q) = %v, %v; want %v, error %v", c.want, ok, err, c.ok, c.err)
		}
	}
}
