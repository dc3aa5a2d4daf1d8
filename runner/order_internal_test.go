package runner

import (
	"slices"
	"testing"

	"github.com/atollhq/atoll"
)

// Jobs run by ascending group; within a group a dependency comes before its
// dependants (so one-by-one runs never wait), else request order is kept.
func TestOrderGroups(t *testing.T) {
	job := func(name string, group int, deps ...string) *atoll.Job {
		return &atoll.Job{Project: name, Spec: atoll.JobSpec{Group: group, DependsOn: deps}}
	}
	for _, c := range []struct {
		name string
		jobs []*atoll.Job
		want [][]string
	}{
		{"one group keeps order", []*atoll.Job{job("a", 0), job("b", 0), job("c", 0)}, [][]string{{"a", "b", "c"}}},
		{"groups ascend", []*atoll.Job{job("late", 5), job("early", -1), job("mid", 0)}, [][]string{{"early"}, {"mid"}, {"late"}}},
		{"dependencies first", []*atoll.Job{job("app", 1, "db", "net"), job("db", 1, "net"), job("x", 1), job("net", 1)},
			[][]string{{"x", "net", "db", "app"}}},
		{"dependency in another group", []*atoll.Job{job("app", 2, "db"), job("db", 1)}, [][]string{{"db"}, {"app"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got [][]string
			for _, g := range orderGroups(c.jobs) {
				var names []string
				for _, i := range g {
					names = append(names, c.jobs[i].Project)
				}
				got = append(got, names)
			}
			if !slices.EqualFunc(got, c.want, slices.Equal) {
				t.Errorf("orderGroups = %v, want %v", got, c.want)
			}
		})
	}
}
