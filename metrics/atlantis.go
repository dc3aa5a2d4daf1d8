// Package metrics keeps the counters and timings Atlantis exposes on its
// Prometheus endpoint, under Atlantis's names and labels, so that a Grafana
// dashboard built for Atlantis keeps working. They count what this process
// did since it started (as Atlantis's, which are per process too): with
// several Atoll nodes, each reports its own.
package metrics

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
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

// Project identifies one project run, Atlantis's project scope tags.
type Project struct {
	BaseRepo, PullNumber, Project, ProjectPath, Workspace string
	TerraformDistribution, TerraformVersion               string
}

// projectLabels are the label names of Atlantis's project metrics, in the
// order tally's Prometheus reporter writes them (sorted).
var projectLabels = []string{"base_repo", "pr_number", "project", "project_path", "terraform_distribution", "terraform_version", "workspace"}

func (p Project) values() []string {
	return []string{p.BaseRepo, p.PullNumber, p.Project, p.ProjectPath, p.TerraformDistribution, p.TerraformVersion, p.Workspace}
}

// keepSamples bounds the timings kept per series for the summary's
// quantiles: the latest ones.
const keepSamples = 512

// quantiles are those of tally's Prometheus summaries.
var quantiles = []float64{0.5, 0.75, 0.95, 0.99, 0.999}

type series struct {
	labels []string // values of the metric's label names
	n      float64  // counters
	// summaries
	count   int64
	sum     float64
	samples []float64
}

type family struct {
	kind   string // counter or summary
	labels []string
	series map[string]*series
}

// Atlantis holds the metrics. The zero value is not usable: use New. A nil
// *Atlantis records nothing.
type Atlantis struct {
	mu       sync.Mutex
	families map[string]*family
}

// New returns empty metrics with Atlantis's always-present command
// counters at zero, as Atlantis initialises them.
func New() *Atlantis {
	a := &Atlantis{families: map[string]*family{}}
	for _, scope := range []string{"cmd_autoplan", "cmd_comment_plan", "cmd_comment_apply", "pullclosed_cleanup"} {
		for _, o := range []string{Success, Error} {
			a.add(scope+"_"+o, "counter", nil, nil, 0)
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
	a.mu.Lock()
	defer a.mu.Unlock()
	a.add(name+outcome, "counter", projectLabels, p.values(), 1)
	a.observe(name+timeSfx, projectLabels, p.values(), d)
}

// Command records one command of a pull request: scope is Atlantis's
// cmd_autoplan, cmd_comment_<command> or pullclosed_cleanup;
// <scope>_execution_{success,error} and <scope>_execution_time.
func (a *Atlantis) Command(scope, outcome string, d time.Duration) {
	if a == nil {
		return
	}
	scope = sanitize(scope)
	a.mu.Lock()
	defer a.mu.Unlock()
	a.add(scope+"_"+outcome, "counter", nil, nil, 1)
	a.observe(scope+"_"+timeSfx, nil, nil, d)
}

// add needs a.mu.
func (a *Atlantis) add(name, kind string, labels, values []string, n float64) *series {
	f := a.families[name]
	if f == nil {
		f = &family{kind: kind, labels: labels, series: map[string]*series{}}
		a.families[name] = f
	}
	key := strings.Join(values, "\x00")
	s := f.series[key]
	if s == nil {
		s = &series{labels: values}
		f.series[key] = s
	}
	s.n += n
	return s
}

// observe needs a.mu.
func (a *Atlantis) observe(name string, labels, values []string, d time.Duration) {
	s := a.add(name, "summary", labels, values, 0)
	v := d.Seconds()
	s.count++
	s.sum += v
	if len(s.samples) == keepSamples {
		s.samples = append(s.samples[:0], s.samples[1:]...)
	}
	s.samples = append(s.samples, v)
}

// WriteTo writes the metrics in the Prometheus text format, each name with
// Atlantis's "atlantis_" prefix.
func (a *Atlantis) WriteTo(w io.Writer) (int64, error) {
	if a == nil {
		return 0, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	var b strings.Builder
	for _, n := range slices.Sorted(maps.Keys(a.families)) {
		f := a.families[n]
		full := "atlantis_" + n
		fmt.Fprintf(&b, "# HELP %s %s %s\n# TYPE %s %s\n", full, full, f.kind, full, f.kind)
		for _, k := range slices.Sorted(maps.Keys(f.series)) {
			s := f.series[k]
			if f.kind == "counter" {
				fmt.Fprintf(&b, "%s%s %s\n", full, labelText(f.labels, s.labels, ""), num(s.n))
				continue
			}
			sorted := slices.Clone(s.samples)
			slices.Sort(sorted)
			for _, q := range quantiles {
				fmt.Fprintf(&b, "%s%s %s\n", full, labelText(f.labels, s.labels, num(q)), num(quantile(sorted, q)))
			}
			fmt.Fprintf(&b, "%s_sum%s %s\n%s_count%s %d\n", full, labelText(f.labels, s.labels, ""), num(s.sum), full, labelText(f.labels, s.labels, ""), s.count)
		}
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

func labelText(names, values []string, q string) string {
	var parts []string
	for i, n := range names {
		parts = append(parts, fmt.Sprintf("%s=%q", n, values[i]))
	}
	if q != "" {
		parts = append(parts, fmt.Sprintf("quantile=%q", q))
	}
	if len(parts) == 0 {
		return ""
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

func num(v float64) string {
	if math.IsNaN(v) {
		return "NaN"
	}
	return fmt.Sprintf("%g", v)
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
