package kube_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/kube/kubetest"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const ns = "atoll-jobs"

// recorded is every request of every test's fake, checked against
// RequiredRBAC in TestMain.
var (
	recordedMu sync.Mutex
	recorded   []kubetest.Request
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		recordedMu.Lock()
		for _, r := range recorded {
			if !allowed(r) {
				fmt.Fprintf(os.Stderr, "FAIL: the launcher did %s on %s (group %q) in %s, which RequiredRBAC does not grant\n", r.Verb, resourceName(r), r.Group, r.Namespace)
				code = 1
			}
		}
		recordedMu.Unlock()
	}
	os.Exit(code)
}

func resourceName(r kubetest.Request) string {
	if r.Subresource != "" {
		return r.Resource + "/" + r.Subresource
	}
	return r.Resource
}

func allowed(r kubetest.Request) bool {
	for _, p := range kube.RequiredRBAC {
		if p.Group == r.Group && p.Resource == resourceName(r) && slices.Contains(p.Verbs, r.Verb) {
			return true
		}
	}
	return false
}

func newServer(t *testing.T, opts kubetest.Options) (*kubetest.Server, *kube.Launcher) {
	srv := kubetest.New(t, opts)
	t.Cleanup(func() {
		recordedMu.Lock()
		recorded = append(recorded, srv.Recorded()...)
		recordedMu.Unlock()
	})
	return srv, &kube.Launcher{Client: srv.Client(), Namespace: ns, Image: "ghcr.io/atollhq/atoll:1.2.3"}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return c
}

func job(id int64) kube.Job {
	return kube.Job{
		JobID: id, Attempt: 1, Pool: "gpu", Repo: "github.com/acme/infra-live", Pull: 42, Project: "envs/prod/network",
		ServerURLs: []string{"https://a.example.com", "https://b.example.com"}, Token: "s3cret",
		Template: kube.PodTemplate{
			Requests: map[string]string{"cpu": "500m", "memory": "1Gi"},
			Limits:   map[string]string{"memory": "2Gi"},
			Env:      []kube.EnvVar{{Name: "TF_LOG", Value: "info"}},
			Labels:   map[string]string{"team": "ml"},
		},
	}
}

// never is a Run hook whose pods no node can run.
func never(*corev1.Pod) kubetest.PodOutcome {
	return kubetest.Unschedulable("0/3 nodes are available: 3 Insufficient cpu.")
}

func TestLaunch(t *testing.T) {
	srv, l := newServer(t, kubetest.Options{Run: never})
	if err := l.Launch(ctx(t), job(7)); err != nil {
		t.Fatal(err)
	}
	c := srv.Client()
	j, err := c.BatchV1().Jobs(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{
		"app.kubernetes.io/managed-by": "atoll", "atoll.dev/job-id": "7", "atoll.dev/attempt": "1", "atoll.dev/pool": "gpu",
		"atoll.dev/repo": "github.com_acme_infra-live", "atoll.dev/pull": "42", "atoll.dev/project": "envs_prod_network", "team": "ml",
	}
	for k, v := range wantLabels {
		if j.Labels[k] != v || j.Spec.Template.Labels[k] != v {
			t.Errorf("label %s: job %q, pod %q, want %q", k, j.Labels[k], j.Spec.Template.Labels[k], v)
		}
	}
	if j.Annotations["atoll.dev/repo"] != "github.com/acme/infra-live" || j.Annotations["atoll.dev/project"] != "envs/prod/network" {
		t.Errorf("annotations %v", j.Annotations)
	}
	if *j.Spec.BackoffLimit != 0 || *j.Spec.TTLSecondsAfterFinished != 600 || j.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("backoffLimit %d ttl %d deadline %v", *j.Spec.BackoffLimit, *j.Spec.TTLSecondsAfterFinished, j.Spec.ActiveDeadlineSeconds)
	}
	ps := j.Spec.Template.Spec
	if ps.RestartPolicy != corev1.RestartPolicyNever || *ps.AutomountServiceAccountToken || ps.ServiceAccountName != "" {
		t.Errorf("pod spec: restart %s automount %v sa %q", ps.RestartPolicy, *ps.AutomountServiceAccountToken, ps.ServiceAccountName)
	}
	psc := ps.SecurityContext
	if !*psc.RunAsNonRoot || *psc.RunAsUser != 10001 || *psc.FSGroup != 10001 || psc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Errorf("pod security context %+v", psc)
	}
	ctr := ps.Containers[0]
	wantArgs := []string{"worker", "--once", "--server", "https://a.example.com,https://b.example.com", "--pool", "gpu", "--token-file", "/var/run/atoll/token"}
	if ctr.Name != "worker" || ctr.Image != "ghcr.io/atollhq/atoll:1.2.3" || !slices.Equal(ctr.Args, wantArgs) || ctr.Command != nil {
		t.Errorf("container %s %s %q %q", ctr.Name, ctr.Image, ctr.Command, ctr.Args)
	}
	sc := ctr.SecurityContext
	if *sc.AllowPrivilegeEscalation || *sc.Privileged || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault || !*sc.RunAsNonRoot {
		t.Errorf("container security context %+v", sc)
	}
	if q := ctr.Resources.Limits[corev1.ResourceMemory]; q.Cmp(resource.MustParse("2Gi")) != 0 {
		t.Errorf("memory limit %v", q)
	}
	if q := ctr.Resources.Requests[corev1.ResourceCPU]; q.Cmp(resource.MustParse("500m")) != 0 {
		t.Errorf("cpu request %v", q)
	}
	if !slices.ContainsFunc(ctr.Env, func(e corev1.EnvVar) bool { return e.Name == "TF_LOG" && e.Value == "info" }) {
		t.Errorf("env %v", ctr.Env)
	}
	mount := slices.IndexFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == "/var/run/atoll" })
	if mount < 0 || !ctr.VolumeMounts[mount].ReadOnly {
		t.Fatalf("mounts %+v", ctr.VolumeMounts)
	}
	vol := ps.Volumes[slices.IndexFunc(ps.Volumes, func(v corev1.Volume) bool { return v.Name == ctr.VolumeMounts[mount].Name })]
	if vol.Secret == nil || vol.Secret.SecretName != "atoll-job-7-1" || *vol.Secret.DefaultMode != 0o440 {
		t.Errorf("token volume %+v", vol)
	}
	s, err := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if string(s.Data["token"]) != "s3cret" || s.Labels["atoll.dev/job-id"] != "7" {
		t.Errorf("secret %v %v", s.Data, s.Labels)
	}
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != j.UID || s.OwnerReferences[0].Kind != "Job" || s.OwnerReferences[0].Name != j.Name {
		t.Errorf("secret owner %+v", s.OwnerReferences)
	}
	if u := srv.UnknownFields(); len(u) > 0 {
		t.Errorf("unknown fields sent: %v", u)
	}
}

func TestLaunchWithServiceAccountAndDeadline(t *testing.T) {
	srv, l := newServer(t, kubetest.Options{Run: never})
	jb := job(8)
	jb.Template.ServiceAccountName = "terraform-gpu"
	jb.Template.ActiveDeadlineSeconds = 3600
	jb.Template.TTLSecondsAfterFinished = new(int32)
	jb.Template.Image = "registry.example.com/atoll-worker:9"
	jb.Template.Command = []string{"/usr/local/bin/atoll"}
	jb.Template.ExtraArgs = []string{"--terraform-bin=/opt/tf"}
	jb.Template.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}
	jb.Template.NodeSelector = map[string]string{"pool": "gpu"}
	jb.Template.EnvFromSecrets = []string{"aws-creds"}
	if err := l.Launch(ctx(t), jb); err != nil {
		t.Fatal(err)
	}
	j, err := srv.Client().BatchV1().Jobs(ns).Get(ctx(t), "atoll-job-8-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ps := j.Spec.Template.Spec
	if !*ps.AutomountServiceAccountToken || ps.ServiceAccountName != "terraform-gpu" || *j.Spec.ActiveDeadlineSeconds != 3600 || *j.Spec.TTLSecondsAfterFinished != 0 {
		t.Errorf("sa %q automount %v deadline %v ttl %v", ps.ServiceAccountName, *ps.AutomountServiceAccountToken, j.Spec.ActiveDeadlineSeconds, *j.Spec.TTLSecondsAfterFinished)
	}
	ctr := ps.Containers[0]
	if ctr.Image != jb.Template.Image || !slices.Equal(ctr.Command, jb.Template.Command) || ctr.Args[len(ctr.Args)-1] != "--terraform-bin=/opt/tf" {
		t.Errorf("container %s %q %q", ctr.Image, ctr.Command, ctr.Args)
	}
	if len(ps.Tolerations) != 1 || ps.NodeSelector["pool"] != "gpu" || ctr.EnvFrom[0].SecretRef.Name != "aws-creds" {
		t.Errorf("placement %v %v envFrom %v", ps.Tolerations, ps.NodeSelector, ctr.EnvFrom)
	}
}

func TestTemplateValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*kube.PodTemplate)
		want string
	}{
		{"bad quantity", func(p *kube.PodTemplate) { p.Limits = map[string]string{"memory": "2 gigs"} }, `limits memory: "2 gigs" is not a quantity`},
		{"request over limit", func(p *kube.PodTemplate) { p.Requests = map[string]string{"memory": "4Gi"} }, "requests memory 4Gi is more than its limit 2Gi"},
		{"reserved label", func(p *kube.PodTemplate) { p.Labels = map[string]string{"atoll.dev/pool": "x"} }, "reserved"},
		{"bad label value", func(p *kube.PodTemplate) { p.Labels = map[string]string{"team": "a b"} }, `labels team value "a b"`},
		{"bad env", func(p *kube.PodTemplate) { p.Env = []kube.EnvVar{{Name: "1X"}} }, `env "1X"`},
		{"bad pull policy", func(p *kube.PodTemplate) { p.ImagePullPolicy = "Sometimes" }, "image_pull_policy"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			jb := job(1)
			tc.edit(&jb.Template)
			l := &kube.Launcher{Namespace: ns, Image: "img"}
			err := l.Launch(ctx(t), jb)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	if err := (kube.PodTemplate{}).Validate(""); err == nil || !strings.Contains(err.Error(), "image: empty") {
		t.Errorf("no image: %v", err)
	}
	if err := (kube.PodTemplate{}).Validate("img"); err != nil {
		t.Errorf("an empty template with a default image: %v", err)
	}
}

func TestLaunchIsIdempotent(t *testing.T) {
	srv, l := newServer(t, kubetest.Options{Run: never})
	c := srv.Client()
	if err := l.Launch(ctx(t), job(7)); err != nil {
		t.Fatal(err)
	}
	// Another node launches the same attempt (with its own token).
	again := job(7)
	again.Token = "other"
	if err := l.Launch(ctx(t), again); err != nil {
		t.Fatalf("relaunch: %v", err)
	}
	jobs, _ := c.BatchV1().Jobs(ns).List(ctx(t), metav1.ListOptions{})
	pods, _ := c.CoreV1().Pods(ns).List(ctx(t), metav1.ListOptions{})
	if len(jobs.Items) != 1 || len(pods.Items) != 1 {
		t.Errorf("%d jobs, %d pods after a relaunch, want 1 and 1", len(jobs.Items), len(pods.Items))
	}
	if s, _ := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{}); string(s.Data["token"]) != "s3cret" || len(s.OwnerReferences) != 1 {
		t.Errorf("the running Job's secret changed: %v %v", s.Data, s.OwnerReferences)
	}

	// A launch that stopped after the Secret: the next one finishes it,
	// with its own token.
	half := job(9)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "atoll-job-9-1", Labels: map[string]string{
		"app.kubernetes.io/managed-by": "atoll", "atoll.dev/job-id": "9", "atoll.dev/attempt": "1"}},
		Data: map[string][]byte{"token": []byte("stale")}}
	if _, err := c.CoreV1().Secrets(ns).Create(ctx(t), sec, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Launch(ctx(t), half); err != nil {
		t.Fatal(err)
	}
	s, _ := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-9-1", metav1.GetOptions{})
	if string(s.Data["token"]) != "s3cret" || len(s.OwnerReferences) != 1 {
		t.Errorf("finished launch's secret: %q %v", s.Data["token"], s.OwnerReferences)
	}

	// A Job of that name that is not Atoll's is an error.
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "atoll-job-10-1"}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	if _, err := c.BatchV1().Jobs(ns).Create(ctx(t), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := l.Launch(ctx(t), job(10)); err == nil || !strings.Contains(err.Error(), "did not launch") {
		t.Errorf("launch over a foreign Job: %v", err)
	}
}

// TestLaunchFinishesAHalfLaunch: a launch that stopped after the Job (its
// Secret not yet owned) is finished by the next one.
func TestLaunchFinishesAHalfLaunch(t *testing.T) {
	var once sync.Once
	srv, l := newServer(t, kubetest.Options{Run: never, Intercept: func(r kubetest.Request) error {
		var err error
		if r.Resource == "secrets" && r.Verb == "update" {
			once.Do(func() { err = apierrors.NewServiceUnavailable("etcd is busy") })
		}
		return err
	}})
	if err := l.Launch(ctx(t), job(7)); !apierrors.IsServiceUnavailable(err) {
		t.Fatalf("first launch: %v", err)
	}
	c := srv.Client()
	if s, _ := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{}); len(s.OwnerReferences) != 0 {
		t.Fatalf("owner set despite the error: %v", s.OwnerReferences)
	}
	if err := l.Launch(ctx(t), job(7)); err != nil {
		t.Fatal(err)
	}
	j, _ := c.BatchV1().Jobs(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{})
	s, _ := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{})
	if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != j.UID || string(s.Data["token"]) != "s3cret" {
		t.Errorf("after the second launch: %v %q", s.OwnerReferences, s.Data["token"])
	}
}

func TestLaunchFailureRemovesTheSecret(t *testing.T) {
	srv, l := newServer(t, kubetest.Options{Intercept: func(r kubetest.Request) error {
		if r.Resource == "jobs" && r.Verb == "create" {
			return apierrors.NewForbidden(batchv1.Resource("jobs"), "", errors.New("exceeded quota: jobs"))
		}
		return nil
	}})
	err := l.Launch(ctx(t), job(7))
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "exceeded quota") {
		t.Fatalf("launch: %v, want the Forbidden", err)
	}
	if _, err := srv.Client().CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-7-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the token's secret: %v, want NotFound", err)
	}
}

func TestDeleteAndList(t *testing.T) {
	srv, l := newServer(t, kubetest.Options{Run: never, TerminationDelay: 100 * time.Millisecond})
	c := srv.Client()
	for _, id := range []int64{3, 4} {
		if err := l.Launch(ctx(t), job(id)); err != nil {
			t.Fatal(err)
		}
	}
	// Not Atoll's: not listed.
	foreign := &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: "other", Labels: map[string]string{"atoll.dev/job-id": "1"}}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{
		Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "x", Image: "x"}}}}}}
	c.BatchV1().Jobs(ns).Create(ctx(t), foreign, metav1.CreateOptions{})
	got, err := l.List(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].JobID != 3 || got[1].JobID != 4 || got[0].Attempt != 1 || got[0].Pool != "gpu" ||
		got[0].Repo != "github.com/acme/infra-live" || got[0].Pull != 42 || got[0].Project != "envs/prod/network" || got[0].State != kube.Running || got[0].Name != "atoll-job-3-1" {
		t.Errorf("List: %+v", got)
	}
	if err := l.Delete(ctx(t), 3, 1); err != nil {
		t.Fatal(err)
	}
	got, _ = l.List(ctx(t))
	if len(got) != 2 || !got[0].Deleting {
		t.Errorf("List during a foreground deletion: %+v", got)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.BatchV1().Jobs(ns).Get(ctx(t), "atoll-job-3-1", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the Job stays")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-3-1", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the deleted Job's secret: %v", err)
	}
	if _, err := c.CoreV1().Secrets(ns).Get(ctx(t), "atoll-job-4-1", metav1.GetOptions{}); err != nil {
		t.Errorf("the other Job's secret: %v", err)
	}
	if err := l.Delete(ctx(t), 3, 1); err != nil {
		t.Errorf("deleting again: %v", err)
	}
	// A Job's state in List.
	srv2, l2 := newServer(t, kubetest.Options{Run: func(p *corev1.Pod) kubetest.PodOutcome {
		if strings.HasPrefix(p.Name, "atoll-job-5-") {
			return kubetest.Exit(1)
		}
		return kubetest.Succeed()
	}})
	_ = srv2
	l2.Launch(ctx(t), job(5))
	l2.Launch(ctx(t), job(6))
	for range 500 {
		got, _ = l2.List(ctx(t))
		if len(got) == 2 && got[0].State != kube.Running && got[1].State != kube.Running {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(got) != 2 || got[0].State != kube.Failed || got[1].State != kube.Succeeded {
		t.Errorf("states: %+v", got)
	}
}
