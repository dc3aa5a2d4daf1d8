package kube_test

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/atollhq/atoll/dispatch"
	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/kube/kubetest"
)

// ParsePodTemplate reads a pool's template in Kubernetes' spelling and
// refuses what the API server would refuse, or a key it does not know,
// with the place the caller names.
func TestParsePodTemplate(t *testing.T) {
	tmpl, err := kube.ParsePodTemplate("repos.yaml line 3: execution_pools.a.kubernetes",
		[]byte(`{"imagePullPolicy":"Always","limits":{"memory":"2Gi"},"serviceAccountName":"team-a","envFromSecrets":["team-a-cloud"],
		"tolerations":[{"key":"dedicated","operator":"Equal","value":"tf","effect":"NoSchedule"}],"ttlSecondsAfterFinished":0}`), "img:1")
	if err != nil {
		t.Fatal(err)
	}
	if tmpl.ImagePullPolicy != "Always" || tmpl.Limits["memory"] != "2Gi" || tmpl.ServiceAccountName != "team-a" ||
		len(tmpl.Tolerations) != 1 || tmpl.Tolerations[0].Effect != corev1.TaintEffectNoSchedule || tmpl.TTLSecondsAfterFinished == nil || *tmpl.TTLSecondsAfterFinished != 0 {
		t.Fatalf("template %+v", tmpl)
	}
	for _, tc := range []struct{ name, json, image, want string }{
		{"unknown key", `{"image":"x","node_selector":{}}`, "", `repos.yaml line 3: execution_pools.a.kubernetes: unknown field "node_selector"`},
		{"wrong type", `{"limits":"2Gi"}`, "img", "cannot unmarshal string into Go struct field PodTemplate.limits"},
		{"no image", `{}`, "", "image: empty (and no default image)"},
		{"bad quantity", `{"limits":{"memory":"lots"}}`, "img", `limits memory: "lots" is not a quantity`},
		{"request over limit", `{"requests":{"memory":"4Gi"},"limits":{"memory":"2Gi"}}`, "img", "requests memory 4Gi is more than its limit 2Gi"},
		{"reserved label", `{"labels":{"atoll.dev/job-id":"1"}}`, "img", "reserved for Atoll"},
		{"bad service account", `{"serviceAccountName":"Team A"}`, "img", `service_account_name "Team A"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := kube.ParsePodTemplate("repos.yaml line 3: execution_pools.a.kubernetes", []byte(tc.json), tc.image)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "repos.yaml line 3: execution_pools.a.kubernetes: ") {
				t.Fatalf("err = %v; want %q", err, tc.want)
			}
		})
	}
}

// The Starter is the dispatcher's view of a Job: Start launches it with the
// secret in its Secret, Started finds it, Follow says what happens in the
// job log's words and ends with the pod, Stop deletes it.
func TestStarterFollowsAJob(t *testing.T) {
	release := make(chan struct{})
	var srv *kubetest.Server
	srv, l := newServer(t, kubetest.Options{Run: func(pod *corev1.Pod) kubetest.PodOutcome {
		srv.Running(pod)
		<-release
		return kubetest.OOMKill()
	}})
	st := &kube.Starter{Launcher: l, Pool: "gpu", ServerURLs: []string{"http://atoll.ci.svc:80"},
		Template: kube.PodTemplate{Limits: map[string]string{"memory": "2Gi"}}}
	c := dispatch.Claimant{JobID: 9, Attempt: 2, Pool: "gpu", Repo: "acme/infra", Pull: 3, Project: "staging"}
	if ok, err := st.Started(ctx(t), 9, 2); err != nil || ok {
		t.Fatalf("Started before Start = %v, %v", ok, err)
	}
	if err := st.Start(ctx(t), c, "atp_secret"); err != nil {
		t.Fatal(err)
	}
	if ok, err := st.Started(ctx(t), 9, 2); err != nil || !ok {
		t.Fatalf("Started after Start = %v, %v", ok, err)
	}
	if s, ok := srv.Object("secrets", ns, "atoll-job-9-2").(*corev1.Secret); !ok || string(s.Data[kube.TokenKey]) != "atp_secret" {
		t.Fatalf("the Job's Secret: %v", s)
	}
	if got := st.Describe(9, 2); got != "Kubernetes Job atoll-job-9-2 (namespace atoll-jobs)" {
		t.Fatalf("Describe = %q", got)
	}
	events, err := st.Follow(ctx(t), 9, 2)
	if err != nil {
		t.Fatal(err)
	}
	var got []dispatch.ClaimantEvent
	timeout := time.After(15 * time.Second)
	for done := false; !done; {
		select {
		case ev, ok := <-events:
			if !ok {
				done = true
				break
			}
			got = append(got, ev)
			if strings.Contains(ev.Note, "is running") {
				close(release)
			}
		case <-timeout:
			t.Fatalf("events so far: %+v", got)
		}
	}
	last := got[len(got)-1]
	if !last.Ended || last.Failure != "killed: out of memory, limit 2Gi" {
		t.Fatalf("events %+v", got)
	}
	for _, ev := range got[:len(got)-1] {
		if ev.Ended || !strings.HasPrefix(ev.Note, "Kubernetes: pod atoll-job-9-2-") {
			t.Fatalf("event before the end: %+v", ev)
		}
	}
	if err := st.Stop(ctx(t), 9, 2); err != nil {
		t.Fatal(err)
	}
	if err := st.Stop(ctx(t), 9, 2); err != nil {
		t.Fatalf("a second Stop: %v", err)
	}
}

// Sweep deletes the running Jobs of its pool that keep refuses, and
// leaves the kept ones, the finished ones and other pools' alone.
func TestStarterSweep(t *testing.T) {
	srv, l := newServer(t, kubetest.Options{Run: never})
	gpu := &kube.Starter{Launcher: l, Pool: "gpu", ServerURLs: []string{"http://atoll"}}
	cpu := &kube.Starter{Launcher: l, Pool: "cpu", ServerURLs: []string{"http://atoll"}}
	for id, st := range map[int64]*kube.Starter{1: gpu, 2: gpu, 3: cpu} {
		if err := st.Start(ctx(t), dispatch.Claimant{JobID: id, Attempt: 1, Pool: st.Pool}, "atp_x"); err != nil {
			t.Fatal(err)
		}
	}
	var asked []int64
	err := gpu.Sweep(ctx(t), func(jobID int64, attempt int) bool {
		asked = append(asked, jobID)
		return jobID == 2
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(asked) != 2 {
		t.Fatalf("keep asked about %v: only the gpu pool's Jobs", asked)
	}
	time.Sleep(100 * time.Millisecond)
	left := map[string]bool{}
	list, err := srv.Client().BatchV1().Jobs(ns).List(ctx(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range list.Items {
		if j.DeletionTimestamp == nil {
			left[j.Name] = true
		}
	}
	if left["atoll-job-1-1"] || !left["atoll-job-2-1"] || !left["atoll-job-3-1"] {
		t.Fatalf("Jobs left: %v", left)
	}
}
