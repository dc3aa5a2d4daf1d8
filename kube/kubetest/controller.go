package kubetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"
)

// OutcomeKind is how a pod ends up.
type OutcomeKind int

const (
	// Exited: the pod ran and its container exited with ExitCode
	// (Succeeded on 0, else Failed).
	Exited OutcomeKind = iota
	// Unschedulable: the pod never leaves Pending (PodScheduled False,
	// a FailedScheduling event with Message).
	PodUnschedulable
	// ImagePullFailed: the pod is scheduled but its image cannot be
	// pulled (ErrImagePull then ImagePullBackOff, Failed/BackOff events).
	ImagePullFailed
	// OOMKilled: the container is killed for memory (exit 137).
	OOMKilled
	// Evicted: the kubelet evicts the pod (phase Failed, reason Evicted).
	Evicted
)

// PodOutcome is what Options.Run decides for a pod.
type PodOutcome struct {
	Kind     OutcomeKind
	ExitCode int32
	Message  string
	// Log is the container's log (pods/log); Exec fills it with the
	// process's output.
	Log string
}

// Succeed is a pod whose container exits 0.
func Succeed() PodOutcome { return PodOutcome{Kind: Exited} }

// Exit is a pod whose container exits with code.
func Exit(code int) PodOutcome { return PodOutcome{Kind: Exited, ExitCode: int32(code)} }

// Unschedulable is a pod no node can run: msg is the scheduler's, e.g.
// "0/3 nodes are available: 3 Insufficient memory."
func Unschedulable(msg string) PodOutcome { return PodOutcome{Kind: PodUnschedulable, Message: msg} }

// ImagePullError is a pod whose image cannot be pulled: msg is the
// runtime's, e.g. `rpc error: ... not found`.
func ImagePullError(msg string) PodOutcome { return PodOutcome{Kind: ImagePullFailed, Message: msg} }

// OOMKill is a pod whose container is killed for exceeding its memory
// limit. As Server.OOMKill it kills the pod's process (Exec) if any.
func OOMKill() PodOutcome { return PodOutcome{Kind: OOMKilled, ExitCode: 137} }

// Evict is a pod the kubelet evicts with msg, e.g. "The node was low on
// resource: ephemeral-storage."
func Evict(msg string) PodOutcome { return PodOutcome{Kind: Evicted, Message: msg} }

// podRun is a pod's run: its process (Exec) and the outcome forced on it
// (Server.OOMKill, Server.Evict).
type podRun struct {
	mu     sync.Mutex
	proc   *os.Process
	killed bool
	forced *PodOutcome
	done   bool
	log    bytes.Buffer
}

func (r *podRun) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.killed = true
	if r.proc != nil {
		r.proc.Kill()
	}
}

// startJob is the Job controller's reaction to a new Job (s.mu held): one
// pod, and Run deciding its fate.
func (s *Server) startJob(j *batchv1.Job) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: j.Name + "-",
			Namespace:    j.Namespace,
			Labels:       j.Spec.Template.Labels,
			Annotations:  j.Spec.Template.Annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "batch/v1", Kind: "Job", Name: j.Name, UID: j.UID,
				Controller: ptr(true), BlockOwnerDeletion: ptr(true),
			}},
		},
		Spec: *j.Spec.Template.Spec.DeepCopy(),
		Status: corev1.PodStatus{
			Phase:    corev1.PodPending,
			QOSClass: corev1.PodQOSBurstable,
		},
	}
	s.generateName("pods", pod)
	pod.UID = uuid.NewUUID()
	pod.CreationTimestamp = metav1.Now()
	s.put("pods", watch.Added, pod)
	s.event(j.Namespace, "Job", j.Name, j.UID, corev1.EventTypeNormal, "SuccessfulCreate", "job-controller", "Created pod: "+pod.Name)
	now := metav1.Now()
	j2 := s.objects["jobs"][key(j)].DeepCopyObject().(*batchv1.Job)
	j2.Status.Active, j2.Status.StartTime = 1, &now
	j2.Status.Ready, j2.Status.Terminating = ptr(int32(0)), ptr(int32(0))
	s.put("jobs", watch.Modified, j2)
	run := &podRun{}
	s.runs[pod.UID] = run
	if d := j.Spec.ActiveDeadlineSeconds; d != nil {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.deadline(j.Namespace, j.Name, j.UID, time.Duration(*d)*time.Second)
		}()
	}
	in := pod.DeepCopy()
	// Not in s.wg: Close does not wait for a hook that blocks.
	go func() {
		out := Succeed()
		if s.opts.Run != nil {
			out = s.opts.Run(in)
		}
		run.mu.Lock()
		if run.forced != nil || run.done {
			run.mu.Unlock()
			return
		}
		run.log.WriteString(out.Log)
		run.mu.Unlock()
		s.apply(in.Namespace, in.Name, in.UID, out)
	}()
}

func ptr[T any](v T) *T { return &v }

// event records an Event about an object (s.mu held).
func (s *Server) event(ns, kind, name string, uid types.UID, typ, reason, component, msg string) {
	now := metav1.Now()
	e := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: fmt.Sprintf("%s.%x", name, time.Now().UnixNano()), Namespace: ns, UID: uuid.NewUUID(), CreationTimestamp: now},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name, UID: uid, APIVersion: map[string]string{"Job": "batch/v1", "Pod": "v1"}[kind]},
		Reason:         reason, Message: msg, Type: typ, Count: 1,
		Source:         corev1.EventSource{Component: component},
		FirstTimestamp: now, LastTimestamp: now,
	}
	s.put("events", watch.Added, e)
}

// pod is a copy of the current pod with uid, or nil once it is gone.
func (s *Server) pod(ns, name string, uid types.UID) *corev1.Pod {
	o := s.objects["pods"][ns+"/"+name]
	if o == nil || o.(*corev1.Pod).UID != uid {
		return nil
	}
	return o.DeepCopyObject().(*corev1.Pod)
}

// markRunning moves a pending pod to Running (s.mu held).
func (s *Server) markRunning(p *corev1.Pod) *corev1.Pod {
	if p.Status.Phase != corev1.PodPending {
		return p
	}
	s.schedule(p)
	now := metav1.Now()
	p.Status.Phase = corev1.PodRunning
	p.Status.StartTime = &now
	p.Status.PodIP = "10.0.0.7"
	p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now})
	p.Status.ContainerStatuses = nil
	for _, c := range p.Spec.Containers {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: c.Name, Image: c.Image, Ready: true, Started: ptr(true),
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}},
		})
		s.event(p.Namespace, "Pod", p.Name, p.UID, corev1.EventTypeNormal, "Started", "kubelet", "Started container "+c.Name)
	}
	s.put("pods", watch.Modified, p)
	return p.DeepCopy()
}

func (s *Server) schedule(p *corev1.Pod) {
	if p.Spec.NodeName != "" {
		return
	}
	p.Spec.NodeName = s.opts.NodeName
	p.Status.HostIP = "10.0.0.1"
	p.Status.Conditions = setCondition(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Now()})
	s.event(p.Namespace, "Pod", p.Name, p.UID, corev1.EventTypeNormal, "Scheduled", "default-scheduler",
		fmt.Sprintf("Successfully assigned %s/%s to %s", p.Namespace, p.Name, s.opts.NodeName))
}

func setCondition(cs []corev1.PodCondition, c corev1.PodCondition) []corev1.PodCondition {
	for i := range cs {
		if cs[i].Type == c.Type {
			cs[i] = c
			return cs
		}
	}
	return append(cs, c)
}

// apply reflects an outcome into the pod, its Job and Events.
func (s *Server) apply(ns, name string, uid types.UID, out PodOutcome) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	p := s.pod(ns, name, uid)
	if p == nil || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
		return
	}
	if r := s.runs[uid]; r != nil {
		r.mu.Lock()
		r.done = true
		r.mu.Unlock()
	}
	now := metav1.Now()
	switch out.Kind {
	case PodUnschedulable:
		p.Status.Conditions = setCondition(p.Status.Conditions, corev1.PodCondition{
			Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: out.Message, LastTransitionTime: now,
		})
		s.put("pods", watch.Modified, p)
		s.event(ns, "Pod", name, uid, corev1.EventTypeWarning, "FailedScheduling", "default-scheduler", out.Message)
		return
	case ImagePullFailed:
		s.schedule(p)
		image := ""
		if len(p.Spec.Containers) > 0 {
			image = p.Spec.Containers[0].Image
		}
		s.event(ns, "Pod", name, uid, corev1.EventTypeNormal, "Pulling", "kubelet", fmt.Sprintf("Pulling image %q", image))
		s.event(ns, "Pod", name, uid, corev1.EventTypeWarning, "Failed", "kubelet", fmt.Sprintf("Failed to pull image %q: %s", image, out.Message))
		s.event(ns, "Pod", name, uid, corev1.EventTypeWarning, "Failed", "kubelet", "Error: ErrImagePull")
		p.Status.ContainerStatuses = waiting(p, "ErrImagePull", out.Message)
		s.put("pods", watch.Modified, p)
		p = p.DeepCopy()
		s.event(ns, "Pod", name, uid, corev1.EventTypeNormal, "BackOff", "kubelet", fmt.Sprintf("Back-off pulling image %q", image))
		s.event(ns, "Pod", name, uid, corev1.EventTypeWarning, "Failed", "kubelet", "Error: ImagePullBackOff")
		p.Status.ContainerStatuses = waiting(p, "ImagePullBackOff", fmt.Sprintf("Back-off pulling image %q: ErrImagePull: %s", image, out.Message))
		s.put("pods", watch.Modified, p)
		return
	}
	p = s.markRunning(p)
	reason, code := "Completed", out.ExitCode
	switch out.Kind {
	case OOMKilled:
		reason, code = "OOMKilled", 137
	case Evicted:
		reason, code = "Error", 137
		p.Status.Reason, p.Status.Message = "Evicted", out.Message
		s.event(ns, "Pod", name, uid, corev1.EventTypeWarning, "Evicted", "kubelet", out.Message)
	default:
		if code != 0 {
			reason = "Error"
		}
	}
	p.Status.Phase = corev1.PodSucceeded
	if code != 0 || out.Kind != Exited {
		p.Status.Phase = corev1.PodFailed
	}
	p.Status.Conditions = setCondition(p.Status.Conditions, corev1.PodCondition{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now})
	for i := range p.Status.ContainerStatuses {
		cs := &p.Status.ContainerStatuses[i]
		started := now
		if cs.State.Running != nil {
			started = cs.State.Running.StartedAt
		}
		cs.Ready, cs.Started = false, ptr(false)
		cs.State = corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
			ExitCode: code, Reason: reason, StartedAt: started, FinishedAt: now,
			Message: terminationMessage(p, out.Log, code),
		}}
	}
	s.put("pods", watch.Modified, p)
	s.finishJob(p, now)
}

func waiting(p *corev1.Pod, reason, msg string) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range p.Spec.Containers {
		out = append(out, corev1.ContainerStatus{Name: c.Name, Image: c.Image, Started: ptr(false),
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: reason, Message: msg}}})
	}
	return out
}

// finishJob sets the Job's status from its pod's end (s.mu held).
func (s *Server) finishJob(p *corev1.Pod, now metav1.Time) {
	for _, ref := range p.OwnerReferences {
		if ref.Kind != "Job" {
			continue
		}
		o := s.objects["jobs"][p.Namespace+"/"+ref.Name]
		if o == nil || o.(*batchv1.Job).UID != ref.UID {
			continue
		}
		j := o.DeepCopyObject().(*batchv1.Job)
		j.Status.Active = 0
		cond := func(t batchv1.JobConditionType, reason, msg string) batchv1.JobCondition {
			return batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg, LastProbeTime: now, LastTransitionTime: now}
		}
		if p.Status.Phase == corev1.PodSucceeded {
			j.Status.Succeeded = 1
			j.Status.CompletionTime = &now
			j.Status.Conditions = append(j.Status.Conditions,
				cond(batchv1.JobSuccessCriteriaMet, "CompletionsReached", "Reached expected number of succeeded pods"),
				cond(batchv1.JobComplete, "CompletionsReached", "Reached expected number of succeeded pods"))
			s.event(j.Namespace, "Job", j.Name, j.UID, corev1.EventTypeNormal, "Completed", "job-controller", "Job completed")
		} else {
			j.Status.Failed = 1
			j.Status.Conditions = append(j.Status.Conditions,
				cond(batchv1.JobFailureTarget, "BackoffLimitExceeded", "Job has reached the specified backoff limit"),
				cond(batchv1.JobFailed, "BackoffLimitExceeded", "Job has reached the specified backoff limit"))
			s.event(j.Namespace, "Job", j.Name, j.UID, corev1.EventTypeWarning, "BackoffLimitExceeded", "job-controller", "Job has reached the specified backoff limit")
		}
		s.put("jobs", watch.Modified, j)
		if j.Spec.TTLSecondsAfterFinished != nil {
			s.expire(j, time.Duration(*j.Spec.TTLSecondsAfterFinished)*time.Second)
		}
	}
}

// expire is the TTL-after-finished controller: it deletes a finished Job
// after its ttl with its pod and its Secret (s.mu held).
func (s *Server) expire(j *batchv1.Job, ttl time.Duration) {
	k, uid := key(j), j.UID
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-time.After(ttl):
		case <-s.closing:
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		cur := s.objects["jobs"][k]
		if s.closed || cur == nil || mustAccessor(cur).GetUID() != uid || mustAccessor(cur).GetDeletionTimestamp() != nil {
			return
		}
		// Foreground, as the real controller deletes: the pod (and the
		// Secret it owns) first, then the Job.
		o := cur.DeepCopyObject()
		acc := mustAccessor(o)
		now := metav1.Now()
		acc.SetDeletionTimestamp(&now)
		acc.SetFinalizers(append(acc.GetFinalizers(), metav1.FinalizerDeleteDependents))
		s.put("jobs", watch.Modified, o)
		s.collect(uid, j.Namespace, func() {
			if cur := s.objects["jobs"][k]; cur != nil && mustAccessor(cur).GetUID() == uid {
				s.put("jobs", watch.Deleted, cur.DeepCopyObject())
			}
		})
	}()
}

// terminationMessage is what the kubelet puts in a container's
// terminated.message with FallbackToLogsOnError when it exits with an
// error: the end of its log, at most 80 lines and 2048 bytes.
func terminationMessage(p *corev1.Pod, log string, code int32) string {
	if code == 0 || len(p.Spec.Containers) == 0 || p.Spec.Containers[0].TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		return ""
	}
	lines := strings.Split(strings.TrimRight(log, "\n"), "\n")
	if len(lines) > 80 {
		lines = lines[len(lines)-80:]
	}
	msg := strings.Join(lines, "\n")
	if len(msg) > 2048 {
		msg = msg[len(msg)-2048:]
	}
	return msg
}

// Running moves the pod to Running now, for a Run hook that then takes its
// time (a simulated outcome returned without it passes through Running
// anyway).
func (s *Server) Running(pod *corev1.Pod) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pod(pod.Namespace, pod.Name, pod.UID); p != nil && p.DeletionTimestamp == nil {
		s.markRunning(p)
	}
}

// Exec runs cmd as the pod's container, from a Run hook: the pod is
// Running while it runs, its output is the pod's log, and its exit code
// the container's. Server.OOMKill and Server.Evict kill it. cmd's Env is
// the caller's (ContainerEnv gives the pod's literal values).
func (s *Server) Exec(pod *corev1.Pod, cmd *exec.Cmd) PodOutcome {
	s.mu.Lock()
	run := s.runs[pod.UID]
	s.mu.Unlock()
	if run == nil {
		return Exit(1)
	}
	s.Running(pod)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	run.mu.Lock()
	if run.killed {
		run.mu.Unlock()
		return Exit(137)
	}
	if err := cmd.Start(); err != nil {
		run.mu.Unlock()
		return PodOutcome{Kind: Exited, ExitCode: 128, Log: err.Error()}
	}
	run.proc = cmd.Process
	run.mu.Unlock()
	err := cmd.Wait()
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 0 {
			code = ee.ExitCode()
		} else if ok {
			code = 137
		}
	}
	return PodOutcome{Kind: Exited, ExitCode: int32(code), Log: out.String()}
}

// ContainerEnv is the pod's first container's env with literal values, as
// NAME=value.
func ContainerEnv(pod *corev1.Pod) []string {
	var env []string
	if len(pod.Spec.Containers) == 0 {
		return nil
	}
	for _, e := range pod.Spec.Containers[0].Env {
		if e.ValueFrom == nil {
			env = append(env, e.Name+"="+e.Value)
		}
	}
	return env
}

// OOMKill kills the pod's process (Exec) if any and ends the pod as
// OOMKilled, whatever its Run hook then returns.
func (s *Server) OOMKill(namespace, pod string) error { return s.force(namespace, pod, OOMKill()) }

// Evict ends the pod as evicted with msg, killing its process if any.
func (s *Server) Evict(namespace, pod, msg string) error { return s.force(namespace, pod, Evict(msg)) }

func (s *Server) force(namespace, name string, out PodOutcome) error {
	s.mu.Lock()
	o := s.objects["pods"][namespace+"/"+name]
	if o == nil {
		s.mu.Unlock()
		return fmt.Errorf("no pod %s/%s", namespace, name)
	}
	uid := o.(*corev1.Pod).UID
	run := s.runs[uid]
	s.mu.Unlock()
	if run != nil {
		run.mu.Lock()
		run.forced = &out
		run.mu.Unlock()
		run.kill()
	}
	s.apply(namespace, name, uid, out)
	return nil
}

// deadline is activeDeadlineSeconds: a Job still active after d fails
// (DeadlineExceeded) and its pods are deleted.
func (s *Server) deadline(ns, name string, uid types.UID, d time.Duration) {
	s.mu.Lock()
	drop := s.closing
	s.mu.Unlock()
	select {
	case <-time.After(d):
	case <-drop:
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects["jobs"][ns+"/"+name]
	if s.closed || o == nil || o.(*batchv1.Job).UID != uid {
		return
	}
	j := o.DeepCopyObject().(*batchv1.Job)
	if j.Status.Active == 0 || j.DeletionTimestamp != nil {
		return
	}
	now := metav1.Now()
	const msg = "Job was active longer than specified deadline"
	j.Status.Active, j.Status.Failed = 0, j.Status.Failed+1
	j.Status.Conditions = append(j.Status.Conditions,
		batchv1.JobCondition{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: msg, LastProbeTime: now, LastTransitionTime: now},
		batchv1.JobCondition{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: batchv1.JobReasonDeadlineExceeded, Message: msg, LastProbeTime: now, LastTransitionTime: now})
	s.put("jobs", watch.Modified, j)
	s.event(ns, "Job", name, uid, corev1.EventTypeWarning, batchv1.JobReasonDeadlineExceeded, "job-controller", msg)
	for _, d := range s.owned(uid, ns) {
		if p, ok := d.obj.(*corev1.Pod); ok {
			s.deletePod(p)
		}
	}
}
