package kubetest_test

import (
	"context"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll/kube/kubetest"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
)

const ns = "atoll"

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func job(name string) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "t", "n": name}},
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "t"}},
			Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{
				Name: "c", Image: "example/img:1", Args: []string{"-c", "echo hello; exit 3"},
				Env: []corev1.EnvVar{{Name: "GREETING", Value: "hi"}},
			}}},
		}},
	}
}

// waitPod waits for the Job's pod to satisfy ok.
func waitPod(t *testing.T, c kubernetes.Interface, jobName string, ok func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		pods, err := c.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: "job-name=" + jobName})
		if err != nil {
			t.Fatal(err)
		}
		for i := range pods.Items {
			if ok(&pods.Items[i]) {
				return &pods.Items[i]
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("no pod of %s as expected", jobName)
	return nil
}

func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	if len(p.Status.ContainerStatuses) == 0 {
		return nil
	}
	return p.Status.ContainerStatuses[0].State.Terminated
}

func TestJobsCRUDAndErrors(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	c := srv.Client()
	jobs := c.BatchV1().Jobs(ns)
	created, err := jobs.Create(ctx(t), job("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if created.UID == "" || created.ResourceVersion == "" || created.CreationTimestamp.IsZero() || created.Generation != 1 {
		t.Errorf("metadata not set: %+v", created.ObjectMeta)
	}
	if created.Spec.Selector == nil || created.Spec.Template.Labels["batch.kubernetes.io/job-name"] != "a" || created.Spec.Template.Labels["controller-uid"] != string(created.UID) {
		t.Errorf("the Job's selector and template labels are not the controller's: %+v %v", created.Spec.Selector, created.Spec.Template.Labels)
	}
	_, err = jobs.Create(ctx(t), job("a"), metav1.CreateOptions{})
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v, want AlreadyExists", err)
	}
	if se := err.(*apierrors.StatusError); se.ErrStatus.Code != 409 || se.ErrStatus.Details.Name != "a" || se.ErrStatus.Details.Group != "batch" {
		t.Errorf("409 status: %+v", se.ErrStatus)
	}
	_, err = jobs.Get(ctx(t), "nope", metav1.GetOptions{})
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `jobs.batch "nope" not found`) {
		t.Errorf("get of a missing Job: %v", err)
	}
	bad := job("b")
	bad.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways
	if _, err := jobs.Create(ctx(t), bad, metav1.CreateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("restartPolicy Always: %v, want Invalid", err)
	}
	if _, err := jobs.Create(ctx(t), job("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().Jobs("other").Create(ctx(t), job("c"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := jobs.List(ctx(t), metav1.ListOptions{LabelSelector: "app=t,n in (a)"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "a" || list.ResourceVersion == "" {
		t.Errorf("list by label: %d items, rv %q", len(list.Items), list.ResourceVersion)
	}
	all, err := jobs.List(ctx(t), metav1.ListOptions{})
	if err != nil || len(all.Items) != 2 {
		t.Errorf("list of the namespace: %v, %d items, want 2", err, len(all.Items))
	}
	// Update with a stale resourceVersion conflicts.
	stale := created.DeepCopy()
	stale.Labels["x"] = "y"
	got, _ := jobs.Get(ctx(t), "a", metav1.GetOptions{})
	got.Labels["x"] = "z"
	if _, err := jobs.Update(ctx(t), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := jobs.Update(ctx(t), stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("stale update: %v, want Conflict", err)
	}
	if err := jobs.Delete(ctx(t), "nope", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("delete of a missing Job: %v", err)
	}
}

func TestWatchFromResourceVersionAndGone(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Run: func(*corev1.Pod) kubetest.PodOutcome { return kubetest.Unschedulable("0/1 nodes") }})
	c := srv.Client()
	jobs := c.BatchV1().Jobs(ns)
	if _, err := jobs.Create(ctx(t), job("a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := jobs.List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := jobs.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion, LabelSelector: "app=t"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := jobs.Create(ctx(t), job("b"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := jobs.Delete(ctx(t), "a", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	var seen []string
	for len(seen) < 3 {
		select {
		case ev := <-w.ResultChan():
			j := ev.Object.(*batchv1.Job)
			seen = append(seen, string(ev.Type)+" "+j.Name)
		case <-time.After(5 * time.Second):
			t.Fatalf("events so far: %v", seen)
		}
	}
	// b's ADDED, then its controller's MODIFIED (active 1), then a's DELETED
	// (or the MODIFIED after it): a's ADDED is before the resourceVersion.
	if seen[0] != "ADDED b" || !slices.Contains(seen, "DELETED a") && !slices.Contains(seen, "MODIFIED b") {
		t.Errorf("events: %v", seen)
	}
	// Without a resourceVersion the watch starts with the current state.
	w2, err := jobs.Watch(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ev := <-w2.ResultChan()
	if ev.Type != watch.Added || ev.Object.(*batchv1.Job).Name != "b" {
		t.Errorf("first event %v %v", ev.Type, ev.Object)
	}
	w2.Stop()
	// After a compaction an old resourceVersion is 410 Gone.
	srv.Compact()
	w3, err := jobs.Watch(ctx(t), metav1.ListOptions{ResourceVersion: list.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	ev = <-w3.ResultChan()
	if ev.Type != watch.Error {
		t.Fatalf("watch from a compacted version: %v, want ERROR", ev.Type)
	}
	if err := apierrors.FromObject(ev.Object); !apierrors.IsResourceExpired(err) || err.(apierrors.APIStatus).Status().Code != 410 {
		t.Errorf("ERROR event: %v, want 410 Expired", err)
	}
	w3.Stop()
	// DropWatches ends open streams.
	w4, err := jobs.Watch(ctx(t), metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	<-w4.ResultChan()
	srv.DropWatches()
	select {
	case _, ok := <-w4.ResultChan():
		for ok {
			_, ok = <-w4.ResultChan()
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a dropped watch's channel is still open")
	}
}

func ptr[T any](v T) *T { return &v }

func TestForegroundDeletionAndOwnedSecret(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{
		TerminationDelay: 300 * time.Millisecond,
		Run:              func(p *corev1.Pod) kubetest.PodOutcome { return kubetest.Unschedulable("no") },
	})
	c := srv.Client()
	j, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("a"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "a", OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "a", UID: j.UID}}},
		Data: map[string][]byte{"token": []byte("s3cret")}}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), sec, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second secret: %v", err)
	}
	got, err := c.CoreV1().Secrets(ns).Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil || string(got.Data["token"]) != "s3cret" {
		t.Fatalf("secret: %v %v", err, got)
	}
	waitPod(t, c, "a", func(*corev1.Pod) bool { return true })
	if err := c.BatchV1().Jobs(ns).Delete(ctx(t), "a", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationForeground)}); err != nil {
		t.Fatal(err)
	}
	during, err := c.BatchV1().Jobs(ns).Get(ctx(t), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Job went at once: %v", err)
	}
	if during.DeletionTimestamp == nil || !slices.Contains(during.Finalizers, metav1.FinalizerDeleteDependents) {
		t.Errorf("during a foreground deletion: %v %v", during.DeletionTimestamp, during.Finalizers)
	}
	pods, _ := c.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{LabelSelector: "batch.kubernetes.io/job-name=a"})
	if len(pods.Items) != 1 || pods.Items[0].DeletionTimestamp == nil {
		t.Errorf("the pod is not terminating: %+v", pods.Items)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.BatchV1().Jobs(ns).Get(ctx(t), "a", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Job is still there")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if pods, _ := c.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{}); len(pods.Items) != 0 {
		t.Errorf("pods left: %d", len(pods.Items))
	}
	if _, err := c.CoreV1().Secrets(ns).Get(ctx(t), "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the owned secret: %v, want NotFound", err)
	}
	// Orphan (batch/v1's default): the dependents stay, without the reference.
	j, _ = c.BatchV1().Jobs(ns).Create(ctx(t), job("b"), metav1.CreateOptions{})
	sec.Name, sec.OwnerReferences[0].UID, sec.ResourceVersion = "b", j.UID, ""
	c.CoreV1().Secrets(ns).Create(ctx(t), sec, metav1.CreateOptions{})
	if err := c.BatchV1().Jobs(ns).Delete(ctx(t), "b", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, err := c.CoreV1().Secrets(ns).Get(ctx(t), "b", metav1.GetOptions{}); err != nil || len(s.OwnerReferences) != 0 {
		t.Errorf("orphaned secret: %v %v", err, s)
	}
	if err := c.CoreV1().Secrets(ns).Delete(ctx(t), "b", metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
}

func TestOutcomes(t *testing.T) {
	outcomes := map[string]kubetest.PodOutcome{
		"ok": kubetest.Succeed(), "exit": kubetest.Exit(3), "oom": kubetest.OOMKill(),
		"evict":   kubetest.Evict("The node was low on resource: memory."),
		"unsched": kubetest.Unschedulable("0/3 nodes are available: 3 Insufficient memory."),
		"pull":    kubetest.ImagePullError("manifest unknown"),
	}
	srv := kubetest.New(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		return outcomes[strings.TrimSuffix(p.GenerateName, "-")]
	}})
	c := srv.Client()
	for name := range outcomes {
		if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), job(name), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	p := waitPod(t, c, "ok", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodSucceeded })
	if tm := terminated(p); tm == nil || tm.Reason != "Completed" || tm.ExitCode != 0 || p.Spec.NodeName == "" {
		t.Errorf("ok: %+v", p.Status)
	}
	if !strings.HasPrefix(p.Name, "ok-") || len(p.Name) != len("ok-")+5 || p.Labels["controller-uid"] == "" || p.OwnerReferences[0].Kind != "Job" {
		t.Errorf("pod metadata: %s %v %v", p.Name, p.Labels, p.OwnerReferences)
	}
	p = waitPod(t, c, "exit", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if tm := terminated(p); tm == nil || tm.Reason != "Error" || tm.ExitCode != 3 {
		t.Errorf("exit: %+v", p.Status)
	}
	p = waitPod(t, c, "oom", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if tm := terminated(p); tm == nil || tm.Reason != "OOMKilled" || tm.ExitCode != 137 {
		t.Errorf("oom: %+v", p.Status)
	}
	p = waitPod(t, c, "evict", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if p.Status.Reason != "Evicted" || !strings.Contains(p.Status.Message, "low on resource") {
		t.Errorf("evict: %+v", p.Status)
	}
	p = waitPod(t, c, "unsched", func(p *corev1.Pod) bool { return len(p.Status.Conditions) > 0 })
	if p.Status.Phase != corev1.PodPending || p.Status.Conditions[0].Reason != "Unschedulable" {
		t.Errorf("unsched: %+v", p.Status)
	}
	evs, err := c.CoreV1().Events(ns).List(ctx(t), metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
	if err != nil || len(evs.Items) != 1 || evs.Items[0].Reason != "FailedScheduling" || !strings.Contains(evs.Items[0].Message, "Insufficient memory") {
		t.Errorf("unsched events: %v %+v", err, evs)
	}
	p = waitPod(t, c, "pull", func(p *corev1.Pod) bool {
		return len(p.Status.ContainerStatuses) > 0 && p.Status.ContainerStatuses[0].State.Waiting != nil &&
			p.Status.ContainerStatuses[0].State.Waiting.Reason == "ImagePullBackOff"
	})
	if w := p.Status.ContainerStatuses[0].State.Waiting; !strings.Contains(w.Message, "manifest unknown") || p.Status.Phase != corev1.PodPending {
		t.Errorf("pull: %+v", p.Status)
	}
	evs, _ = c.CoreV1().Events(ns).List(ctx(t), metav1.ListOptions{FieldSelector: "involvedObject.name=" + p.Name})
	var reasons []string
	for _, e := range evs.Items {
		reasons = append(reasons, e.Reason)
	}
	if !slices.Contains(reasons, "Failed") || !slices.Contains(reasons, "BackOff") {
		t.Errorf("pull events: %v", reasons)
	}
	// The Jobs' status.
	waitJob := func(name string, ok func(*batchv1.Job) bool) {
		t.Helper()
		for range 500 {
			j, err := c.BatchV1().Jobs(ns).Get(ctx(t), name, metav1.GetOptions{})
			if err == nil && ok(j) {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Errorf("job %s not as expected", name)
	}
	hasCond := func(typ batchv1.JobConditionType) func(*batchv1.Job) bool {
		return func(j *batchv1.Job) bool {
			return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool { return c.Type == typ && c.Status == corev1.ConditionTrue })
		}
	}
	waitJob("ok", func(j *batchv1.Job) bool {
		return hasCond(batchv1.JobComplete)(j) && j.Status.Succeeded == 1 && j.Status.Active == 0
	})
	waitJob("oom", func(j *batchv1.Job) bool { return hasCond(batchv1.JobFailed)(j) && j.Status.Failed == 1 })
	waitJob("unsched", func(j *batchv1.Job) bool { return j.Status.Active == 1 && len(j.Status.Conditions) == 0 })
}

func TestExecOOMKillAndLogs(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	var srv *kubetest.Server
	srv = kubetest.New(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		cmd := exec.Command("sh", p.Spec.Containers[0].Args...)
		if p.GenerateName == "sleep-" {
			cmd = exec.Command("sh", "-c", "echo started; exec sleep 30")
		}
		cmd.Env = kubetest.ContainerEnv(p)
		return srv.Exec(p, cmd)
	}})
	c := srv.Client()
	j := job("run")
	j.Spec.Template.Spec.Containers[0].Args = []string{"-c", "echo $GREETING; exit 3"}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, c, "run", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if tm := terminated(p); tm == nil || tm.ExitCode != 3 {
		t.Errorf("exit code: %+v", p.Status)
	}
	log, err := c.CoreV1().Pods(ns).GetLogs(p.Name, &corev1.PodLogOptions{}).DoRaw(ctx(t))
	if err != nil || string(log) != "hi\n" {
		t.Errorf("log: %q %v", log, err)
	}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("sleep"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, c, "sleep", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning })
	start := time.Now()
	if err := srv.OOMKill(ns, p.Name); err != nil {
		t.Fatal(err)
	}
	p = waitPod(t, c, "sleep", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if tm := terminated(p); tm == nil || tm.Reason != "OOMKilled" || time.Since(start) > 5*time.Second {
		t.Errorf("OOMKill: %+v", p.Status)
	}
	if err := c.CoreV1().Pods(ns).Delete(ctx(t), p.Name, metav1.DeleteOptions{}); err != nil {
		t.Error(err)
	}
	if _, err := c.CoreV1().Pods(ns).Get(ctx(t), p.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("deleted pod: %v", err)
	}
}

func TestPodWatchAndRecorded(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	var srv *kubetest.Server
	srv = kubetest.New(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		srv.Running(p)
		<-release
		return kubetest.Succeed()
	}})
	c := srv.Client()
	w, err := c.CoreV1().Pods(ns).Watch(ctx(t), metav1.ListOptions{LabelSelector: "job-name=a"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var phases []corev1.PodPhase
	for len(phases) == 0 || phases[len(phases)-1] != corev1.PodSucceeded {
		select {
		case ev := <-w.ResultChan():
			p := ev.Object.(*corev1.Pod)
			if len(phases) == 0 || phases[len(phases)-1] != p.Status.Phase {
				phases = append(phases, p.Status.Phase)
			}
			if p.Status.Phase == corev1.PodRunning {
				once.Do(func() { close(release) })
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("phases: %v", phases)
		}
	}
	if want := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}; !slices.Equal(phases, want) {
		t.Errorf("phases %v, want %v", phases, want)
	}
	rec := srv.Recorded()
	want := []kubetest.Request{
		{Verb: "watch", Resource: "pods", Namespace: ns},
		{Verb: "create", Group: "batch", Resource: "jobs", Namespace: ns},
	}
	if !slices.Equal(rec, want) {
		t.Errorf("recorded %+v, want %+v", rec, want)
	}
}

func TestUnknownFieldsRecorded(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	c := srv.Client()
	body := `{"apiVersion":"v1","kind":"Secret","metadata":{"name":"s"},"data":{},"bogus":1}`
	err := c.CoreV1().RESTClient().Post().Namespace(ns).Resource("secrets").SetHeader("Content-Type", "application/json").
		Body([]byte(body)).Do(ctx(t)).Error()
	if err != nil {
		t.Fatal(err)
	}
	if u := srv.UnknownFields(); len(u) != 1 || !strings.Contains(u[0], "bogus") {
		t.Errorf("unknown fields: %v", u)
	}
}

func TestIntercept(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{Intercept: func(r kubetest.Request) error {
		if r.Resource == "jobs" && r.Verb == "create" {
			return apierrors.NewForbidden(batchv1.Resource("jobs"), "", nil)
		}
		return nil
	}})
	if _, err := srv.Client().BatchV1().Jobs(ns).Create(ctx(t), job("a"), metav1.CreateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("intercepted create: %v", err)
	}
}

// TestJSONClient: a client that sends JSON (ContentType set) rather than
// client-go's default protobuf bodies is served the same, and the typed
// objects it sends have no field the server does not know.
func TestJSONClient(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	cfg := srv.Config()
	cfg.ContentType = "application/json"
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("a"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}, StringData: map[string]string{"k": "v"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, err := c.CoreV1().Secrets(ns).Get(ctx(t), "s", metav1.GetOptions{}); err != nil || string(s.Data["k"]) != "v" || s.StringData != nil {
		t.Errorf("stringData is not merged into data: %v %+v", err, s)
	}
	if err := c.BatchV1().Jobs(ns).Delete(ctx(t), "a", metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationBackground)}); err != nil {
		t.Fatal(err)
	}
	if u := srv.UnknownFields(); len(u) > 0 {
		t.Errorf("unknown fields: %v", u)
	}
	if _, err := c.BatchV1().Jobs(ns).Get(ctx(t), "a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after a background delete: %v", err)
	}
}

func TestActiveDeadline(t *testing.T) {
	var srv *kubetest.Server
	srv = kubetest.New(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		srv.Running(p)
		time.Sleep(10 * time.Second) // outlives the deadline; its outcome is ignored
		return kubetest.Succeed()
	}})
	c := srv.Client()
	j := job("a")
	j.Spec.ActiveDeadlineSeconds = ptr(int64(1))
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), j, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 300 {
		got, err := c.BatchV1().Jobs(ns).Get(ctx(t), "a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(got.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobFailed && c.Reason == "DeadlineExceeded"
		}) {
			pods, _ := c.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{})
			if len(pods.Items) != 0 {
				t.Errorf("pods left after the deadline: %d", len(pods.Items))
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the Job did not fail at its deadline")
}

// The kubelet's FallbackToLogsOnError puts the end of a failed
// container's log in its termination message; the TTL-after-finished
// controller then deletes the finished Job, its pod and what it owns.
func TestTerminationMessageAndTTL(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	var srv *kubetest.Server
	srv = kubetest.New(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		cmd := exec.Command("sh", p.Spec.Containers[0].Args...)
		cmd.Env = kubetest.ContainerEnv(p)
		return srv.Exec(p, cmd)
	}})
	c := srv.Client()
	j := job("ttl")
	j.Spec.TTLSecondsAfterFinished = ptr(int32(1))
	j.Spec.Template.Spec.Containers[0].TerminationMessagePolicy = corev1.TerminationMessageFallbackToLogsOnError
	j.Spec.Template.Spec.Containers[0].Args = []string{"-c", "echo first; echo why it failed; exit 3"}
	created, err := c.BatchV1().Jobs(ns).Create(ctx(t), j, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	owned := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ttl-token", OwnerReferences: []metav1.OwnerReference{
		{APIVersion: "batch/v1", Kind: "Job", Name: "ttl", UID: created.UID}}}}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), owned, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := waitPod(t, c, "ttl", func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodFailed })
	if tm := terminated(p); tm == nil || tm.Message != "first\nwhy it failed" {
		t.Fatalf("termination message: %+v", tm)
	}
	finished := time.Now()
	deadline := finished.Add(10 * time.Second)
	for {
		_, jerr := c.BatchV1().Jobs(ns).Get(ctx(t), "ttl", metav1.GetOptions{})
		_, serr := c.CoreV1().Secrets(ns).Get(ctx(t), "ttl-token", metav1.GetOptions{})
		if apierrors.IsNotFound(jerr) && apierrors.IsNotFound(serr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after its TTL: job %v, secret %v", jerr, serr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if took := time.Since(finished); took < 900*time.Millisecond {
		t.Fatalf("deleted %v after it finished: before its TTL of 1s", took)
	}
	if pods := srv.Pods(ns); len(pods) != 0 {
		t.Fatalf("%d pods left", len(pods))
	}
}

// The garbage collector deletes an object whose owners no longer exist:
// an owner reference set after its owner was deleted does not keep it.
func TestOwnerGoneDependentCollected(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{})
	c := srv.Client()
	owner, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("owner"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(uid types.UID) []metav1.OwnerReference {
		return []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "x", UID: uid}}
	}
	kept := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "kept", OwnerReferences: ref(owner.UID)}}
	gone := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "gone", OwnerReferences: ref("no-such-uid")}}
	for _, s := range []*corev1.Secret{kept, gone} {
		if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.CoreV1().Secrets(ns).Get(ctx(t), "gone", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a Secret whose owner does not exist is still there: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.CoreV1().Secrets(ns).Get(ctx(t), "kept", metav1.GetOptions{}); err != nil {
		t.Fatalf("a Secret whose owner exists: %v", err)
	}
}

// A dependent given an owner reference while its owner Job is being
// deleted in the foreground is deleted too, and the Job then goes; the
// fake closes meanwhile without waiting for it.
func TestDependentAddedDuringForegroundDeletion(t *testing.T) {
	srv := kubetest.New(t, kubetest.Options{TerminationDelay: 300 * time.Millisecond, Run: func(*corev1.Pod) kubetest.PodOutcome {
		return kubetest.Unschedulable("0/1 nodes are available.")
	}})
	c := srv.Client()
	j, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("fg"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitPod(t, c, "fg", func(*corev1.Pod) bool { return true })
	fg := metav1.DeletePropagationForeground
	if err := c.BatchV1().Jobs(ns).Delete(ctx(t), "fg", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	late := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "late", OwnerReferences: []metav1.OwnerReference{{APIVersion: "batch/v1", Kind: "Job", Name: "fg", UID: j.UID}}}}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), late, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, jerr := c.BatchV1().Jobs(ns).Get(ctx(t), "fg", metav1.GetOptions{})
		_, serr := c.CoreV1().Secrets(ns).Get(ctx(t), "late", metav1.GetOptions{})
		if apierrors.IsNotFound(jerr) && apierrors.IsNotFound(serr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("foreground deletion stuck: job %v, secret %v", jerr, serr)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// Closed while a foreground deletion waits for its pod to terminate.
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), job("fg2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitPod(t, c, "fg2", func(*corev1.Pod) bool { return true })
	if err := c.BatchV1().Jobs(ns).Delete(ctx(t), "fg2", metav1.DeleteOptions{PropagationPolicy: &fg}); err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { srv.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs")
	}
}
