// Package metrics keeps the counters and timings Atlantis exposes on its
// Prometheus endpoint, under Atlantis's names, types and labels, so that a
// Grafana dashboard built for Atlantis keeps working. They count what this
// process did since it started (as Atlantis's, which are per process too):
// with several Atoll nodes, each reports its own.
//
// Atlantis records through tally, whose Prometheus reporter decides the
// shape: every name is prefixed "atlantis_", a timer is a summary of
// seconds with the quantiles below, and the help text is the name and its
// type. The metrics are registered in the registry the server hands over
// (one per server, never Prometheus's global one), each on first use, as
// tally does.
package metrics

import (
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Outcomes of an execution, Atlantis's counter suffixes: success; failure,
// Atlantis's word for a command refused (lock held, requirement unmet);
// error, for one that broke.
const (
	Success = "execution_success"
	Failure = "execution_failure"
	Error   = "execution_error"
	timeSfx = "execution_time"
)

// prefix is Atlantis's default stats namespace, joined by tally's "_".
const prefix = "atlantis_"

// Project identifies one project run, Atlantis's project scope tags.
type Project struct {
	BaseRepo, PullNumber, Project, ProjectPath, Workspace string
	TerraformDistribution, TerraformVersion               string
}

// projectLabels are the label names of Atlantis's project metrics: the
// snake_case names of its project scope tags (the exposition sorts them).
var projectLabels = []string{"base_repo", "pr_number", "project", "project_path", "terraform_distribution", "terraform_version", "workspace"}

func (p Project) values() []string {
	return []string{p.BaseRepo, p.PullNumber, p.Project, p.ProjectPath, p.TerraformDistribution, p.TerraformVersion, p.Workspace}
}

// objectives are the quantiles (with their allowed error) of the summaries
// tally's Prometheus reporter makes by default. Like it, the summaries keep
// client_golang's default window (the last 10 minutes).
var objectives = map[float64]float64{0.5: 0.01, 0.75: 0.001, 0.95: 0.001, 0.99: 0.001, 0.999: 0.0001}

// Atlantis holds the metrics. The zero value is not usable: use New. A nil
// *Atlantis records nothing.
type Atlantis struct {
	reg prometheus.Registerer

	mu        sync.Mutex
	counters  map[string]*prometheus.CounterVec
	summaries map[string]*prometheus.SummaryVec
}

// New registers in reg the counters Atlantis starts with at zero: its
// project outcomes (with every project label empty), and the outcomes of
// the autoplan, plan and apply comments and of pull request cleanup.
func New(reg prometheus.Registerer) *Atlantis {
	a := &Atlantis{reg: reg, counters: map[string]*prometheus.CounterVec{}, summaries: map[string]*prometheus.SummaryVec{}}
	for _, o := range []string{Success, Error, Failure} {
		a.counter("project_"+o, projectLabels, Project{}.values())
	}
	for _, scope := range []string{"cmd_autoplan", "cmd_comment_plan", "cmd_comment_apply", "pullclosed_cleanup"} {
		for _, o := range []string{Success, Error} {
			a.counter(scope+"_"+o, nil, nil)
		}
	}
	return a
}

// ProjectRun records one project job (its kind: plan, apply, import,
// state_rm) that ended with outcome after d:
// atlantis_project_<command>_execution_{success,failure,error} and
// atlantis_project_<command>_execution_time.
func (a *Atlantis) ProjectRun(command string, p Project, outcome string, d time.Duration) {
	if a == nil {
		return
	}
	name := "project_" + sanitize(command) + "_"
	a.record(name, outcome, projectLabels, p.values(), d)
}

// Command records one command of a pull request: scope is Atlantis's
// cmd_autoplan, cmd_comment_<command> or pullclosed_cleanup;
// <scope>_execution_{success,error} and <scope>_execution_time.
func (a *Atlantis) Command(scope, outcome string, d time.Duration) {
	if a == nil {
		return
	}
	a.record(sanitize(scope)+"_", outcome, nil, nil, d)
}

// record counts an outcome and observes its time under name's family.
func (a *Atlantis) record(name, outcome string, labels, values []string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if c := a.counter(name+outcome, labels, values); c != nil {
		c.Inc()
	}
	if s := a.summary(name+timeSfx, labels, values); s != nil {
		s.Observe(d.Seconds())
	}
}

// counter is name's counter of values, registered on first use; nil when
// name is taken by a metric of other labels (a name is made of the scope
// Atoll passes, so that would be Atoll's own bug: it is not recorded
// rather than the command failing). It needs a.mu, but for New.
func (a *Atlantis) counter(name string, labels, values []string) prometheus.Counter {
	v := vec(a.reg, a.counters, name, func() *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: prefix + name, Help: prefix + name + " counter"}, labels)
	})
	if v == nil {
		return nil
	}
	c, err := v.GetMetricWithLabelValues(values...)
	if err != nil {
		return nil
	}
	return c
}

// summary is name's summary of values, as counter. It needs a.mu.
func (a *Atlantis) summary(name string, labels, values []string) prometheus.Observer {
	v := vec(a.reg, a.summaries, name, func() *prometheus.SummaryVec {
		return prometheus.NewSummaryVec(prometheus.SummaryOpts{Name: prefix + name, Help: prefix + name + " summary", Objectives: objectives}, labels)
	})
	if v == nil {
		return nil
	}
	o, err := v.GetMetricWithLabelValues(values...)
	if err != nil {
		return nil
	}
	return o
}

// vec is vecs[name], or else the vector mk makes, registered in reg and
// kept in vecs (the one already registered under its name and labels, if
// any); nil when it cannot be registered.
func vec[V prometheus.Collector](reg prometheus.Registerer, vecs map[string]V, name string, mk func() V) V {
	var zero V
	if v, ok := vecs[name]; ok {
		return v
	}
	v := mk()
	var dup prometheus.AlreadyRegisteredError
	if err := reg.Register(v); errors.As(err, &dup) {
		prev, ok := dup.ExistingCollector.(V)
		if !ok {
			return zero
		}
		v = prev
	} else if err != nil {
		return zero
	}
	vecs[name] = v
	return v
}

// sanitize makes a name as tally's Prometheus sanitizer does: anything
// but letters, digits and _ becomes _ ("state rm" is state_rm).
func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			return r
		}
		return '_'
	}, s)
}
