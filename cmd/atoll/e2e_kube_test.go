package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/atollhq/atoll"
	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/kube/kubetest"
)

// The Kubernetes executor end to end: the real server (Main, or real
// processes for the restart), the Kubernetes API faked by kubetest (the
// wire format client-go speaks: Jobs, Pods, Secrets, Events, watches), and
// each Job's pod run as a real `atoll worker --once` process of the built
// binary, with the pod's arguments and environment, running real
// Terraform.

const kubeNamespace = "ci"

// kubeCluster is the fake API server and what its pods did.
type kubeCluster struct {
	t          testing.TB
	srv        *kubetest.Server
	kubeconfig string
	bin        string

	mu    sync.Mutex
	logs  map[string]string // pod name → its worker's output
	leaks []string          // secrets found on a pod's data volume
	// decide, if set, gives a pod an outcome instead of running it.
	decide func(pod *corev1.Pod) *kubetest.PodOutcome
}

func newKubeCluster(t testing.TB) *kubeCluster {
	k := &kubeCluster{t: t, bin: atollBinary(t), logs: map[string]string{}}
	k.srv = kubetest.New(t, kubetest.Options{Run: k.run, TerminationDelay: 300 * time.Millisecond})
	k.kubeconfig = filepath.Join(t.TempDir(), "kubeconfig")
	cfg := fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {server: %q}
users:
- name: atoll
  user: {token: kube-test-token}
contexts:
- name: fake
  context: {cluster: fake, user: atoll, namespace: %s}
current-context: fake
`, k.srv.URL, kubeNamespace)
	if err := os.WriteFile(k.kubeconfig, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			k.mu.Lock()
			defer k.mu.Unlock()
			for pod, log := range k.logs {
				t.Logf("pod %s:\n%s", pod, log)
			}
		}
	})
	return k
}

// run is the kubelet: it mounts the pod's volumes (the token Secret's key
// as a file, the data emptyDir as a directory) and runs its container's
// arguments as `atoll` with the container's environment.
func (k *kubeCluster) run(pod *corev1.Pod) kubetest.PodOutcome {
	if k.decide != nil {
		if out := k.decide(pod); out != nil {
			return *out
		}
	}
	dir, err := os.MkdirTemp("", "atoll-pod-")
	if err != nil {
		return kubetest.Exit(1)
	}
	defer os.RemoveAll(dir)
	c := pod.Spec.Containers[0]
	var token []byte
	for _, v := range pod.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		if s, ok := k.srv.Object("secrets", pod.Namespace, v.Secret.SecretName).(*corev1.Secret); ok {
			token = s.Data[kube.TokenKey]
		}
	}
	if token == nil {
		return kubetest.Exit(1) // the kubelet would wait for the Secret
	}
	tokenFile := filepath.Join(dir, kube.TokenKey)
	if err := os.WriteFile(tokenFile, token, 0o440); err != nil {
		return kubetest.Exit(1)
	}
	args := slices.Clone(c.Args)
	for i := range args {
		if i > 0 && args[i-1] == "--token-file" {
			args[i] = tokenFile
		}
	}
	data := filepath.Join(dir, "data")
	args = append(args, "--data-dir", data)
	cmd := exec.Command(k.bin, args...)
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "ATOLL_") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(cmd.Env, kubetest.ContainerEnv(pod)...)
	cmd.Env = append(cmd.Env, "ATOLL_NAME="+pod.Name)
	out := k.srv.Exec(pod, cmd)
	k.mu.Lock()
	defer k.mu.Unlock()
	k.logs[pod.Name] = out.Log
	k.scan(data, "gh-test-token", string(token), "atj_")
	return out
}

// scan records the files under dir that hold one of secrets (k.mu held).
func (k *kubeCluster) scan(dir string, secrets ...string) {
	k.leaks = append(k.leaks, filesHolding(dir, secrets...)...)
}

// podsOf are job id's pods (every attempt).
func (k *kubeCluster) podsOf(jobID int64) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range k.srv.Pods(kubeNamespace) {
		if p.Labels[kube.LabelJobID] == strconv.FormatInt(jobID, 10) {
			out = append(out, p)
		}
	}
	return out
}

// created counts the Jobs the server created.
func (k *kubeCluster) created() int {
	n := 0
	for _, r := range k.srv.Recorded() {
		if r.Resource == "jobs" && r.Verb == "create" {
			n++
		}
	}
	return n
}

var metav1ListAll = metav1.ListOptions{}

// jobs are the names of the Jobs that exist.
func (k *kubeCluster) jobs() []string {
	var names []string
	list, err := k.srv.Client().BatchV1().Jobs(kubeNamespace).List(context.Background(), metav1ListAll)
	if err != nil {
		k.t.Fatal(err)
	}
	for _, j := range list.Items {
		names = append(names, j.Name)
	}
	return names
}

// checkRBAC fails on a request the chart's Role would refuse
// (kube.RequiredRBAC, which the chart's test compares with its Role).
func (k *kubeCluster) checkRBAC(t testing.TB) {
	t.Helper()
	for _, r := range k.srv.Recorded() {
		ok := slices.ContainsFunc(kube.RequiredRBAC, func(p kube.Permission) bool {
			return p.Group == r.Group && p.Resource == r.Resource && slices.Contains(p.Verbs, r.Verb) && r.Subresource == ""
		})
		if !ok || r.Namespace != kubeNamespace {
			t.Errorf("the server did %s on %s/%s (group %q) in namespace %q: not granted", r.Verb, r.Resource, r.Subresource, r.Group, r.Namespace)
		}
	}
}

func (k *kubeCluster) checkNoLeaks(t testing.TB) {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, l := range k.leaks {
		t.Error(l)
	}
}

// kubeRepoConfig has pool k8s (pods with a memory limit, finished Jobs
// removed after a second) and pool tiny (pods asking more memory than any
// node has); projects may pick either and the slow workflow.
func kubeRepoConfig(t testing.TB) string {
	pool := func(extra map[string]any) map[string]any {
		p := map[string]any{"image": "ghcr.io/atollhq/atoll:test", "imagePullPolicy": "IfNotPresent",
			"extraArgs": []string{"--terraform-bin", terraformBin(t)},
			"env":       []map[string]string{{"name": "TF_IN_AUTOMATION", "value": "1"}}}
		for k, v := range extra {
			p[k] = v
		}
		return map[string]any{"kubernetes": p}
	}
	cfg, err := json.Marshal(map[string]any{
		"repos": []any{map[string]any{"id": "github.com/acme/infra", "allowed_overrides": []string{"execution_pool", "workflow"}, "allowed_workflows": []string{"slow"}}},
		"execution_pools": map[string]any{
			"k8s":  pool(map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "128Mi"}, "limits": map[string]string{"memory": "256Mi"}, "ttlSecondsAfterFinished": 1}),
			"tiny": pool(map[string]any{"requests": map[string]string{"memory": "64Gi"}}),
		},
		"workflows": map[string]any{"slow": map[string]any{
			"plan":  map[string]any{"steps": []any{"init", map[string]any{"run": "sleep 4"}, "plan"}},
			"apply": map[string]any{"steps": []any{"apply"}},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(cfg)
}

func newKubeE2E(t *testing.T, k *kubeCluster) *e2e {
	return newE2EWith(t, map[string]string{
		"staging/main.tf":    tfProject("staging", 1),
		"production/main.tf": tfProject("production", 1),
	}, func(c *main.Config) {
		c.RepoConfigJSON = kubeRepoConfig(t)
		c.DefaultExecutionPool = "k8s"
		c.Kubeconfig = k.kubeconfig
		c.KubeScheduleTimeout = 2 * time.Second
		c.WorkerLease = 5 * time.Second
		c.Parallelism = 4
		c.AllowCommands = []string{"plan", "apply", "cancel", "unlock"}
	})
}

// jobLog is job id's stored log.
func jobLog(t *testing.T, e *e2e, jobID int64) string {
	t.Helper()
	lines, err := e.m.DB.Logs(context.Background(), jobID, 0, 5000)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString(l.Text + "\n")
	}
	return b.String()
}

// A plan and its apply each run as a Kubernetes Job of the default pool:
// labelled, holding no secret but in its Secret, removed after its TTL;
// the server makes no call the chart's Role does not grant.
func TestKubernetesJobsPlanAndApply(t *testing.T) {
	k := newKubeCluster(t)
	e := newKubeE2E(t, k)
	e.open(1, "grow-staging", map[string]string{"staging/main.tf": tfProject("staging", 2)}, "staging/main.tf")
	mustContain(t, "plan on #1", e.waitComment(1, 1), "Plan: 2 to add", "atlantis apply -d staging")
	plan := onlyJob(t, e, 1, atoll.JobPlan)
	d := dispatchOf(t, e, plan.ID, "the plan done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone })
	if d.Pool != "k8s" || d.Attempt != 1 || d.TokenID != 0 {
		t.Fatalf("dispatch %+v", d)
	}
	name := kube.Name(plan.ID, 1)
	mustContain(t, "the plan's log", jobLog(t, e, plan.ID), "Started Kubernetes Job "+name+" (namespace ci).",
		"Running on worker "+name, "$ terraform plan", "Plan: 2 to add")

	// The Job as created: labels, the pod's limits, and no secret.
	pods := k.podsOf(plan.ID)
	if len(pods) != 1 {
		t.Fatalf("%d pods for the plan", len(pods))
	}
	pod := pods[0]
	for key, want := range map[string]string{kube.LabelPool: "k8s", kube.LabelRepo: "acme_infra", kube.LabelPull: "1", kube.LabelProject: "staging", kube.LabelAttempt: "1"} {
		if got := pod.Labels[key]; got != want {
			t.Errorf("pod label %s = %q, want %q", key, got, want)
		}
	}
	if lim := pod.Spec.Containers[0].Resources.Limits.Memory().String(); lim != "256Mi" {
		t.Errorf("memory limit %s", lim)
	}
	raw, _ := json.Marshal(pod)
	for _, secret := range []string{"gh-test-token", "atp_", "atj_", "kube-test-token"} {
		if bytes.Contains(raw, []byte(secret)) {
			t.Errorf("the pod's spec holds %q", secret)
		}
	}

	e.comment(1, "atlantis apply -d staging")
	mustContain(t, "apply on #1", e.waitComment(1, 2), "Apply complete! Resources: 2 added")
	apply := onlyJob(t, e, 1, atoll.JobApply)
	if d := dispatchOf(t, e, apply.ID, "the apply done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone }); !d.Applying {
		t.Fatalf("apply dispatch %+v", d)
	}
	if n := k.created(); n != 2 {
		t.Fatalf("%d Jobs created for a plan and an apply", n)
	}
	eventually(t, 30*time.Second, "the finished Jobs removed after their TTL", func() bool { return len(k.jobs()) == 0 })
	for _, id := range []int64{plan.ID, apply.ID} {
		if s := k.srv.Object("secrets", kubeNamespace, kube.Name(id, 1)); s != nil {
			t.Fatalf("the Secret of job %d outlived its Job", id)
		}
	}
	k.checkRBAC(t)
	k.checkNoLeaks(t)
}

// Kubernetes' own failures reach the pull request in words: a pod killed
// for memory mid-plan is planned again in a new Job (once); a pod no node
// can run fails its job after the schedule timeout and is removed; a
// cancel deletes the running Job.
func TestKubernetesOOMUnschedulableAndCancel(t *testing.T) {
	k := newKubeCluster(t)
	k.decide = func(pod *corev1.Pod) *kubetest.PodOutcome {
		if pod.Labels[kube.LabelPool] == "tiny" {
			out := kubetest.Unschedulable("0/3 nodes are available: 3 Insufficient memory.")
			return &out
		}
		return nil
	}
	e := newKubeE2E(t, k)

	// OOM mid-plan: the first attempt's pod is killed while its plan runs.
	e.open(1, "grow", map[string]string{
		"atlantis.yaml":   "version: 3\nprojects:\n- dir: staging\n  workflow: slow\n",
		"staging/main.tf": tfProject("staging", 2),
	}, "staging/main.tf")
	plan := onlyJob(t, e, 1, atoll.JobPlan)
	dispatchOf(t, e, plan.ID, "the plan claimed", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchClaimed })
	eventually(t, 30*time.Second, "the plan's sleep step", func() bool { return strings.Contains(jobLog(t, e, plan.ID), "sleep 4") })
	first := k.podsOf(plan.ID)
	if len(first) != 1 {
		t.Fatalf("%d pods", len(first))
	}
	if err := k.srv.OOMKill(kubeNamespace, first[0].Name); err != nil {
		t.Fatal(err)
	}
	mustContain(t, "plan after the OOM kill", e.waitComment(1, 1), "Plan: 2 to add")
	d := dispatchOf(t, e, plan.ID, "the second attempt done", func(d *atoll.Dispatch) bool { return d.State == atoll.DispatchDone })
	if d.Attempt != 2 {
		t.Fatalf("dispatch after the OOM kill: %+v", d)
	}
	mustContain(t, "the plan's log", jobLog(t, e, plan.ID),
		"Kubernetes Job "+kube.Name(plan.ID, 1)+" (namespace ci) ended before its worker reported: killed: out of memory, limit 256Mi: planning again.",
		"Started Kubernetes Job "+kube.Name(plan.ID, 2))
	if n := len(pullJobs(t, e, 1, atoll.JobPlan)); n != 1 {
		t.Fatalf("%d plan jobs", n)
	}

	// Unschedulable: the project's pool asks for more memory than any node.
	e.open(2, "tiny", map[string]string{
		"atlantis.yaml":      "version: 3\nprojects:\n- dir: production\n  execution_pool: tiny\n",
		"production/main.tf": tfProject("production", 3),
	}, "production/main.tf")
	mustContain(t, "the unschedulable plan", e.waitComment(2, 1),
		"Kubernetes could not run this plan: no node can run it: 0/3 nodes are available: 3 Insufficient memory.")
	tiny := onlyJob(t, e, 2, atoll.JobPlan)
	if tiny.State != atoll.JobFailed {
		t.Fatalf("unschedulable plan: %+v", tiny)
	}
	eventually(t, 30*time.Second, "the unschedulable Job deleted", func() bool {
		return !slices.Contains(k.jobs(), kube.Name(tiny.ID, 1))
	})
	mustContain(t, "the unschedulable plan's log", jobLog(t, e, tiny.ID), "is pending: 0/3 nodes are available: 3 Insufficient memory.")

	// Cancel: the running Job is deleted, its worker killed.
	e.comment(1, "atlantis plan -- -refresh=false")
	var again atoll.Job
	eventually(t, 30*time.Second, "the second plan", func() bool {
		jobs := pullJobs(t, e, 1, atoll.JobPlan)
		if len(jobs) == 2 {
			again = jobs[1]
			if again.ID == plan.ID {
				again = jobs[0]
			}
		}
		return len(jobs) == 2 && strings.Contains(jobLog(t, e, again.ID), "sleep 4")
	})
	e.comment(1, "atlantis cancel")
	eventually(t, 30*time.Second, "the canceled plan's Job deleted", func() bool {
		return !slices.Contains(k.jobs(), kube.Name(again.ID, 1))
	})
	eventually(t, 30*time.Second, "the plan canceled", func() bool {
		for _, j := range pullJobs(t, e, 1, atoll.JobPlan) {
			if j.ID == again.ID {
				return j.State == atoll.JobCanceled
			}
		}
		return false
	})
	if d, err := e.m.DB.Dispatch(context.Background(), again.ID); err != nil || d.State != atoll.DispatchCanceled {
		t.Fatalf("canceled dispatch: %+v %v", d, err)
	}
	k.checkRBAC(t)
	k.checkNoLeaks(t)
}

// The active node killed (SIGKILL) while a Job runs its plan, and started
// again: it adopts the running Job, found by its labels, instead of
// starting another, and the plan's one outcome is told once.
func TestKubernetesActiveRestartAdoptsJobs(t *testing.T) {
	k := newKubeCluster(t)
	c := newHACluster(t, "s3", map[string]string{"staging/main.tf": tfProject("staging", 1)})
	c.ExtraArgs = []string{"--repo-config-json", kubeRepoConfig(t), "--default-execution-pool", "k8s",
		"--kubeconfig", k.kubeconfig, "--worker-lease", "20s"}
	a := startNode(t, c, "a")
	active := waitActive(t, 30*time.Second, a)
	opened, _ := c.openPull(t, 1, "grow", map[string]string{
		"atlantis.yaml":   "version: 3\nprojects:\n- dir: staging\n  workflow: slow\n",
		"staging/main.tf": tfProject("staging", 2),
	}, "staging/main.tf")
	mustSend(t, active.URL, opened)
	eventually(t, 60*time.Second, "the plan's pod running", func() bool {
		pods := k.srv.Pods(kubeNamespace)
		return len(pods) == 1 && pods[0].Status.Phase == corev1.PodRunning
	})
	time.Sleep(1500 * time.Millisecond) // its worker is in the plan's 4 s sleep step
	killedAt := time.Now()
	active.kill9(t)
	a = startNode(t, c, "a")
	waitActive(t, 60*time.Second, a)
	t.Logf("active again %v after the kill", time.Since(killedAt).Round(time.Millisecond))

	eventually(t, 90*time.Second, "the plan's comment", func() bool { return len(c.GH.pullComments(1)) >= 1 })
	time.Sleep(2 * time.Second) // a second outcome would land now
	comments := c.GH.pullComments(1)
	if len(comments) != 1 {
		t.Fatalf("%d comments after the restart:\n%s", len(comments), strings.Join(comments, "\n---\n"))
	}
	mustContain(t, "the plan", comments[0], "Plan: 2 to add")
	if n := k.created(); n != 1 {
		t.Fatalf("%d Jobs created: the restarted node started the plan again", n)
	}
	var jobs []atoll.Job
	if _, err := getJSONFrom(a.URL+"/api/v1/jobs?repo=acme/infra&pull=1&kind=plan", &jobs); err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].State != atoll.JobSucceeded {
		t.Fatalf("plan jobs after the restart: %+v", jobs)
	}
	resp, err := haClient.Get(fmt.Sprintf("%s/jobs/%d/log.txt", a.URL, jobs[0].ID))
	if err != nil {
		t.Fatal(err)
	}
	log, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	mustContain(t, "the plan's log", string(log), "Started Kubernetes Job "+kube.Name(jobs[0].ID, 1),
		"Following Kubernetes Job "+kube.Name(jobs[0].ID, 1)+" (namespace ci), which runs the job.", "Plan: 2 to add")
	k.checkRBAC(t)
	k.checkNoLeaks(t)
}
