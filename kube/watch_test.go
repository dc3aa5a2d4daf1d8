package kube_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/kube/kubetest"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// collect reads a Watch until it closes.
func collect(t *testing.T, ch <-chan kube.Status) []kube.Status {
	t.Helper()
	var out []kube.Status
	timeout := time.After(15 * time.Second)
	for {
		select {
		case st, ok := <-ch:
			if !ok {
				return out
			}
			out = append(out, st)
		case <-timeout:
			t.Fatalf("the watch did not end: %+v", out)
		}
	}
}

func states(sts []kube.Status) []kube.State {
	var out []kube.State
	for _, s := range sts {
		if len(out) == 0 || out[len(out)-1] != s.State {
			out = append(out, s.State)
		}
	}
	return out
}

func TestWatchOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name    string
		outcome kubetest.PodOutcome
		reason  string
		message string
	}{
		{"success", kubetest.Succeed(), "", ""},
		{"oom", kubetest.OOMKill(), "OOMKilled", "killed: out of memory, limit 2Gi"},
		{"image pull", kubetest.ImagePullError(`rpc error: code = NotFound desc = failed to pull and unpack image "ghcr.io/atollhq/atoll:1.2.3": not found`), "ImagePull",
			`cannot pull image ghcr.io/atollhq/atoll:1.2.3: rpc error: code = NotFound desc = failed to pull and unpack image "ghcr.io/atollhq/atoll:1.2.3": not found`},
		{"evicted", kubetest.Evict("The node was low on resource: ephemeral-storage."), "Evicted", "evicted: The node was low on resource: ephemeral-storage."},
		{"exit code", kubetest.Exit(2), "Error", "the worker pod exited with code 2"},
		{"exit code with a log", kubetest.PodOutcome{Kind: kubetest.Exited, ExitCode: 1, Log: "atoll worker started\natoll worker: claim: 401 Unknown or spent claim secret.\n"}, "Error",
			"the worker pod exited with code 1: atoll worker: claim: 401 Unknown or spent claim secret."},
		{"unschedulable", kubetest.Unschedulable("0/3 nodes are available: 3 Insufficient memory."), "Unschedulable",
			"no node can run it: 0/3 nodes are available: 3 Insufficient memory."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, l := newServer(t, kubetest.Options{Run: func(*corev1.Pod) kubetest.PodOutcome { return tc.outcome }})
			l.ScheduleTimeout = 300 * time.Millisecond
			start := time.Now()
			ch, err := l.Watch(ctx(t), 7, 1) // before the launch: it waits for the pod
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Launch(ctx(t), job(7)); err != nil {
				t.Fatal(err)
			}
			got := collect(t, ch)
			last := got[len(got)-1]
			if tc.reason == "" {
				if last.State != kube.Succeeded || last.Failure != nil {
					t.Fatalf("last %+v", last)
				}
				if want := []kube.State{kube.Pending, kube.Running, kube.Succeeded}; !slices.Equal(states(got), want) {
					t.Errorf("states %v, want %v (%+v)", states(got), want, got)
				}
				return
			}
			if last.State != kube.Failed || last.Failure == nil {
				t.Fatalf("last %+v (all %+v)", last, got)
			}
			if last.Failure.Reason != tc.reason || last.Failure.Message != tc.message || last.Failure.Error() != tc.message {
				t.Errorf("failure %q %q, want %q %q", last.Failure.Reason, last.Failure.Message, tc.reason, tc.message)
			}
			if !strings.HasPrefix(last.Pod, "atoll-job-7-1-") {
				t.Errorf("pod %q", last.Pod)
			}
			if tc.reason == "Unschedulable" {
				if time.Since(start) < 300*time.Millisecond {
					t.Errorf("failed before the schedule timeout")
				}
				// Before that, Pending with the scheduler's words.
				if !slices.ContainsFunc(got, func(s kube.Status) bool {
					return s.State == kube.Pending && s.Message == "0/3 nodes are available: 3 Insufficient memory."
				}) {
					t.Errorf("no Pending with the scheduler's message: %+v", got)
				}
			}
		})
	}
}

func TestWatchOOMWithoutLimit(t *testing.T) {
	_, l := newServer(t, kubetest.Options{Run: func(*corev1.Pod) kubetest.PodOutcome { return kubetest.OOMKill() }})
	jb := job(7)
	jb.Template.Limits = nil
	jb.Template.Requests = nil
	if err := l.Launch(ctx(t), jb); err != nil {
		t.Fatal(err)
	}
	ch, err := l.Watch(ctx(t), 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, ch)
	if f := got[len(got)-1].Failure; f == nil || f.Message != "killed: out of memory, limit none set" {
		t.Errorf("failure %+v", f)
	}
}

// TestWatchSurvives follows a pod across a dropped stream and a 410 Gone.
func TestWatchSurvives(t *testing.T) {
	release := make(chan struct{})
	var srv *kubetest.Server
	srv, l := newServer(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		srv.Running(p)
		<-release
		return kubetest.Succeed()
	}})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	if err := l.Launch(ctx(t), job(7)); err != nil {
		t.Fatal(err)
	}
	ch, err := l.Watch(ctx(t), 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	next := func() kube.Status {
		t.Helper()
		select {
		case st := <-ch:
			return st
		case <-time.After(10 * time.Second):
			t.Fatal("no status")
		}
		return kube.Status{}
	}
	var seen []kube.State
	for st := next(); st.State != kube.Running; st = next() {
		seen = append(seen, st.State)
	}
	t.Logf("states before running: %v", seen)
	watches := func() int {
		n := 0
		for _, r := range srv.Recorded() {
			if r.Verb == "watch" {
				n++
			}
		}
		return n
	}
	waitWatches := func(n int) {
		t.Helper()
		for range 500 {
			if watches() >= n {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("%d watches, want %d", watches(), n)
	}
	waitWatches(1)
	// A dropped stream: the watch reconnects from where it was.
	srv.DropWatches()
	waitWatches(2)
	// A compaction, then a drop: the reconnection is answered 410 Gone,
	// and the watch lists again.
	// (another change first: the pod's version must be before the
	// compaction, as a busy cluster's is)
	if _, err := srv.Client().CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Launch(ctx(t), job(8)); err != nil {
		t.Fatal(err)
	}
	srv.Compact()
	srv.DropWatches()
	waitWatches(4)
	once.Do(func() { close(release) })
	if st := next(); st.State != kube.Succeeded {
		t.Fatalf("after the reconnections: %+v", st)
	}
	if _, ok := <-ch; ok {
		t.Error("the channel stays open after Succeeded")
	}
	lists := 0
	for _, r := range srv.Recorded() {
		if r.Verb == "list" && r.Resource == "pods" {
			lists++
		}
	}
	if lists < 2 {
		t.Errorf("%d pod lists, want a re-list after the 410", lists)
	}
}

func TestWatchDeletedJob(t *testing.T) {
	_, l := newServer(t, kubetest.Options{Run: never})
	if err := l.Launch(ctx(t), job(7)); err != nil {
		t.Fatal(err)
	}
	ch, err := l.Watch(ctx(t), 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	if st := <-ch; st.State != kube.Pending {
		t.Fatalf("first %+v", st)
	}
	if err := l.Delete(ctx(t), 7, 1); err != nil {
		t.Fatal(err)
	}
	got := collect(t, ch)
	if f := got[len(got)-1].Failure; f == nil || f.Reason != "Deleted" {
		t.Errorf("after Delete: %+v", got)
	}
}

func TestWatchDeadlineExceeded(t *testing.T) {
	var srv *kubetest.Server
	srv, l := newServer(t, kubetest.Options{TerminationDelay: 50 * time.Millisecond, Run: func(p *corev1.Pod) kubetest.PodOutcome {
		srv.Running(p)
		time.Sleep(5 * time.Second)
		return kubetest.Succeed()
	}})
	jb := job(7)
	jb.Template.ActiveDeadlineSeconds = 1
	if err := l.Launch(ctx(t), jb); err != nil {
		t.Fatal(err)
	}
	ch, err := l.Watch(ctx(t), 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := collect(t, ch)
	f := got[len(got)-1].Failure
	if f == nil || f.Reason != "JobFailed" || f.Message != "the Kubernetes Job failed: DeadlineExceeded: Job was active longer than specified deadline" {
		t.Errorf("after the deadline: %+v %+v", got, f)
	}
}

func TestWatchEndsWithContext(t *testing.T) {
	_, l := newServer(t, kubetest.Options{Run: never})
	c, cancel := context.WithCancel(context.Background())
	ch, err := l.Watch(c, 7, 1)
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	collect(t, ch)
}

// TestRequiredRBAC does everything the Launcher does on one fake and
// compares the (resource, verb) pairs it used with RequiredRBAC, both ways:
// the Helm chart's Role grants exactly these.
func TestRequiredRBAC(t *testing.T) {
	var failCreate sync.Once
	srv, l := newServer(t, kubetest.Options{
		Run: func(p *corev1.Pod) kubetest.PodOutcome {
			if strings.HasPrefix(p.Name, "atoll-job-2-") {
				return kubetest.Unschedulable("0/1 nodes are available")
			}
			return kubetest.Succeed()
		},
		Intercept: func(r kubetest.Request) error {
			var err error
			if r.Resource == "jobs" && r.Verb == "create" {
				failCreate.Do(func() { err = fmt.Errorf("injected") })
			}
			return err
		},
	})
	l.ScheduleTimeout = 300 * time.Millisecond
	if err := l.Launch(ctx(t), job(1)); err == nil {
		t.Fatal("the injected failure did not fail the launch")
	}
	for range 2 { // a launch, then a relaunch of the same attempt
		if err := l.Launch(ctx(t), job(1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Launch(ctx(t), job(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := l.List(ctx(t)); err != nil {
		t.Fatal(err)
	}
	for _, id := range []int64{1, 2} {
		ch, err := l.Watch(ctx(t), id, 1)
		if err != nil {
			t.Fatal(err)
		}
		collect(t, ch)
	}
	// A watch whose pod goes without ending asks the Job why.
	if err := l.Launch(ctx(t), job(3)); err != nil {
		t.Fatal(err)
	}
	ch, err := l.Watch(ctx(t), 3, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Delete(ctx(t), 3, 1); err != nil {
		t.Fatal(err)
	}
	collect(t, ch)
	if err := l.Delete(ctx(t), 1, 1); err != nil {
		t.Fatal(err)
	}

	used := map[string]bool{}
	for _, r := range srv.Recorded() {
		used[r.Group+"/"+resourceName(r)+" "+r.Verb] = true
	}
	granted := map[string]bool{}
	for _, p := range kube.RequiredRBAC {
		for _, v := range p.Verbs {
			granted[p.Group+"/"+p.Resource+" "+v] = true
		}
	}
	for k := range used {
		if !granted[k] {
			t.Errorf("used but not in RequiredRBAC: %s", k)
		}
	}
	if t.Failed() || !used["/pods watch"] {
		t.Logf("recorded: %+v", srv.Recorded())
	}
	for k := range granted {
		if !used[k] {
			t.Errorf("in RequiredRBAC but not used: %s", k)
		}
	}
}
