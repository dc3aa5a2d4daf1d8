package kube

import (
	"context"
	"fmt"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
)

// State is where an attempt's pod is, in words.
type State string

const (
	Pending   State = "Pending"
	Running   State = "Running"
	Succeeded State = "Succeeded"
	Failed    State = "Failed"
)

// Status is one step of an attempt's pod, as Watch sends them.
type Status struct {
	State State
	Pod   string
	// Message says why it is Pending (the scheduler's words), if known.
	Message string
	// Failure is why it Failed.
	Failure *Failure
}

// Failure is why an attempt failed, for a user to read.
type Failure struct {
	// Reason is OOMKilled, ImagePull, Unschedulable, Evicted, Error (the
	// worker exited non-zero), CreateContainerConfigError, JobFailed or
	// Deleted.
	Reason string
	// Message is the sentence shown, e.g. "killed: out of memory, limit 2Gi".
	Message string
}

func (f *Failure) Error() string { return f.Message }

func (s Status) same(o Status) bool {
	if s.State != o.State || s.Pod != o.Pod || s.Message != o.Message || (s.Failure == nil) != (o.Failure == nil) {
		return false
	}
	return s.Failure == nil || *s.Failure == *o.Failure
}

// Watch follows an attempt's pod and sends its states: Pending (with the
// scheduler's message while no node can run it), Running, then Succeeded
// or Failed, after which the channel is closed (also when ctx ends). It
// re-lists on 410 Gone and reconnects when a stream ends. A pod no node can
// run for ScheduleTimeout is reported Failed (the Job is left to Delete).
func (l *Launcher) Watch(ctx context.Context, jobID int64, attempt int) (<-chan Status, error) {
	w := &watcher{l: l, jobID: jobID, attempt: attempt, name: Name(jobID, attempt), sel: selector(jobID, attempt), out: make(chan Status, 16)}
	if err := w.relist(ctx); err != nil {
		return nil, fmt.Errorf("watch %s: %w", w.name, err)
	}
	go w.run(ctx)
	return w.out, nil
}

type watcher struct {
	l       *Launcher
	jobID   int64
	attempt int
	name    string
	sel     string
	out     chan Status

	rv      string
	pods    map[string]*corev1.Pod
	seen    bool // a pod was seen
	last    *Status
	unsched time.Time // since when the pod is unschedulable (zero: it is not)
}

func (w *watcher) timeout() time.Duration {
	if w.l.ScheduleTimeout > 0 {
		return w.l.ScheduleTimeout
	}
	return DefaultScheduleTimeout
}

func (w *watcher) relist(ctx context.Context) error {
	list, err := w.l.Client.CoreV1().Pods(w.l.Namespace).List(ctx, metav1.ListOptions{LabelSelector: w.sel})
	if err != nil {
		return err
	}
	w.rv = list.ResourceVersion
	w.pods = map[string]*corev1.Pod{}
	for i := range list.Items {
		w.pods[list.Items[i].Name] = &list.Items[i]
	}
	return nil
}

func (w *watcher) run(ctx context.Context) {
	defer close(w.out)
	backoff := 100 * time.Millisecond
	needList := false
	for {
		if needList {
			if err := w.relist(ctx); err != nil {
				if !w.sleep(ctx, &backoff) {
					return
				}
				continue
			}
			needList = false
		}
		if done := w.evaluate(ctx); done {
			return
		}
		stream, err := w.l.Client.CoreV1().Pods(w.l.Namespace).Watch(ctx, metav1.ListOptions{
			LabelSelector: w.sel, ResourceVersion: w.rv, AllowWatchBookmarks: true,
		})
		if err != nil {
			if apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
				needList = true
				continue
			}
			if !w.sleep(ctx, &backoff) {
				return
			}
			continue
		}
		backoff = 100 * time.Millisecond
		done, relist := w.follow(ctx, stream)
		stream.Stop()
		if done {
			return
		}
		needList = relist
	}
}

// sleep waits out a growing backoff (false: ctx ended).
func (w *watcher) sleep(ctx context.Context, backoff *time.Duration) bool {
	t := time.NewTimer(*backoff)
	defer t.Stop()
	*backoff = min(*backoff*2, 5*time.Second)
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// follow reads one stream until it ends: done when the watch is over,
// relist after a 410.
func (w *watcher) follow(ctx context.Context, stream watch.Interface) (done, relist bool) {
	for {
		var deadline <-chan time.Time
		var timer *time.Timer
		if !w.unsched.IsZero() {
			timer = time.NewTimer(time.Until(w.unsched.Add(w.timeout())))
			deadline = timer.C
		}
		var ev watch.Event
		ok, tick := true, false
		select {
		case <-ctx.Done():
			ok = false
		case <-deadline:
			tick = true
		case ev, ok = <-stream.ResultChan():
		}
		if timer != nil {
			timer.Stop()
		}
		if ctx.Err() != nil {
			return true, false
		}
		if !ok {
			return false, false
		}
		if !tick {
			switch ev.Type {
			case watch.Error:
				// 410 Gone (the history is compacted) or another error in
				// the stream: the list says where things are.
				return false, true
			case watch.Bookmark:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					w.rv = p.ResourceVersion
				}
				continue
			case watch.Added, watch.Modified:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					w.pods[p.Name] = p
					w.rv = p.ResourceVersion
				}
			case watch.Deleted:
				if p, ok := ev.Object.(*corev1.Pod); ok {
					delete(w.pods, p.Name)
					w.rv = p.ResourceVersion
				}
			}
		}
		if w.evaluate(ctx) {
			return true, false
		}
	}
}

// send sends st unless it is the last one sent; false when ctx ended.
func (w *watcher) send(ctx context.Context, st Status) bool {
	if w.last != nil && w.last.same(st) {
		return true
	}
	w.last = &st
	select {
	case w.out <- st:
		return true
	case <-ctx.Done():
		return false
	}
}

// evaluate sends the current pod's state; true when it is final.
func (w *watcher) evaluate(ctx context.Context) bool {
	var pod *corev1.Pod
	for _, p := range w.pods {
		if pod == nil || p.CreationTimestamp.After(pod.CreationTimestamp.Time) {
			pod = p
		}
	}
	if pod == nil {
		if !w.seen {
			return !w.send(ctx, Status{State: Pending, Message: "waiting for the Job's pod"})
		}
		// The pod went without ending: the Job was deleted or failed.
		f := w.jobGone(ctx)
		w.send(ctx, Status{State: Failed, Failure: f})
		return true
	}
	w.seen = true
	st, unschedulable := describe(pod)
	if !unschedulable {
		w.unsched = time.Time{}
	} else {
		if w.unsched.IsZero() {
			w.unsched = time.Now()
		}
		msg := w.schedulerMessage(ctx, pod)
		st.Message = msg
		if time.Since(w.unsched) >= w.timeout() {
			st = Status{State: Failed, Pod: pod.Name, Failure: &Failure{Reason: "Unschedulable", Message: "no node can run it: " + msg}}
		}
	}
	if !w.send(ctx, st) {
		return true
	}
	return st.State == Succeeded || st.State == Failed
}

// schedulerMessage is the latest FailedScheduling event's message about
// pod (else its PodScheduled condition's).
func (w *watcher) schedulerMessage(ctx context.Context, pod *corev1.Pod) string {
	msg := ""
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			msg = c.Message
		}
	}
	events, err := w.l.Client.CoreV1().Events(w.l.Namespace).List(ctx, metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.name", pod.Name).String(),
	})
	if err != nil {
		return msg
	}
	var latest time.Time
	for _, e := range events.Items {
		if e.Reason != "FailedScheduling" || (e.InvolvedObject.UID != "" && e.InvolvedObject.UID != pod.UID) {
			continue
		}
		at := e.LastTimestamp.Time
		if at.IsZero() {
			at = e.EventTime.Time
		}
		if msg == "" || !at.Before(latest) {
			msg, latest = e.Message, at
		}
	}
	return msg
}

// jobGone says why an attempt's pod went without ending.
func (w *watcher) jobGone(ctx context.Context) *Failure {
	job, err := w.l.Client.BatchV1().Jobs(w.l.Namespace).Get(ctx, w.name, metav1.GetOptions{})
	if err != nil || job.DeletionTimestamp != nil {
		return &Failure{Reason: "Deleted", Message: "the worker pod was deleted"}
	}
	for _, c := range job.Status.Conditions {
		if c.Type == batchv1.JobFailed && c.Status == corev1.ConditionTrue {
			return &Failure{Reason: "JobFailed", Message: fmt.Sprintf("the Kubernetes Job failed: %s", strings.TrimSpace(c.Reason+": "+c.Message))}
		}
	}
	return &Failure{Reason: "Deleted", Message: "the worker pod was deleted"}
}

// describe is a pod's state in words, and whether no node can run it.
func describe(pod *corev1.Pod) (Status, bool) {
	st := Status{Pod: pod.Name}
	cs := workerStatus(pod)
	switch pod.Status.Phase {
	case corev1.PodSucceeded:
		st.State = Succeeded
		return st, false
	case corev1.PodFailed:
		st.State = Failed
		st.Failure = failure(pod, cs)
		return st, false
	case corev1.PodRunning:
		st.State = Running
		if cs != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode != 0 {
			st.State, st.Failure = Failed, failure(pod, cs)
		}
		return st, false
	}
	st.State = Pending
	if cs != nil && cs.State.Waiting != nil {
		wt := cs.State.Waiting
		switch wt.Reason {
		case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull":
			msg := wt.Message
			if i := strings.Index(msg, "ErrImagePull: "); i >= 0 {
				msg = msg[i+len("ErrImagePull: "):]
			}
			if msg == "" {
				msg = wt.Reason
			}
			st.State, st.Failure = Failed, &Failure{Reason: "ImagePull", Message: fmt.Sprintf("cannot pull image %s: %s", containerImage(pod), msg)}
			return st, false
		case "CreateContainerConfigError", "CreateContainerError":
			st.State, st.Failure = Failed, &Failure{Reason: wt.Reason, Message: "cannot start the worker: " + wt.Message}
			return st, false
		}
		st.Message = wt.Reason // ContainerCreating, PodInitializing
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			return st, true
		}
	}
	return st, false
}

func workerStatus(pod *corev1.Pod) *corev1.ContainerStatus {
	for i := range pod.Status.ContainerStatuses {
		if pod.Status.ContainerStatuses[i].Name == ContainerName {
			return &pod.Status.ContainerStatuses[i]
		}
	}
	if len(pod.Status.ContainerStatuses) > 0 {
		return &pod.Status.ContainerStatuses[0]
	}
	return nil
}

func workerSpec(pod *corev1.Pod) *corev1.Container {
	for i := range pod.Spec.Containers {
		if pod.Spec.Containers[i].Name == ContainerName {
			return &pod.Spec.Containers[i]
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return &pod.Spec.Containers[0]
	}
	return nil
}

func containerImage(pod *corev1.Pod) string {
	if c := workerSpec(pod); c != nil {
		return c.Image
	}
	return "?"
}

// failure says why a pod failed.
func failure(pod *corev1.Pod, cs *corev1.ContainerStatus) *Failure {
	if pod.Status.Reason == "Evicted" {
		return &Failure{Reason: "Evicted", Message: "evicted: " + pod.Status.Message}
	}
	if cs != nil && cs.State.Terminated != nil {
		t := cs.State.Terminated
		if t.Reason == "OOMKilled" {
			limit := "none set"
			if c := workerSpec(pod); c != nil {
				if q, ok := c.Resources.Limits[corev1.ResourceMemory]; ok {
					limit = q.String()
				}
			}
			return &Failure{Reason: "OOMKilled", Message: "killed: out of memory, limit " + limit}
		}
		if t.ExitCode != 0 {
			msg := fmt.Sprintf("the worker pod exited with code %d", t.ExitCode)
			if last := lastLine(t.Message); last != "" {
				// FallbackToLogsOnError: the end of its log, which says why.
				msg += ": " + last
			}
			return &Failure{Reason: "Error", Message: msg}
		}
	}
	msg := "the worker pod failed"
	if pod.Status.Reason != "" {
		msg += ": " + pod.Status.Reason
	}
	if pod.Status.Message != "" {
		msg += ": " + pod.Status.Message
	}
	return &Failure{Reason: "Error", Message: msg}
}

// lastLine is the last non-empty line of s, at most 300 bytes of it.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if len(last) > 300 {
		last = last[len(last)-300:]
	}
	return last
}
