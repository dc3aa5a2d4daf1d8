package templates_test

import (
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/templates"
)

// A job's page says where its dispatch runs: a pool's worker, or (pinned
// to its Kubernetes Job) the Job's pod, while it waits and once claimed.
func TestDispatchText(t *testing.T) {
	for _, tc := range []struct {
		d    *atoll.Dispatch
		want string
	}{
		{nil, ""},
		{&atoll.Dispatch{Pool: "gpu", State: atoll.DispatchQueued}, "Waiting for a worker in pool gpu"},
		{&atoll.Dispatch{Pool: "k8s", State: atoll.DispatchQueued, ClaimHash: []byte{1}}, "Waiting for its Kubernetes Job's pod (pool k8s)"},
		{&atoll.Dispatch{Pool: "k8s", State: atoll.DispatchClaimed, Worker: "atoll-job-5-1-x7k2p", Attempt: 1}, "Worker: atoll-job-5-1-x7k2p (pool k8s, attempt 1)"},
		{&atoll.Dispatch{Pool: "gpu", State: atoll.DispatchDone, Worker: "w1", Attempt: 2}, "Worker: w1 (pool gpu, attempt 2)"},
	} {
		if got := templates.DispatchText(tc.d); got != tc.want {
			t.Errorf("DispatchText(%+v) = %q; want %q", tc.d, got, tc.want)
		}
	}
}
