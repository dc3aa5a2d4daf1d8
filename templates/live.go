package templates

import (
	"strconv"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/ansi"
)

// Sections of the overview, each re-fetched alone (/?section=NAME) when a
// change of one of its topics arrives.
const (
	SectionNode  = "node"
	SectionJobs  = "jobs"
	SectionRuns  = "runs"
	SectionLocks = "locks"
	SectionPulls = "pulls"
)

// OverviewPage is the overview: this node, the apply freeze (Meta.Freeze),
// the work in progress, recent runs, locks and open pull requests. A
// section request fills only its own fields.
type OverviewPage struct {
	Meta Meta
	Node atoll.NodeStatus
	// LagMS is how far a standby's copy is behind the active node.
	LagMS           int64
	Running, Queued []*atoll.Job
	Recent          []*atoll.Job
	Locks           []*atoll.Lock
	LockCount       int
	Pulls           []*atoll.Pull
	PullCount       int
	// WorkerQueues are the jobs waiting for a worker, per pool (nil: no
	// worker pools).
	WorkerQueues map[string]int
	// Drifted is how many projects drifted; DriftShown says whether the
	// node section shows it (the server runs drift checks, or some
	// project has a drift state).
	Drifted    int
	DriftShown bool
}

// JobPage shows one job and the end of its log.
type JobPage struct {
	Meta Meta
	Job  *atoll.Job
	// Lines are the last lines of the log (all of it when Earlier is 0).
	Lines []atoll.LogLine
	// Earlier and Later are how many stored lines come before and after
	// Lines: the page links to the full download instead of showing them.
	// Later is 0 but for a window of the log (?line=SEQ).
	Earlier, Later int64
	// Dispatch is the job's dispatch to a worker pool (nil: the node runs
	// it itself).
	Dispatch *atoll.Dispatch
}

// Follows reports whether the page follows the job's new lines: it shows
// the end of the log of a job that is not finished.
func (d JobPage) Follows() bool { return d.Later == 0 && !d.Job.Final() }

// LastSeq is the seq of the last line shown: live.js asks the websocket
// for the lines after it.
func (d JobPage) LastSeq() int64 {
	if len(d.Lines) == 0 {
		return 0
	}
	return d.Lines[len(d.Lines)-1].Seq
}

// JobLogPath is a job's log download.
func JobLogPath(id int64) string { return paths.JobLog(id) }

// lineClasses are a log line's CSS classes: its stream and, for a plan's
// change lines, the kind of change (d-add, d-change, d-destroy...).
func lineClasses(l atoll.LogLine) []string {
	c := []string{"ln", "s-" + l.Stream}
	if d := ansi.Diff(ansi.Strip(l.Text)); d != "" {
		c = append(c, "d-"+d)
	}
	return c
}

// boolAttr is "true" or "false", for data- attributes read by scripts.
func boolAttr(b bool) string { return strconv.FormatBool(b) }

func i64(n int64) string { return strconv.FormatInt(n, 10) }
