package templates

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/atollhq/atoll"
)

// SectionWorkers is the workers page's one live section.
const SectionWorkers = "workers"

// WorkersPage shows the worker pools: the workers seen, the jobs they
// hold, the queued jobs per pool and the worker tokens. Overview is nil
// when the server has no worker pools.
type WorkersPage struct {
	Meta     Meta
	Overview *atoll.WorkerOverview
}

// PoolQueue is one pool's count of jobs waiting for a worker.
type PoolQueue struct {
	Pool   string
	Queued int
}

// Queues are the pools' queued counts, by pool name.
func Queues(queued map[string]int) []PoolQueue {
	var q []PoolQueue
	for _, p := range slices.Sorted(maps.Keys(queued)) {
		q = append(q, PoolQueue{p, queued[p]})
	}
	return q
}

// KubernetesPools are the pools run as Kubernetes Jobs and where, by pool
// name.
func KubernetesPools(pools map[string]string) [][2]string {
	var out [][2]string
	for _, p := range slices.Sorted(maps.Keys(pools)) {
		out = append(out, [2]string{p, "Kubernetes Jobs, " + pools[p]})
	}
	return out
}

// queuedText is the overview's line of the queued jobs per pool.
func queuedText(queued map[string]int) string {
	var parts []string
	for _, q := range Queues(queued) {
		parts = append(parts, q.Pool+": "+itoa(q.Queued))
	}
	return strings.Join(parts, ", ")
}

// DispatchText says where a job dispatched to a worker pool runs or ran:
// "Worker: NAME (pool P, attempt N)", or while queued "Waiting for a
// worker in pool P"; "" for nil (a job the node ran itself).
func DispatchText(d *atoll.Dispatch) string {
	switch {
	case d == nil:
		return ""
	case (d.State == atoll.DispatchQueued || d.Worker == "") && len(d.ClaimHash) > 0:
		return "Waiting for its Kubernetes Job's pod (pool " + d.Pool + ")"
	case d.State == atoll.DispatchQueued || d.Worker == "":
		return "Waiting for a worker in pool " + d.Pool
	}
	return "Worker: " + d.Worker + " (pool " + d.Pool + ", attempt " + itoa(d.Attempt) + ")"
}

// tokenState is a worker token's state: revoked when, else active.
func tokenState(now time.Time, t *atoll.WorkerToken) string {
	if t.Revoked() {
		s := "revoked " + ago(now, *t.RevokedAt)
		if t.RevokedBy != "" {
			s += " by " + t.RevokedBy
		}
		return s
	}
	return "active"
}

// queuedTotal is the number of jobs waiting for a worker, in all pools.
func queuedTotal(queued map[string]int) int {
	n := 0
	for _, c := range queued {
		n += c
	}
	return n
}
