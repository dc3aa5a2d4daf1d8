package main_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	sigsyaml "sigs.k8s.io/yaml"

	main "github.com/atollhq/atoll/cmd/atoll"
	"github.com/atollhq/atoll/kube"
	"github.com/atollhq/atoll/repocfg"
)

// The Helm chart (deploy/helm/atoll) is not installed by CI: there is no
// cluster here. These tests render it with the real helm, at the version
// the Makefile pins (ATOLL_TEST_HELM), and hold the manifests to the code as
// deploy_test.go does the other deployment files: the flags and ATOLL_
// variables exist in `atoll server -h` / `atoll worker -h`, the probes are
// the routes the server answers, the stop timeouts fit, and no secret value
// is ever rendered.

// helmKubeVersion is the Kubernetes version the chart is rendered for: the
// chart's minimum (kubeVersion in Chart.yaml), so that a field newer than
// that shows up as a rendering difference here.
const helmKubeVersion = "1.27.0"

// helmNamespace and the values file's clusterDomain make the DNS names the
// tests expect.
const helmNamespace = "atoll"

// helmAllValues sets every value of the chart (TestDeployHelmValuesDocumented
// checks that it does). Its Secret names end in helmFakeSecret.
const helmAllValues = "testdata/helm/all-values.yaml"

const helmFakeSecret = "-fakesecret"

// helmReplicaURL is the one value the chart requires.
const helmReplicaURL = "s3://atoll-replica/atoll?region=eu-west-1"

func helmBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("ATOLL_TEST_HELM")
	if bin == "" {
		bin, _ = filepath.Abs("../../bin/helm-v3.22.0/helm")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("helm not installed (make test installs it in bin/): %v", err)
	}
	return bin
}

func helmChart(t *testing.T) string {
	return filepath.Join(repoRoot(t), "deploy", "helm", "atoll")
}

// helmRender runs helm template with args (values) and parses the
// manifests, or returns helm's error output.
func helmRender(t *testing.T, args ...string) (*helmManifests, error) {
	t.Helper()
	argv := append([]string{"template", "rel", helmChart(t), "--namespace", helmNamespace, "--kube-version", helmKubeVersion}, args...)
	cmd := exec.Command(helmBin(t), argv...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("helm template: %v: %s", err, stderr.String())
	}
	m := &helmManifests{text: stdout.String()}
	dec := yaml.NewDecoder(&stdout)
	for {
		var node yaml.Node
		err := dec.Decode(&node)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("helm template output: %v", err)
		}
		var head struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := node.Decode(&head); err != nil {
			t.Fatal(err)
		}
		if head.Kind == "" {
			continue // an empty document
		}
		var raw any
		node.Decode(&raw)
		checkK8sType(t, head.Kind, head.Metadata.Name, &node)
		m.docs = append(m.docs, helmDoc{Kind: head.Kind, Name: head.Metadata.Name, node: &node, raw: raw})
	}
	return m, nil
}

// helmKinds are the objects the chart renders, each with its apiVersion
// and its type in k8s.io/api.
var helmKinds = map[string]struct {
	apiVersion string
	new        func() any
}{
	"StatefulSet":         {"apps/v1", func() any { return &appsv1.StatefulSet{} }},
	"Deployment":          {"apps/v1", func() any { return &appsv1.Deployment{} }},
	"Service":             {"v1", func() any { return &corev1.Service{} }},
	"ServiceAccount":      {"v1", func() any { return &corev1.ServiceAccount{} }},
	"ConfigMap":           {"v1", func() any { return &corev1.ConfigMap{} }},
	"PodDisruptionBudget": {"policy/v1", func() any { return &policyv1.PodDisruptionBudget{} }},
	"Ingress":             {"networking.k8s.io/v1", func() any { return &networkingv1.Ingress{} }},
	"Role":                {"rbac.authorization.k8s.io/v1", func() any { return &rbacv1.Role{} }},
	"RoleBinding":         {"rbac.authorization.k8s.io/v1", func() any { return &rbacv1.RoleBinding{} }},
}

// checkK8sType decodes a rendered object strictly into its k8s.io/api
// type, as the API server would read it (YAML 1.1 through sigs.k8s.io/yaml,
// then JSON): a misspelt or misplaced field, or a value of the wrong type,
// fails here rather than at kubectl apply.
func checkK8sType(t *testing.T, kind, name string, node *yaml.Node) {
	t.Helper()
	k, ok := helmKinds[kind]
	if !ok {
		t.Errorf("%s %s: a kind the tests do not know: add it to helmKinds", kind, name)
		return
	}
	text, err := yaml.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	js, err := sigsyaml.YAMLToJSONStrict(text)
	if err != nil {
		t.Errorf("%s %s: %v", kind, name, err)
		return
	}
	obj := k.new()
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	if err := dec.Decode(obj); err != nil {
		t.Errorf("%s %s does not decode into its k8s.io/api type: %v", kind, name, err)
		return
	}
	if got := reflect.ValueOf(obj).Elem().FieldByName("APIVersion").String(); got != k.apiVersion {
		t.Errorf("%s %s: apiVersion %q, want %s", kind, name, got, k.apiVersion)
	}
}

func mustRender(t *testing.T, args ...string) *helmManifests {
	t.Helper()
	m, err := helmRender(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

type helmManifests struct {
	text string
	docs []helmDoc
}

type helmDoc struct {
	Kind, Name string
	node       *yaml.Node
	raw        any
}

// of returns every object of a kind, decoded into T.
func helmObjects[T any](t *testing.T, m *helmManifests, kind string) []T {
	t.Helper()
	var out []T
	for _, d := range m.docs {
		if d.Kind == kind {
			var v T
			if err := d.node.Decode(&v); err != nil {
				t.Fatalf("%s %s: %v", kind, d.Name, err)
			}
			out = append(out, v)
		}
	}
	return out
}

// helmK8s returns every object of a kind decoded into its k8s.io/api type
// T (through JSON, as checkK8sType does).
func helmK8s[T any](t *testing.T, m *helmManifests, kind string) []T {
	t.Helper()
	var out []T
	for _, d := range m.docs {
		if d.Kind != kind {
			continue
		}
		text, err := yaml.Marshal(d.node)
		if err != nil {
			t.Fatal(err)
		}
		var v T
		if err := sigsyaml.UnmarshalStrict(text, &v); err != nil {
			t.Fatalf("%s %s: %v", kind, d.Name, err)
		}
		out = append(out, v)
	}
	return out
}

// helmOne returns the one object of a kind.
func helmOne[T any](t *testing.T, m *helmManifests, kind string) T {
	t.Helper()
	all := helmObjects[T](t, m, kind)
	if len(all) != 1 {
		t.Fatalf("%d objects of kind %s, want 1", len(all), kind)
	}
	return all[0]
}

// The parts of the manifests the tests look at.

type k8sMeta struct {
	Name        string
	Labels      map[string]string
	Annotations map[string]string
}

type k8sWorkload struct {
	Kind     string
	Metadata k8sMeta
	Spec     struct {
		Replicas            *int                  // Kubernetes reads none as 1
		PodManagementPolicy string                `yaml:"podManagementPolicy"`
		ServiceName         string                `yaml:"serviceName"`
		UpdateStrategy      struct{ Type string } `yaml:"updateStrategy"`
		Selector            struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		}
		Template struct {
			Metadata k8sMeta
			Spec     k8sPodSpec
		}
		VolumeClaimTemplates []k8sClaim `yaml:"volumeClaimTemplates"`
	}
}

type k8sClaim struct {
	Metadata k8sMeta
	Spec     struct {
		StorageClassName string `yaml:"storageClassName"`
		Resources        struct{ Requests map[string]string }
	}
}

type k8sPodSpec struct {
	ServiceAccountName            string            `yaml:"serviceAccountName"`
	AutomountServiceAccountToken  *bool             `yaml:"automountServiceAccountToken"`
	TerminationGracePeriodSeconds *int64            `yaml:"terminationGracePeriodSeconds"`
	SecurityContext               k8sSecurity       `yaml:"securityContext"`
	NodeSelector                  map[string]string `yaml:"nodeSelector"`
	Tolerations                   []map[string]any
	Affinity                      map[string]any
	ImagePullSecrets              []struct{ Name string } `yaml:"imagePullSecrets"`
	Containers                    []k8sContainer
	Volumes                       []k8sVolume
}

type k8sSecurity struct {
	RunAsNonRoot             *bool  `yaml:"runAsNonRoot"`
	RunAsUser                *int64 `yaml:"runAsUser"`
	RunAsGroup               *int64 `yaml:"runAsGroup"`
	FSGroup                  *int64 `yaml:"fsGroup"`
	AllowPrivilegeEscalation *bool  `yaml:"allowPrivilegeEscalation"`
	ReadOnlyRootFilesystem   *bool  `yaml:"readOnlyRootFilesystem"`
	Capabilities             struct{ Drop []string }
	SeccompProfile           struct{ Type string } `yaml:"seccompProfile"`
}

type k8sContainer struct {
	Name, Image string
	Command     []string
	Args        []string
	Ports       []struct {
		Name          string
		ContainerPort int `yaml:"containerPort"`
	}
	Env             []k8sEnv
	EnvFrom         []map[string]any `yaml:"envFrom"`
	ReadinessProbe  *k8sProbe        `yaml:"readinessProbe"`
	LivenessProbe   *k8sProbe        `yaml:"livenessProbe"`
	StartupProbe    *k8sProbe        `yaml:"startupProbe"`
	Resources       map[string]any
	SecurityContext k8sSecurity `yaml:"securityContext"`
	VolumeMounts    []struct {
		Name      string
		MountPath string `yaml:"mountPath"`
		ReadOnly  bool   `yaml:"readOnly"`
	} `yaml:"volumeMounts"`
}

type k8sEnv struct {
	Name      string
	Value     *string
	ValueFrom *struct {
		FieldRef *struct {
			FieldPath string `yaml:"fieldPath"`
		} `yaml:"fieldRef"`
		SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
	} `yaml:"valueFrom"`
}

type k8sProbe struct {
	HTTPGet *struct {
		Path string
		Port string
	} `yaml:"httpGet"`
}

type k8sVolume struct {
	Name     string
	EmptyDir map[string]any `yaml:"emptyDir"`
	Secret   *struct {
		SecretName string `yaml:"secretName"`
		Items      []struct{ Key, Path string }
	}
	Projected *struct {
		Sources []struct {
			Secret *struct {
				Name  string
				Items []struct{ Key, Path string }
			}
		}
	}
	ConfigMap *struct {
		Name  string
		Items []struct{ Key, Path string }
	} `yaml:"configMap"`
}

type k8sService struct {
	Metadata k8sMeta
	Spec     struct {
		Type                     string
		ClusterIP                string            `yaml:"clusterIP"`
		PublishNotReadyAddresses bool              `yaml:"publishNotReadyAddresses"`
		Selector                 map[string]string `yaml:"selector"`
		Ports                    []struct {
			Name       string
			Port       int
			TargetPort string `yaml:"targetPort"`
		}
	}
}

type k8sPDB struct {
	Metadata k8sMeta
	Spec     struct {
		MaxUnavailable             any    `yaml:"maxUnavailable"`
		MinAvailable               any    `yaml:"minAvailable"`
		UnhealthyPodEvictionPolicy string `yaml:"unhealthyPodEvictionPolicy"`
		Selector                   struct {
			MatchLabels map[string]string `yaml:"matchLabels"`
		}
	}
}

type k8sServiceAccount struct {
	Metadata                     k8sMeta
	AutomountServiceAccountToken *bool `yaml:"automountServiceAccountToken"`
}

type k8sConfigMap struct {
	Metadata k8sMeta
	Data     map[string]string
}

type k8sIngress struct {
	Spec struct {
		Rules []struct {
			Host string
			HTTP struct {
				Paths []struct {
					Backend struct {
						Service struct {
							Name string
							Port struct{ Name string }
						}
					}
				}
			}
		}
	}
}

func (c k8sContainer) env(name string) (k8sEnv, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e, true
		}
	}
	return k8sEnv{}, false
}

func (c k8sContainer) envValue(name string) string {
	if e, ok := c.env(name); ok && e.Value != nil {
		return *e.Value
	}
	return ""
}

// mountOf returns the volume mounted at dir (exactly), and whether the
// mount is writable.
func mountOf(pod k8sPodSpec, c k8sContainer, dir string) (k8sVolume, bool, bool) {
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) == path.Clean(dir) {
			for _, v := range pod.Volumes {
				if v.Name == m.Name {
					return v, !m.ReadOnly, true
				}
			}
			return k8sVolume{Name: m.Name}, !m.ReadOnly, true
		}
	}
	return k8sVolume{}, false, false
}

// selects reports whether a selector picks pods with these labels.
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// dockerfileUser is the uid and gid the image's user is made with.
func dockerfileUser(t *testing.T) (uid, gid int64) {
	t.Helper()
	stages := parseDockerfile(t, filepath.Join(repoRoot(t), "Dockerfile"))
	runs := strings.Join(stages[len(stages)-1].all("RUN"), "\n")
	u := regexp.MustCompile(`useradd .*--uid (\d+)`).FindStringSubmatch(runs)
	g := regexp.MustCompile(`groupadd .*--gid (\d+)`).FindStringSubmatch(runs)
	if u == nil || g == nil {
		t.Fatalf("Dockerfile: no useradd --uid / groupadd --gid in the runtime stage")
	}
	uid, _ = strconv.ParseInt(u[1], 10, 64)
	gid, _ = strconv.ParseInt(g[1], 10, 64)
	return uid, gid
}

// workerFlags is every flag `atoll worker` accepts, from its usage text.
func workerFlags(t *testing.T, bin string) map[string]bool {
	t.Helper()
	out, _ := exec.Command(bin, "worker", "-h").CombinedOutput()
	flags := map[string]bool{}
	for _, line := range strings.Split(string(out), "\n") {
		if m := usageFlag.FindStringSubmatch(line); m != nil {
			flags[m[1]] = true
		}
	}
	if !flags["server"] || !flags["token-file"] || !flags["pool"] {
		t.Fatalf("no flags found in the output of `atoll worker -h`:\n%s", out)
	}
	return flags
}

// checkPodSecurity holds a pod and its containers to the hardening the
// chart promises, with the image's own user.
// wantToken: the pod calls the Kubernetes API (the server, with
// kubernetes.enabled) and mounts its ServiceAccount's token.
func checkPodSecurity(t *testing.T, where string, pod k8sPodSpec, wantToken bool) {
	t.Helper()
	uid, gid := dockerfileUser(t)
	ps := pod.SecurityContext
	if ps.RunAsNonRoot == nil || !*ps.RunAsNonRoot {
		t.Errorf("%s: pod securityContext.runAsNonRoot is not true", where)
	}
	if ps.RunAsUser == nil || *ps.RunAsUser != uid || ps.RunAsGroup == nil || *ps.RunAsGroup != gid || ps.FSGroup == nil || *ps.FSGroup != gid {
		t.Errorf("%s: pod runs as %v:%v (fsGroup %v), the image's user is %d:%d", where, deref(ps.RunAsUser), deref(ps.RunAsGroup), deref(ps.FSGroup), uid, gid)
	}
	if ps.SeccompProfile.Type != "RuntimeDefault" {
		t.Errorf("%s: pod seccompProfile %q, want RuntimeDefault", where, ps.SeccompProfile.Type)
	}
	if got := pod.AutomountServiceAccountToken; got == nil || *got != wantToken {
		if wantToken {
			t.Errorf("%s: automountServiceAccountToken is %v, want true: the server starts Kubernetes Jobs", where, deref(got))
		} else {
			t.Errorf("%s: automountServiceAccountToken is %v, want false: nothing in the pod calls the Kubernetes API", where, deref(got))
		}
	}
	if len(pod.Containers) == 0 {
		t.Fatalf("%s: no containers", where)
	}
	for _, c := range pod.Containers {
		sc := c.SecurityContext
		if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != uid {
			t.Errorf("%s: container %s: runAsNonRoot %v, runAsUser %v; want true, %d", where, c.Name, deref(sc.RunAsNonRoot), deref(sc.RunAsUser), uid)
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			t.Errorf("%s: container %s: allowPrivilegeEscalation is not false", where, c.Name)
		}
		if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
			t.Errorf("%s: container %s: readOnlyRootFilesystem is not true", where, c.Name)
		}
		if !slices.Equal(sc.Capabilities.Drop, []string{"ALL"}) {
			t.Errorf("%s: container %s: capabilities.drop %v, want [ALL]", where, c.Name, sc.Capabilities.Drop)
		}
		if sc.SeccompProfile.Type != "RuntimeDefault" {
			t.Errorf("%s: container %s: seccompProfile %q, want RuntimeDefault", where, c.Name, sc.SeccompProfile.Type)
		}
		// The root filesystem is read-only: where the process, git and
		// Terraform write must be a writable volume.
		for _, name := range []string{"HOME", "TMPDIR"} {
			dir := c.envValue(name)
			if dir == "" {
				t.Errorf("%s: container %s: %s is not set (the image's HOME is read-only here)", where, c.Name, name)
				continue
			}
			if v, writable, ok := mountOf(pod, c, dir); !ok || !writable || v.EmptyDir == nil {
				t.Errorf("%s: container %s: %s=%s is not a writable emptyDir mount", where, c.Name, name, dir)
			}
		}
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// helmServer checks the server's StatefulSet and Services and returns the
// StatefulSet, its container and its flags as ATOLL_ variables.
func helmServer(t *testing.T, m *helmManifests, flags map[string]bool) (k8sWorkload, k8sContainer) {
	t.Helper()
	defaults := main.NewMain().Config
	sts := helmOne[k8sWorkload](t, m, "StatefulSet")
	where := "StatefulSet " + sts.Metadata.Name
	pod := sts.Spec.Template.Spec
	if r := sts.Spec.Replicas; r == nil || *r != 2 {
		t.Errorf("%s: replicas %v, want 2 (an active and a standby)", where, deref(r))
	}
	if sts.Spec.PodManagementPolicy != "Parallel" {
		t.Errorf("%s: podManagementPolicy %q, want Parallel: with OrderedReady pod 1 waits for pod 0 to be ready", where, sts.Spec.PodManagementPolicy)
	}
	// A RollingUpdate waits for each updated pod to be ready; the standby
	// never is.
	if sts.Spec.UpdateStrategy.Type != "OnDelete" {
		t.Errorf("%s: updateStrategy %q, want OnDelete: a rolling update would stop at the standby", where, sts.Spec.UpdateStrategy.Type)
	}
	if !selects(sts.Spec.Selector.MatchLabels, sts.Spec.Template.Metadata.Labels) {
		t.Fatalf("%s: selector %v does not select its pods %v", where, sts.Spec.Selector.MatchLabels, sts.Spec.Template.Metadata.Labels)
	}
	if len(pod.Containers) != 1 {
		t.Fatalf("%s: %d containers, want 1", where, len(pod.Containers))
	}
	c := pod.Containers[0]
	roles := helmK8s[rbacv1.Role](t, m, "Role")
	checkPodSecurity(t, where, pod, len(roles) > 0)

	// The command: the image's ENTRYPOINT (tini -- atoll) and `server`.
	image := parseDockerfile(t, filepath.Join(repoRoot(t), "Dockerfile"))
	argv := execForm(t, "ENTRYPOINT", image[len(image)-1].last("ENTRYPOINT"))
	if len(c.Command) > 0 {
		argv = c.Command
	}
	argv = append(argv, c.Args...)
	checkServerCommand(t, where, argv, flags)

	env := map[string]string{}
	for _, e := range c.Env {
		v := ""
		if e.Value != nil {
			v = *e.Value
		}
		env[e.Name] = v
	}
	checkEnvNames(t, where, env, flags)

	// The port, and the probes on the routes the server answers.
	port := 0
	for _, p := range c.Ports {
		if p.Name == "http" {
			port = p.ContainerPort
		}
	}
	if port != defaults.Port {
		t.Errorf("%s: containerPort http %d, atoll listens on %d", where, port, defaults.Port)
	}
	for _, p := range []struct {
		name  string
		probe *k8sProbe
		path  string
	}{{"readinessProbe", c.ReadinessProbe, "/readyz"}, {"livenessProbe", c.LivenessProbe, "/healthz"}, {"startupProbe", c.StartupProbe, "/healthz"}} {
		if p.probe == nil || p.probe.HTTPGet == nil {
			t.Errorf("%s: no %s httpGet", where, p.name)
			continue
		}
		// /readyz: 200 on the active only, so the Service sends traffic
		// there. /healthz: 200 on both; a liveness probe on /readyz would
		// restart the standby forever.
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != "http" {
			t.Errorf("%s: %s GET %s on port %s, want %s on http", where, p.name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port, p.path)
		}
	}

	// The pair: each pod's node id and advertise URL come from its name,
	// through the headless Service.
	podName, ok := c.env("POD_NAME")
	if !ok || podName.ValueFrom == nil || podName.ValueFrom.FieldRef == nil || podName.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("%s: POD_NAME is not the pod's metadata.name", where)
	}
	if got := c.envValue("ATOLL_NODE_ID"); got != "$(POD_NAME)" {
		t.Errorf("%s: ATOLL_NODE_ID=%q, want $(POD_NAME)", where, got)
	}
	headless := helmService(t, m, sts.Spec.ServiceName)
	if headless.Spec.ClusterIP != "None" || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s (the StatefulSet's serviceName): clusterIP %q, publishNotReadyAddresses %v; want None, true (the standby is never ready, and must be reachable)",
			sts.Spec.ServiceName, headless.Spec.ClusterIP, headless.Spec.PublishNotReadyAddresses)
	}
	if !selects(headless.Spec.Selector, sts.Spec.Template.Metadata.Labels) {
		t.Errorf("Service %s does not select the server pods", sts.Spec.ServiceName)
	}
	advertise := c.envValue("ATOLL_ADVERTISE_URL")
	wantPrefix := fmt.Sprintf("http://$(POD_NAME).%s.$(POD_NAMESPACE).svc.", sts.Spec.ServiceName)
	if !strings.HasPrefix(advertise, wantPrefix) || !strings.HasSuffix(advertise, fmt.Sprintf(":%d", port)) {
		t.Errorf("%s: ATOLL_ADVERTISE_URL=%q, want %s<cluster domain>:%d", where, advertise, wantPrefix, port)
	}
	if i, j := slices.IndexFunc(c.Env, func(e k8sEnv) bool { return e.Name == "POD_NAME" }), slices.IndexFunc(c.Env, func(e k8sEnv) bool { return e.Name == "ATOLL_ADVERTISE_URL" }); i > j {
		t.Errorf("%s: POD_NAME comes after ATOLL_ADVERTISE_URL: Kubernetes would not expand $(POD_NAME)", where)
	}
	if c.envValue("ATOLL_REPLICA_URL") == "" {
		t.Errorf("%s: no ATOLL_REPLICA_URL", where)
	}

	// The Service of the webhooks and the UI: the server pods, by
	// readiness (no publishNotReadyAddresses).
	svc := helmService(t, m, sts.Metadata.Name)
	if svc.Spec.ClusterIP == "None" || svc.Spec.PublishNotReadyAddresses {
		t.Errorf("Service %s: clusterIP %q, publishNotReadyAddresses %v: it must route by readiness, to the active only", svc.Metadata.Name, svc.Spec.ClusterIP, svc.Spec.PublishNotReadyAddresses)
	}
	if !selects(svc.Spec.Selector, sts.Spec.Template.Metadata.Labels) {
		t.Errorf("Service %s: selector %v does not select the server pods", svc.Metadata.Name, svc.Spec.Selector)
	}
	if len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort != "http" {
		t.Errorf("Service %s: ports %+v, want one to targetPort http", svc.Metadata.Name, svc.Spec.Ports)
	}

	// The PDB: one server pod at a time.
	pdb := helmOne[k8sPDB](t, m, "PodDisruptionBudget")
	if fmt.Sprint(pdb.Spec.MaxUnavailable) != "1" || pdb.Spec.MinAvailable != nil {
		t.Errorf("PodDisruptionBudget: maxUnavailable %v, minAvailable %v; want 1 and none", pdb.Spec.MaxUnavailable, pdb.Spec.MinAvailable)
	}
	if pdb.Spec.UnhealthyPodEvictionPolicy != "AlwaysAllow" {
		t.Errorf("PodDisruptionBudget: unhealthyPodEvictionPolicy %q, want AlwaysAllow: the standby is never ready", pdb.Spec.UnhealthyPodEvictionPolicy)
	}
	if !selects(pdb.Spec.Selector.MatchLabels, sts.Spec.Template.Metadata.Labels) {
		t.Errorf("PodDisruptionBudget: selector %v does not select the server pods", pdb.Spec.Selector.MatchLabels)
	}
	for _, d := range helmObjects[k8sWorkload](t, m, "Deployment") {
		if selects(svc.Spec.Selector, d.Spec.Template.Metadata.Labels) || selects(headless.Spec.Selector, d.Spec.Template.Metadata.Labels) || selects(pdb.Spec.Selector.MatchLabels, d.Spec.Template.Metadata.Labels) {
			t.Errorf("Deployment %s: its pods are selected by the server's Services or PDB", d.Metadata.Name)
		}
	}

	// Stopping: SIGTERM, --stop-timeout for running jobs, then closeBudget.
	stop := stopTimeout(t, where, c.envValue("ATOLL_STOP_TIMEOUT"), defaults.StopTimeout)
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < stop+closeBudget {
		t.Errorf("%s: terminationGracePeriodSeconds %v < stop timeout %v + %v: running jobs would be killed", where, deref(g), stop, closeBudget)
	}

	// The data dir is the pod's own volume (a claim, or an emptyDir);
	// the work dir a writable emptyDir.
	dataDir := c.envValue("ATOLL_DATA_DIR")
	found := false
	for _, mnt := range c.VolumeMounts {
		if path.Clean(mnt.MountPath) == path.Clean(dataDir) && !mnt.ReadOnly {
			found = true
			claim := slices.ContainsFunc(sts.Spec.VolumeClaimTemplates, func(v k8sClaim) bool { return v.Metadata.Name == mnt.Name })
			v, _, _ := mountOf(pod, c, dataDir)
			if !claim && v.EmptyDir == nil {
				t.Errorf("%s: the data dir %s is neither a volumeClaimTemplate nor an emptyDir", where, dataDir)
			}
		}
	}
	if !found {
		t.Errorf("%s: ATOLL_DATA_DIR=%q is not a writable mount", where, dataDir)
	}
	if v, writable, ok := mountOf(pod, c, c.envValue("ATOLL_WORK_DIR")); !ok || !writable || v.EmptyDir == nil {
		t.Errorf("%s: ATOLL_WORK_DIR=%q is not a writable emptyDir", where, c.envValue("ATOLL_WORK_DIR"))
	}

	// The ServiceAccounts mount no token unless a pod asks (the server's
	// pods do with kubernetes.enabled).
	for _, sa := range helmObjects[k8sServiceAccount](t, m, "ServiceAccount") {
		if sa.AutomountServiceAccountToken == nil || *sa.AutomountServiceAccountToken {
			t.Errorf("ServiceAccount %s: automountServiceAccountToken is not false", sa.Metadata.Name)
		}
	}
	// RBAC: kube.RequiredRBAC in the release's namespace, bound to the
	// server's ServiceAccount, or nothing.
	if len(roles) > 0 {
		checkRequiredRBAC(t, m, pod.ServiceAccountName)
		checkKubeEnv(t, c, svc)
	} else {
		if n := len(helmObjects[map[string]any](t, m, "RoleBinding")); n > 0 {
			t.Errorf("%d RoleBinding(s) without a Role", n)
		}
		if _, ok := c.env("ATOLL_KUBE_NAMESPACE"); ok {
			t.Errorf("%s: ATOLL_KUBE_NAMESPACE is set without the Kubernetes executor's Role", where)
		}
	}
	checkNoSecretValues(t, m)
	return sts, c
}

func helmService(t *testing.T, m *helmManifests, name string) k8sService {
	t.Helper()
	for _, s := range helmObjects[k8sService](t, m, "Service") {
		if s.Metadata.Name == name {
			return s
		}
	}
	t.Fatalf("no Service %s", name)
	return k8sService{}
}

// checkNoSecretValues: no Secret object, and every variable whose name
// says secret is a reference or a file path, never a value.
func checkNoSecretValues(t *testing.T, m *helmManifests) {
	t.Helper()
	if n := len(helmObjects[map[string]any](t, m, "Secret")); n > 0 {
		t.Errorf("the chart renders %d Secret(s): secrets are referenced, never rendered", n)
	}
	for _, w := range append(helmObjects[k8sWorkload](t, m, "StatefulSet"), helmObjects[k8sWorkload](t, m, "Deployment")...) {
		pod := w.Spec.Template.Spec
		for _, c := range pod.Containers {
			for _, e := range c.Env {
				if !secretName.MatchString(e.Name) || e.Value == nil {
					continue
				}
				// ATOLL_<SECRET>_FILE: a path to a file of a Secret volume.
				v, _, ok := mountOf(pod, c, path.Dir(*e.Value))
				if !strings.HasSuffix(e.Name, "_FILE") || !ok || !secretVolumeHas(v, path.Base(*e.Value)) {
					t.Errorf("%s %s: %s has a value %q that is not a file of a mounted Secret", w.Kind, w.Metadata.Name, e.Name, *e.Value)
				}
			}
		}
	}
}

func secretVolumeHas(v k8sVolume, file string) bool {
	if v.Secret != nil {
		return slices.ContainsFunc(v.Secret.Items, func(i struct{ Key, Path string }) bool { return i.Path == file })
	}
	if v.Projected != nil {
		for _, s := range v.Projected.Sources {
			if s.Secret != nil && slices.ContainsFunc(s.Secret.Items, func(i struct{ Key, Path string }) bool { return i.Path == file }) {
				return true
			}
		}
	}
	return false
}

// TestDeployHelmDefaults renders the chart with its defaults and the one
// required value.
func TestDeployHelmDefaults(t *testing.T) {
	m := mustRender(t, "--set", "replicaUrl="+helmReplicaURL)
	bin := buildAtoll(t)
	flags := serverFlags(t, bin)
	sts, c := helmServer(t, m, flags)

	if got := c.envValue("ATOLL_REPLICA_URL"); got != helmReplicaURL {
		t.Errorf("ATOLL_REPLICA_URL=%q, want %q", got, helmReplicaURL)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"] != "10Gi" {
		t.Errorf("StatefulSet: volumeClaimTemplates %+v, want one of 10Gi (persistence.size)", sts.Spec.VolumeClaimTemplates)
	}
	if n := len(helmObjects[k8sWorkload](t, m, "Deployment")); n != 0 {
		t.Errorf("%d Deployments without worker pools, want 0", n)
	}
	if n := len(helmObjects[map[string]any](t, m, "Ingress")); n != 0 {
		t.Errorf("an Ingress by default")
	}
	// Every job a Kubernetes Job: the default pool's template is one the
	// server accepts (helmRepoConfig decodes and validates it), and it is
	// the default pool.
	if _, pools := helmRepoConfig(t, m, sts.Spec.Template.Spec, c); len(pools) != 1 || c.envValue("ATOLL_DEFAULT_EXECUTION_POOL") != "kubernetes" {
		t.Errorf("execution_pools %v, ATOLL_DEFAULT_EXECUTION_POOL=%q: want the pool kubernetes, and it the default", slices.Collect(maps.Keys(pools)), c.envValue("ATOLL_DEFAULT_EXECUTION_POOL"))
	} else if err := pools["kubernetes"].Validate("img"); err != nil {
		t.Errorf("execution_pools.kubernetes: %v", err)
	}

	// The default grace period covers the default stop timeout.
	if c.envValue("ATOLL_STOP_TIMEOUT") != "300s" {
		t.Errorf("ATOLL_STOP_TIMEOUT=%q, want 300s (stopTimeoutSeconds)", c.envValue("ATOLL_STOP_TIMEOUT"))
	}

	// The probes' routes answer as the chart expects on a single node
	// (a standby's 503 on /readyz is the HA tests' business).
	for p, code := range getFromServer(t, []string{"/readyz", "/healthz"}) {
		if code != 200 {
			t.Errorf("GET %s: %d, want 200", p, code)
		}
	}
}

// TestDeployHelmAllValues renders the chart with every value set.
func TestDeployHelmAllValues(t *testing.T) {
	m := mustRender(t, "-f", helmAllValues)
	bin := buildAtoll(t)
	flags := serverFlags(t, bin)
	wflags := workerFlags(t, bin)
	sts, c := helmServer(t, m, flags)
	pod := sts.Spec.Template.Spec

	// Secrets: every secret flag with a -file variant is wired from the
	// values, as a file of a Secret; the replica's key id (no -file) from a
	// secretKeyRef.
	var fileSecrets []string
	for f := range flags {
		if flags[f+"-file"] {
			fileSecrets = append(fileSecrets, f)
		}
	}
	sort.Strings(fileSecrets)
	if len(fileSecrets) < 10 {
		t.Fatalf("only %d secret flags with a -file variant: %v", len(fileSecrets), fileSecrets)
	}
	for _, f := range fileSecrets {
		name := "ATOLL_" + strings.ToUpper(strings.ReplaceAll(f, "-", "_"))
		if _, ok := c.env(name); ok {
			t.Errorf("%s is set: the chart must pass %s_FILE", name, name)
		}
		file := c.envValue(name + "_FILE")
		v, _, ok := mountOf(pod, c, path.Dir(file))
		if file == "" || !ok || !secretVolumeHas(v, path.Base(file)) {
			t.Errorf("--%s: %s_FILE=%q is not a file of a mounted Secret (add it to the chart's secrets, and to %s)", f, name, file, helmAllValues)
		}
	}
	if e, ok := c.env("ATOLL_REPLICA_ACCESS_KEY_ID"); !ok || e.Value != nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil ||
		e.ValueFrom.SecretKeyRef.Name != "replica"+helmFakeSecret || e.ValueFrom.SecretKeyRef.Key != "access-key-id" {
		t.Errorf("ATOLL_REPLICA_ACCESS_KEY_ID: %+v, want a secretKeyRef to replica%s/access-key-id", e, helmFakeSecret)
	}
	// The fake Secret names appear only where a Secret is referenced (in
	// the repo config: a pod template's envFromSecrets).
	refs := 0
	var check func(where []string, s string)
	check = func(where []string, s string) {
		if strings.HasSuffix(strings.Join(where, "."), "ConfigMap.data.repos.yaml") {
			var v any
			if err := yaml.Unmarshal([]byte(s), &v); err != nil {
				t.Fatal(err)
			}
			walkStrings([]helmDoc{{Kind: "repos.yaml", raw: v}}, check)
			return
		}
		if !strings.Contains(s, helmFakeSecret) {
			return
		}
		refs++
		p := strings.Join(where, ".")
		for _, ok := range []string{"secretKeyRef.name", "secretRef.name", "secret.name", "secret.secretName", "imagePullSecrets[].name", "tls[].secretName", "kubernetes.envFromSecrets[]"} {
			if strings.HasSuffix(p, ok) {
				return
			}
		}
		t.Errorf("%s: %q: a Secret's name outside a reference", p, s)
	}
	walkStrings(m.docs, check)
	if refs < 16 {
		t.Errorf("only %d references to the values' Secrets", refs)
	}

	// Non-secret settings: config as ATOLL_ variables (lists joined).
	for name, want := range map[string]string{
		"ATOLL_REPO_ALLOWLIST": "github.com/acme/*,github.com/acme-labs/*",
		"ATOLL_GH_APP_ID":      "123456",
		"ATOLL_PARALLELISM":    "8",
		"ATOLL_LEASE_TTL":      "10s",
		"ATOLL_STOP_TIMEOUT":   "240s",
		"ATOLL_PUBLIC_URL":     "https://atoll.example.com", // from the Ingress's TLS host
	} {
		if got := c.envValue(name); got != want {
			t.Errorf("%s=%q, want %q", name, got, want)
		}
	}
	if g := pod.TerminationGracePeriodSeconds; g == nil || *g != 400 {
		t.Errorf("terminationGracePeriodSeconds %v, want 400 (the value)", deref(g))
	}
	if sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests["storage"] != "20Gi" || sts.Spec.VolumeClaimTemplates[0].Spec.StorageClassName != "fast-ssd" {
		t.Errorf("volumeClaimTemplates %+v, want 20Gi of fast-ssd", sts.Spec.VolumeClaimTemplates)
	}
	if c.Image != "registry.example.com/atoll:v1.2.3" || pod.ServiceAccountName != "atoll-server" {
		t.Errorf("server image %q, serviceAccountName %q", c.Image, pod.ServiceAccountName)
	}

	// The repo config: a ConfigMap mounted where --repo-config points, that
	// the server parses, with the pools of kubernetes.pools (merged with
	// the default one) as its execution_pools.
	sc, kubePools := helmRepoConfig(t, m, pod, c)
	var routed []string
	for _, r := range sc.Repos {
		if r.ExecutionPool != nil {
			routed = append(routed, *r.ExecutionPool)
		}
	}
	routed = append(routed, c.envValue("ATOLL_DEFAULT_EXECUTION_POOL"))
	if got := slices.Sorted(maps.Keys(kubePools)); !slices.Equal(got, []string{"kubernetes", "team-a"}) {
		t.Errorf("execution_pools %v, want kubernetes (the default) and team-a", got)
	}
	// team-a sets every field of a pod template.
	tmpl := reflect.ValueOf(kubePools["team-a"])
	for i := range tmpl.NumField() {
		if tmpl.Field(i).IsZero() {
			t.Errorf("%s: kubernetes.pools.team-a sets no %s", helmAllValues, tmpl.Type().Field(i).Name)
		}
	}
	for _, a := range kubePools["team-a"].ExtraArgs {
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); !strings.HasPrefix(a, "-") || !wflags[name] {
			t.Errorf("kubernetes.pools.team-a.extraArgs: %q: `atoll worker` has no flag --%s", a, name)
		}
	}
	svc := helmService(t, m, sts.Metadata.Name)
	for name, want := range map[string]string{
		"ATOLL_KUBE_SERVER_URL":        fmt.Sprintf("http://%s.%s.svc.k8s.example:%d", svc.Metadata.Name, helmNamespace, svc.Spec.Ports[0].Port),
		"ATOLL_KUBE_WORKER_IMAGE":      "registry.example.com/atoll:v1.2.3",
		"ATOLL_KUBE_SCHEDULE_TIMEOUT":  "10m",
		"ATOLL_DEFAULT_EXECUTION_POOL": "team-a",
	} {
		if got := c.envValue(name); got != want {
			t.Errorf("%s=%q, want %q", name, got, want)
		}
	}

	// The Ingress goes to the Service.
	ing := helmOne[k8sIngress](t, m, "Ingress")
	if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b.Name != svc.Metadata.Name || b.Port.Name != svc.Spec.Ports[0].Name {
		t.Errorf("Ingress backend %+v, want Service %s port %s", b, svc.Metadata.Name, svc.Spec.Ports[0].Name)
	}

	// Worker pools: one Deployment each, running `atoll worker` against
	// the Service, then each server pod.
	var values struct {
		ClusterDomain string           `yaml:"clusterDomain"`
		WorkerPools   []helmPoolValues `yaml:"workerPools"`
	}
	data, err := os.ReadFile(helmAllValues)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &values); err != nil {
		t.Fatal(err)
	}
	wantServers := []string{fmt.Sprintf("http://%s.%s.svc.%s:%d", svc.Metadata.Name, helmNamespace, values.ClusterDomain, svc.Spec.Ports[0].Port)}
	for i := range 2 {
		// Pod i's advertise URL, as Kubernetes expands it.
		u := strings.NewReplacer("$(POD_NAME)", fmt.Sprintf("%s-%d", sts.Metadata.Name, i), "$(POD_NAMESPACE)", helmNamespace).Replace(c.envValue("ATOLL_ADVERTISE_URL"))
		wantServers = append(wantServers, u)
	}
	deployments := helmObjects[k8sWorkload](t, m, "Deployment")
	if len(deployments) != len(values.WorkerPools) {
		t.Fatalf("%d Deployments for %d worker pools", len(deployments), len(values.WorkerPools))
	}
	accounts := map[string]k8sServiceAccount{}
	for _, sa := range helmObjects[k8sServiceAccount](t, m, "ServiceAccount") {
		accounts[sa.Metadata.Name] = sa
	}
	for i, p := range values.WorkerPools {
		d := deployments[i]
		where := "Deployment " + d.Metadata.Name
		if r := d.Spec.Replicas; !strings.HasSuffix(d.Metadata.Name, "-"+p.Name) || r == nil || *r != p.Replicas {
			t.Errorf("%s: replicas %v, for pool %s of %d", where, deref(r), p.Name, p.Replicas)
		}
		wpod := d.Spec.Template.Spec
		checkPodSecurity(t, where, wpod, false)
		if len(wpod.Containers) != 1 {
			t.Fatalf("%s: %d containers", where, len(wpod.Containers))
		}
		wc := wpod.Containers[0]
		if len(wc.Command) > 0 || len(wc.Args) == 0 || wc.Args[0] != "worker" {
			t.Fatalf("%s: command %v args %v, want the image's entrypoint and worker ...", where, wc.Command, wc.Args)
		}
		args := map[string]string{}
		for j := 1; j < len(wc.Args); j++ {
			a := wc.Args[j]
			name, value, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
			if !strings.HasPrefix(a, "-") || !wflags[name] {
				t.Errorf("%s: argument %q: `atoll worker` has no flag --%s", where, a, name)
				continue
			}
			if !hasValue && j+1 < len(wc.Args) {
				j++
				value = wc.Args[j]
			}
			args[name] = value
		}
		workerEnv := map[string]string{}
		for _, e := range wc.Env {
			workerEnv[e.Name] = ""
		}
		checkEnvNames(t, where, workerEnv, wflags)
		if got := strings.Split(args["server"], ","); !slices.Equal(got, wantServers) {
			t.Errorf("%s: --server %v, want the Service then both server pods %v", where, got, wantServers)
		}
		if args["pool"] != p.Name || args["concurrency"] != strconv.Itoa(p.Concurrency) {
			t.Errorf("%s: --pool %q --concurrency %q, want %s and %d", where, args["pool"], args["concurrency"], p.Name, p.Concurrency)
		}
		tv, _, ok := mountOf(wpod, wc, path.Dir(args["token-file"]))
		if !ok || tv.Secret == nil || tv.Secret.SecretName != p.TokenSecret.Name ||
			!slices.Contains(tv.Secret.Items, struct{ Key, Path string }{p.TokenSecret.Key, path.Base(args["token-file"])}) {
			t.Errorf("%s: --token-file %s is not key %s of Secret %s", where, args["token-file"], p.TokenSecret.Key, p.TokenSecret.Name)
		}
		if dv, writable, ok := mountOf(wpod, wc, args["data-dir"]); !ok || !writable || dv.EmptyDir == nil {
			t.Errorf("%s: --data-dir %q is not a writable emptyDir", where, args["data-dir"])
		}
		stop, err := time.ParseDuration(args["stop-timeout"])
		if err != nil {
			t.Errorf("%s: --stop-timeout: %v", where, err)
		}
		// The worker: SIGINT to Terraform after --stop-timeout, SIGKILL 30 s later.
		if g := wpod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < stop+30*time.Second {
			t.Errorf("%s: terminationGracePeriodSeconds %v < --stop-timeout %v + 30s", where, deref(g), stop)
		}
		wantSA := p.ServiceAccountName
		if p.ServiceAccount.Create {
			wantSA = p.ServiceAccount.Name
			sa, ok := accounts[wantSA]
			if !ok || sa.Metadata.Annotations["eks.amazonaws.com/role-arn"] != p.ServiceAccount.Annotations["eks.amazonaws.com/role-arn"] {
				t.Errorf("%s: ServiceAccount %s not rendered with its annotations", where, wantSA)
			}
		} else if _, ok := accounts[wantSA]; ok {
			t.Errorf("%s: the chart renders the existing ServiceAccount %s", where, wantSA)
		}
		if wpod.ServiceAccountName != wantSA {
			t.Errorf("%s: serviceAccountName %q, want %q", where, wpod.ServiceAccountName, wantSA)
		}
		for k, v := range p.NodeSelector {
			if wpod.NodeSelector[k] != v {
				t.Errorf("%s: nodeSelector %v, want %v", where, wpod.NodeSelector, p.NodeSelector)
			}
		}
	}
	gpu := deployments[0].Spec.Template.Spec
	if gpu.Containers[0].Image != "registry.example.com/atoll-gpu:v1.2.3-cuda" || len(gpu.Tolerations) != 1 || gpu.Affinity["nodeAffinity"] == nil || gpu.Containers[0].Resources["limits"] == nil {
		t.Errorf("pool gpu: image %q, tolerations %v, affinity %v, resources %v", gpu.Containers[0].Image, gpu.Tolerations, gpu.Affinity, gpu.Containers[0].Resources)
	}
	for _, pool := range routed {
		if _, kube := kubePools[pool]; !kube && !slices.ContainsFunc(values.WorkerPools, func(p helmPoolValues) bool { return p.Name == pool }) {
			t.Errorf("the repo config routes to pool %s, which has no workers and is not run on Kubernetes", pool)
		}
	}
}

// helmPoolValues is what the tests read of a worker pool's values.
type helmPoolValues struct {
	Name               string
	Replicas           int
	Concurrency        int
	ServiceAccountName string `yaml:"serviceAccountName"`
	ServiceAccount     struct {
		Create      bool
		Name        string
		Annotations map[string]string
	} `yaml:"serviceAccount"`
	NodeSelector map[string]string          `yaml:"nodeSelector"`
	TokenSecret  struct{ Name, Key string } `yaml:"tokenSecret"`
}

// TestDeployHelmEdges: the data dir without persistence, a pool scaled
// to zero.
func TestDeployHelmEdges(t *testing.T) {
	m := mustRender(t, "--set", "replicaUrl="+helmReplicaURL, "--set", "persistence.enabled=false",
		"--set-json", `workerPools=[{"name":"idle","replicas":0,"tokenSecret":{"name":"t"}}]`)
	sts, c := helmServer(t, m, serverFlags(t, buildAtoll(t)))
	if len(sts.Spec.VolumeClaimTemplates) != 0 {
		t.Errorf("persistence.enabled=false: volumeClaimTemplates %+v", sts.Spec.VolumeClaimTemplates)
	}
	if v, writable, ok := mountOf(sts.Spec.Template.Spec, c, c.envValue("ATOLL_DATA_DIR")); !ok || !writable || v.EmptyDir == nil {
		t.Errorf("persistence.enabled=false: the data dir is not a writable emptyDir")
	}
	d := helmOne[k8sWorkload](t, m, "Deployment")
	if r := d.Spec.Replicas; r == nil || *r != 0 {
		t.Errorf("a pool of replicas 0 has %v", deref(r))
	}
}

// TestDeployHelmServerStarts runs the built atoll with exactly the
// environment and files the chart gives the server container (pod 0, a
// file:// replica, every volume under a temporary directory, fake secret
// files where the Secrets would be mounted): it must start, become the
// active, answer its probes and stop cleanly on SIGTERM. This catches
// settings that render but that atoll refuses together.
func TestDeployHelmServerStarts(t *testing.T) {
	tmp := t.TempDir()
	values := filepath.Join(tmp, "values.yaml")
	os.WriteFile(values, []byte(`replicaUrl: file://`+filepath.Join(tmp, "replica")+`
leaseTtl: 2s
stopTimeoutSeconds: 5
config:
  repo-allowlist: [github.com/acme/*]
  gh-user: atoll-bot
  log-level: warn
repoConfig: |
  repos:
  - id: /.*/
    apply_requirements: [approved]
# No cluster here: the executor's settings, but no pool run on Kubernetes.
kubernetes:
  pools: null
  defaultPool: ""
secrets:
  ghToken: {name: gh, key: token}
  ghWebhookSecret: {name: gh, key: webhook-secret}
  apiSecret: {name: api, key: secret}
  adminPassword: {name: admin, key: password}
workerPools:
  - name: ci
    concurrency: 2
    tokenSecret: {name: worker-ci, key: token}
`), 0o644)
	m := mustRender(t, "-f", values)
	sts := helmOne[k8sWorkload](t, m, "StatefulSet")
	pod := sts.Spec.Template.Spec
	c := pod.Containers[0]
	configMaps := map[string]k8sConfigMap{}
	for _, cm := range helmObjects[k8sConfigMap](t, m, "ConfigMap") {
		configMaps[cm.Metadata.Name] = cm
	}

	// Each mount is a directory under tmp, filled as Kubernetes would.
	root := filepath.Join(tmp, "pod")
	remap := func(p string) string {
		for _, mnt := range c.VolumeMounts {
			if p == mnt.MountPath || strings.HasPrefix(p, mnt.MountPath+"/") {
				return filepath.Join(root, p)
			}
		}
		return p
	}
	for _, mnt := range c.VolumeMounts {
		dir := filepath.Join(root, mnt.MountPath)
		os.MkdirAll(dir, 0o700)
		v, _, _ := mountOf(pod, c, mnt.MountPath)
		switch {
		case v.Projected != nil:
			for _, src := range v.Projected.Sources {
				for _, it := range src.Secret.Items {
					os.WriteFile(filepath.Join(dir, it.Path), []byte("fake-"+src.Secret.Name+"-"+it.Key+"-0123456789\n"), 0o400)
				}
			}
		case v.ConfigMap != nil:
			cm, ok := configMaps[v.ConfigMap.Name]
			if !ok {
				t.Fatalf("volume %s: no ConfigMap %s", v.Name, v.ConfigMap.Name)
			}
			for k, data := range cm.Data {
				os.WriteFile(filepath.Join(dir, k), []byte(data), 0o444)
			}
		}
	}

	// The container's environment, as the kubelet builds it.
	env := map[string]string{}
	expand := regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)
	var environ []string
	for _, e := range c.Env {
		var v string
		switch {
		case e.Value != nil:
			v = expand.ReplaceAllStringFunc(*e.Value, func(ref string) string {
				if x, ok := env[ref[2:len(ref)-1]]; ok {
					return x
				}
				return ref
			})
		case e.ValueFrom != nil && e.ValueFrom.FieldRef != nil:
			v = map[string]string{"metadata.name": sts.Metadata.Name + "-0", "metadata.namespace": helmNamespace}[e.ValueFrom.FieldRef.FieldPath]
		case e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			v = "fake-" + e.ValueFrom.SecretKeyRef.Name
		}
		env[e.Name] = v
		environ = append(environ, e.Name+"="+remap(v))
	}
	if env["ATOLL_NODE_ID"] != sts.Metadata.Name+"-0" {
		t.Errorf("ATOLL_NODE_ID expands to %q", env["ATOLL_NODE_ID"])
	}
	// Only the listening address differs: a free port on loopback.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	environ = append(environ, "ATOLL_ADDR="+addr, "PATH="+os.Getenv("PATH"), "CHECKPOINT_DISABLE=1")

	cmd := exec.Command(buildAtoll(t), c.Args...)
	cmd.Env = environ
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		cmd.Process.Kill()
		<-done
	}()
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(p string) int {
		resp, err := client.Get("http://" + addr + p)
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	deadline := time.Now().Add(60 * time.Second)
	for get("/readyz") != http.StatusOK || get("/healthz") != http.StatusOK {
		select {
		case err := <-done:
			done <- err // for the deferred Kill's wait
			t.Fatalf("atoll exited (%v) with the chart's environment:\n%s", err, out.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after 60s:\n%s", out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// A worker of the pool, with its Deployment's arguments (--server
	// pointed here) and an unknown token: its flags parse, it reaches the
	// server, and the server refuses the token (exit 1, not a usage error).
	wpod := helmOne[k8sWorkload](t, m, "Deployment").Spec.Template.Spec
	wc := wpod.Containers[0]
	wroot := filepath.Join(tmp, "worker")
	wargs := slices.Clone(wc.Args)
	for i := 1; i < len(wargs); i++ {
		if wargs[i-1] == "--server" {
			wargs[i] = "http://" + addr
		}
		if strings.HasPrefix(wargs[i], "/") {
			wargs[i] = filepath.Join(wroot, wargs[i])
		}
	}
	for _, mnt := range wc.VolumeMounts {
		dir := filepath.Join(wroot, mnt.MountPath)
		os.MkdirAll(dir, 0o700)
		if v, _, _ := mountOf(wpod, wc, mnt.MountPath); v.Secret != nil {
			for _, it := range v.Secret.Items {
				os.WriteFile(filepath.Join(dir, it.Path), []byte("not-a-worker-token\n"), 0o400)
			}
		}
	}
	wenv := []string{"PATH=" + os.Getenv("PATH")}
	for _, e := range wc.Env {
		if e.Value != nil {
			wenv = append(wenv, e.Name+"="+filepath.Join(wroot, *e.Value))
		}
	}
	wcmd := exec.Command(buildAtoll(t), wargs...)
	wcmd.Env = wenv
	wout, err := runWithTimeout(wcmd, 30*time.Second)
	if code := wcmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(wout), "refuses the worker token") {
		t.Errorf("atoll %s: exit %d (%v), want 1 and the server's refusal of the token:\n%s", strings.Join(wargs, " "), code, err, wout)
	}

	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Errorf("atoll on SIGTERM: %v\n%s", err, out.String())
		}
	case <-time.After(time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second):
		t.Errorf("atoll still running after terminationGracePeriodSeconds:\n%s", out.String())
	}
}

// runWithTimeout runs cmd, killing it after d.
func runWithTimeout(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	timer := time.AfterFunc(d, func() { cmd.Process.Kill() })
	defer timer.Stop()
	err := cmd.Wait()
	return out.Bytes(), err
}

// walkStrings calls fn with every string in the manifests and where it is
// (keys, "[]" for list items).
func walkStrings(docs []helmDoc, fn func(where []string, s string)) {
	var walk func(where []string, v any)
	walk = func(where []string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				walk(append(slices.Clip(where), k), x)
			}
		case []any:
			for _, x := range v {
				if len(where) > 0 {
					last := where[len(where)-1]
					walk(append(slices.Clip(where[:len(where)-1]), last+"[]"), x)
				} else {
					walk([]string{"[]"}, x)
				}
			}
		case string:
			fn(where, v)
		}
	}
	for _, d := range docs {
		walk([]string{d.Kind}, d.raw)
	}
}

// TestDeployHelmRefuses: values the chart must not render, each with a
// message that says what to do. The secret values never reach the output.
func TestDeployHelmRefuses(t *testing.T) {
	replica := "replicaUrl=" + helmReplicaURL
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"no replica URL", nil, "replicaUrl is required"},
		{"credentials in the replica URL", []string{"--set", "replicaUrl=s3://AKIA:hunter2@bucket/atoll"}, "secrets.replicaAccessKeyId"},
		{"a secret in config", []string{"--set", replica, "--set", "config.gh-token=hunter2"}, "secrets.ghToken"},
		{"a secret file in config", []string{"--set", replica, "--set", "config.gh-webhook-secret-file=/x"}, "secrets.ghWebhookSecret"},
		{"a value in a secret reference", []string{"--set", replica, "--set", "secrets.apiSecret.value=hunter2"}, "additional properties 'value' not allowed"},
		{"an unknown value", []string{"--set", replica, "--set", "ghToken=hunter2"}, "additional properties 'ghToken' not allowed"},
		{"a flag the chart sets", []string{"--set", replica, "--set", "config.node-id=a"}, "config.node-id: the chart sets --node-id"},
		{"a secret in extraEnv", []string{"--set", replica, "--set-json", `extraEnv=[{"name":"AWS_SECRET_ACCESS_KEY","value":"hunter2"}]`}, "extraEnv: AWS_SECRET_ACCESS_KEY has an inline value"},
		{"a secret in a pool's env", []string{"--set", replica, "--set-json", `workerPools=[{"name":"a","tokenSecret":{"name":"t"},"env":[{"name":"GITHUB_TOKEN","value":"hunter2"}]}]`}, "workerPools[a].env: GITHUB_TOKEN has an inline value"},
		{"a pool without a token", []string{"--set", replica, "--set-json", `workerPools=[{"name":"a","tokenSecret":{"name":""}}]`}, "tokenSecret"},
		{"the local pool", []string{"--set", replica, "--set-json", `workerPools=[{"name":"local","tokenSecret":{"name":"t"}}]`}, "/workerPools/0/name"},
		{"a pool twice", []string{"--set", replica, "--set-json", `workerPools=[{"name":"a","tokenSecret":{"name":"t"}},{"name":"a","tokenSecret":{"name":"t"}}]`}, `"a" is listed twice`},
		{"a grace period shorter than the stop timeout", []string{"--set", replica, "--set", "terminationGracePeriodSeconds=300"}, "below stopTimeoutSeconds + 40"},
		{"the Jobs' namespace in config", []string{"--set", replica, "--set", "config.kube-namespace=x"}, "config.kube-namespace: the chart sets --kube-namespace"},
		{"the default pool in config", []string{"--set", replica, "--set", "config.default-execution-pool=x"}, "config.default-execution-pool: the chart sets --default-execution-pool from kubernetes.defaultPool"},
		{"the schedule timeout in config", []string{"--set", replica, "--set", "config.kube-schedule-timeout=1m"}, "from kubernetes.scheduleTimeout"},
		{"execution_pools twice", []string{"--set", replica, "--set", "repoConfig=execution_pools: {a: {kubernetes: {}}}"}, "repoConfig sets execution_pools and so does kubernetes.pools"},
		{"a secret in a pod template's env", []string{"--set", replica, "--set-json", `kubernetes.pools.kubernetes.env=[{"name":"GITHUB_TOKEN","value":"hunter2"}]`}, "kubernetes.pools[kubernetes].env: GITHUB_TOKEN looks secret"},
		{"a secret field in a pod template", []string{"--set", replica, "--set", "kubernetes.pools.kubernetes.token=hunter2"}, "additional properties 'token' not allowed"},
		{"a valueFrom in a pod template's env", []string{"--set", replica, "--set-json", `kubernetes.pools.kubernetes.env=[{"name":"A","valueFrom":{"secretKeyRef":{"name":"s","key":"k"}}}]`}, "additional properties 'valueFrom' not allowed"},
		{"a quantity as a number", []string{"--set", replica, "--set-json", `kubernetes.pools.kubernetes.limits={"cpu":2}`}, "got number, want string"},
		{"a Kubernetes pool named local", []string{"--set", replica, "--set-json", `kubernetes.pools.local={}`}, `"local" is the active node's own pool`},
		{"a Kubernetes pool that is not a DNS label", []string{"--set", replica, "--set-json", `kubernetes.pools.Team_A={}`}, "invalid propertyName 'Team_A'"},
		{"the Role on the namespace's default ServiceAccount", []string{"--set", replica, "--set", "serviceAccount.create=false"}, "would be the namespace's default one"},
		{"a pool running as the server's ServiceAccount", []string{"--set", replica, "--set", "kubernetes.pools.kubernetes.serviceAccountName=rel-atoll"}, "kubernetes.pools[kubernetes].serviceAccountName: rel-atoll is the server's ServiceAccount"},
		{"a pool both Kubernetes and workers", []string{"--set", replica, "--set-json", `workerPools=[{"name":"kubernetes","tokenSecret":{"name":"t"}}]`}, `"kubernetes" is also in workerPools`},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := helmRender(t, c.args...)
			if err == nil {
				t.Fatalf("rendered, want an error with %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want it to say %q", err, c.want)
			}
			if m != nil || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("the secret value is in helm's output: %v", err)
			}
		})
	}
}

// TestDeployHelmLint runs helm lint --strict with the defaults and with
// every value set.
func TestDeployHelmLint(t *testing.T) {
	for _, args := range [][]string{{"--set", "replicaUrl=" + helmReplicaURL}, {"-f", helmAllValues}} {
		argv := append([]string{"lint", "--strict", helmChart(t), "--kube-version", helmKubeVersion}, args...)
		out, err := exec.Command(helmBin(t), argv...).CombinedOutput()
		if err != nil {
			t.Errorf("helm %s: %v\n%s", strings.Join(argv, " "), err, out)
		}
	}
}

// TestDeployHelmValuesDocumented: the README's values table lists every
// value of values.yaml and no other, the test values set every one, and
// the worker pool fields are the schema's.
func TestDeployHelmValuesDocumented(t *testing.T) {
	chart := helmChart(t)
	defaults := flattenValues(t, filepath.Join(chart, "values.yaml"))
	all := flattenValues(t, helmAllValues)
	readme, err := os.ReadFile(filepath.Join(chart, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Za-z0-9_.\\[\\]-]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		documented[m[1]] = true
	}
	var schema struct {
		Properties struct {
			WorkerPools struct {
				Items struct {
					Properties map[string]any
				}
			} `yaml:"workerPools"`
		}
	}
	data, err := os.ReadFile(filepath.Join(chart, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &schema); err != nil { // JSON is YAML
		t.Fatal(err)
	}
	poolFields := schema.Properties.WorkerPools.Items.Properties
	if len(poolFields) < 10 {
		t.Fatalf("values.schema.json: %d worker pool fields", len(poolFields))
	}
	for k := range defaults {
		if !documented[k] {
			t.Errorf("README.md: value %s is not in the values table", k)
		}
		if !all[k] && !slices.ContainsFunc(mapKeys(all), func(a string) bool { return strings.HasPrefix(a, k+".") }) {
			t.Errorf("%s does not set %s", helmAllValues, k)
		}
	}
	for k := range documented {
		if field, ok := strings.CutPrefix(k, "workerPools[]."); ok {
			if poolFields[strings.Split(field, ".")[0]] == nil {
				t.Errorf("README.md: %s is not a worker pool field of values.schema.json", k)
			}
			continue
		}
		if !defaults[k] {
			t.Errorf("README.md: %s is not in values.yaml", k)
		}
	}
	for f := range poolFields {
		if !slices.ContainsFunc(mapKeys(documented), func(d string) bool {
			return d == "workerPools[]."+f || strings.HasPrefix(d, "workerPools[]."+f+".")
		}) {
			t.Errorf("README.md: worker pool field %s is not in the values table", f)
		}
		if !all["workerPools[]."+f] && !slices.ContainsFunc(mapKeys(all), func(a string) bool { return strings.HasPrefix(a, "workerPools[]."+f+".") }) {
			t.Errorf("%s: no worker pool sets %s", helmAllValues, f)
		}
	}
	// The fields of a Kubernetes pool are kube.PodTemplate's, each in the
	// values table (as kubernetes.pools.<name>.FIELD) and the schema.
	var templateFields []string
	for f := range reflect.TypeFor[kube.PodTemplate]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		templateFields = append(templateFields, name)
	}
	slices.Sort(templateFields)
	var rows []string
	for _, m := range regexp.MustCompile("(?m)^\\| `kubernetes\\.pools\\.<name>\\.([A-Za-z]+)` \\|").FindAllStringSubmatch(string(readme), -1) {
		rows = append(rows, m[1])
	}
	slices.Sort(rows)
	if !slices.Equal(rows, templateFields) {
		t.Errorf("README.md: the kubernetes.pools.<name>.* rows are %v, kube.PodTemplate's fields %v", rows, templateFields)
	}
	var kschema struct {
		Properties struct {
			Kubernetes struct {
				Properties struct {
					Pools struct {
						AdditionalProperties struct {
							Properties map[string]any
						} `yaml:"additionalProperties"`
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(data, &kschema); err != nil {
		t.Fatal(err)
	}
	if got := slices.Sorted(maps.Keys(kschema.Properties.Kubernetes.Properties.Pools.AdditionalProperties.Properties)); !slices.Equal(got, templateFields) {
		t.Errorf("values.schema.json: the fields of kubernetes.pools entries are %v, kube.PodTemplate's %v", got, templateFields)
	}

	// Secret references default to no Secret.
	var values struct {
		Secrets map[string]struct{ Name, Key string }
	}
	data, _ = os.ReadFile(filepath.Join(chart, "values.yaml"))
	yaml.Unmarshal(data, &values)
	for k, ref := range values.Secrets {
		if ref.Name != "" || ref.Key == "" {
			t.Errorf("values.yaml: secrets.%s = %+v, want no name and a default key", k, ref)
		}
	}
	// make test passes the pinned helm.
	mk, err := os.ReadFile(filepath.Join(repoRoot(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "ATOLL_TEST_HELM=$(HELM)") || !strings.Contains(string(mk), "HELM := $(BIN)/helm-$(HELM_VERSION)/helm") {
		t.Errorf("Makefile: make test does not pass ATOLL_TEST_HELM=$(HELM)")
	}
}

func mapKeys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// flattenValues lists a values file's keys as dotted paths: maps are
// walked (an empty map is a value), list items of maps as name[].key.
func flattenValues(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	out := map[string]bool{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if len(v) == 0 || strings.Count(prefix, ".") == 1 && strings.HasPrefix(prefix, "secrets.") || strings.HasSuffix(prefix, "config") || prefix == "kubernetes.pools" || strings.HasSuffix(prefix, "nnotations") || strings.HasSuffix(prefix, "abels") ||
				strings.HasSuffix(prefix, "esources") || strings.HasSuffix(prefix, "ffinity") || strings.HasSuffix(prefix, "odeSelector") ||
				strings.HasSuffix(prefix, "ecurityContext") || strings.HasSuffix(prefix, "Probe") {
				out[prefix] = true
				return
			}
			for k, x := range v {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x)
			}
		case []any:
			out[prefix] = true
			if prefix == "workerPools" {
				for _, x := range v {
					walk(prefix+"[]", x)
				}
			}
		default:
			out[prefix] = true
		}
	}
	walk("", v)
	return out
}

// checkRequiredRBAC: the one Role grants exactly kube.RequiredRBAC (no
// verb, resource or group more, none less), and the one RoleBinding binds
// it to the server's ServiceAccount in the release's namespace.
func checkRequiredRBAC(t *testing.T, m *helmManifests, serviceAccount string) {
	t.Helper()
	roles := helmK8s[rbacv1.Role](t, m, "Role")
	if len(roles) != 1 {
		t.Fatalf("%d Roles, want 1", len(roles))
	}
	role := roles[0]
	type grant struct{ group, resource, verb string }
	granted := map[grant]bool{}
	for i, r := range role.Rules {
		if len(r.ResourceNames) > 0 || len(r.NonResourceURLs) > 0 {
			t.Errorf("Role %s: rule %d: resourceNames %v, nonResourceURLs %v: kube.RequiredRBAC has none", role.Name, i, r.ResourceNames, r.NonResourceURLs)
		}
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					granted[grant{g, res, v}] = true
				}
			}
		}
	}
	required := map[grant]bool{}
	for _, p := range kube.RequiredRBAC {
		for _, v := range p.Verbs {
			required[grant{p.Group, p.Resource, v}] = true
		}
	}
	for g := range granted {
		if !required[g] {
			t.Errorf("Role %s grants %s on %q/%s, which kube.RequiredRBAC does not need", role.Name, g.verb, g.group, g.resource)
		}
	}
	for g := range required {
		if !granted[g] {
			t.Errorf("Role %s does not grant %s on %q/%s, which kube.RequiredRBAC needs", role.Name, g.verb, g.group, g.resource)
		}
	}
	if len(required) < 10 {
		t.Fatalf("kube.RequiredRBAC: only %d verbs", len(required))
	}
	bindings := helmK8s[rbacv1.RoleBinding](t, m, "RoleBinding")
	if len(bindings) != 1 {
		t.Fatalf("%d RoleBindings, want 1", len(bindings))
	}
	rb := bindings[0]
	if rb.RoleRef.APIGroup != rbacv1.GroupName || rb.RoleRef.Kind != "Role" || rb.RoleRef.Name != role.Name {
		t.Errorf("RoleBinding %s: roleRef %+v, want the Role %s", rb.Name, rb.RoleRef, role.Name)
	}
	if want := (rbacv1.Subject{Kind: "ServiceAccount", Name: serviceAccount, Namespace: helmNamespace}); len(rb.Subjects) != 1 || rb.Subjects[0] != want {
		t.Errorf("RoleBinding %s: subjects %+v, want only %+v (the server's)", rb.Name, rb.Subjects, want)
	}
}

// checkKubeEnv: the Kubernetes executor's settings of the server
// container: Jobs in the pod's own namespace, whose pods reach the active
// through the Service (unless config says otherwise).
func checkKubeEnv(t *testing.T, c k8sContainer, svc k8sService) {
	t.Helper()
	ns, ok := c.env("ATOLL_KUBE_NAMESPACE")
	if !ok || ns.ValueFrom == nil || ns.ValueFrom.FieldRef == nil || ns.ValueFrom.FieldRef.FieldPath != "metadata.namespace" {
		t.Errorf("ATOLL_KUBE_NAMESPACE is not the pod's metadata.namespace: %+v", ns)
	}
	// The Service's URL, or a value of config.
	if u := c.envValue("ATOLL_KUBE_SERVER_URL"); !strings.HasPrefix(u, fmt.Sprintf("http://%s.%s.svc.", svc.Metadata.Name, helmNamespace)) ||
		!strings.HasSuffix(u, fmt.Sprintf(":%d", svc.Spec.Ports[0].Port)) {
		t.Logf("ATOLL_KUBE_SERVER_URL=%q is not the Service %s (port %d): a value of config", u, svc.Metadata.Name, svc.Spec.Ports[0].Port)
		if u == "" {
			t.Errorf("no ATOLL_KUBE_SERVER_URL")
		}
	}
	if c.envValue("ATOLL_KUBE_WORKER_IMAGE") == "" {
		t.Errorf("no ATOLL_KUBE_WORKER_IMAGE")
	}
	if _, err := time.ParseDuration(c.envValue("ATOLL_KUBE_SCHEDULE_TIMEOUT")); err != nil {
		t.Errorf("ATOLL_KUBE_SCHEDULE_TIMEOUT: %v", err)
	}
}

// helmRepoConfig is the rendered server-side repo config: the ConfigMap
// mounted where ATOLL_REPO_CONFIG points, parsed by the server's parser,
// and its execution_pools decoded as the server decodes them (strictly,
// kube.PodTemplate) and checked (Validate with the chart's worker image).
func helmRepoConfig(t *testing.T, m *helmManifests, pod k8sPodSpec, c k8sContainer) (*repocfg.ServerConfig, map[string]kube.PodTemplate) {
	t.Helper()
	cm := helmOne[k8sConfigMap](t, m, "ConfigMap")
	file := c.envValue("ATOLL_REPO_CONFIG")
	v, _, ok := mountOf(pod, c, path.Dir(file))
	data := cm.Data[path.Base(file)]
	if !ok || v.ConfigMap == nil || v.ConfigMap.Name != cm.Metadata.Name || data == "" {
		t.Fatalf("ATOLL_REPO_CONFIG=%q is not the ConfigMap %s's file", file, cm.Metadata.Name)
	}
	// As the server reads it: the parser, then each pool's template.
	sc, err := repocfg.ParseServerConfig(file, []byte(data))
	if err != nil {
		t.Fatalf("the rendered repo config: %v\n%s", err, data)
	}
	pools := map[string]kube.PodTemplate{}
	for name, p := range sc.ExecutionPools {
		tmpl, err := kube.ParsePodTemplate(repocfg.PoolLocation(file, name, p), p.Kubernetes, c.envValue("ATOLL_KUBE_WORKER_IMAGE"))
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		// The ConfigMap holds no secret: variables are literal values.
		for _, env := range tmpl.Env {
			if secretName.MatchString(env.Name) {
				t.Errorf("execution_pools.%s.kubernetes: env %s holds a value that looks secret", name, env.Name)
			}
		}
		pools[name] = tmpl
	}
	return sc, pools
}

// TestDeployHelmRoleIsRequiredRBAC: with the defaults the chart's Role is
// exactly what package kube does with the API (kube.RequiredRBAC, both
// ways), bound to the server's ServiceAccount, whose token the server pods
// mount; with kubernetes.enabled=false there is no RBAC and no token.
func TestDeployHelmRoleIsRequiredRBAC(t *testing.T) {
	m := mustRender(t, "--set", "replicaUrl="+helmReplicaURL)
	sts := helmOne[k8sWorkload](t, m, "StatefulSet")
	pod := sts.Spec.Template.Spec
	checkRequiredRBAC(t, m, pod.ServiceAccountName)
	if a := pod.AutomountServiceAccountToken; a == nil || !*a {
		t.Errorf("automountServiceAccountToken %v, want true: the server starts Kubernetes Jobs", deref(a))
	}
	sa := helmOne[k8sServiceAccount](t, m, "ServiceAccount")
	if sa.Metadata.Name != pod.ServiceAccountName {
		t.Errorf("ServiceAccount %s, the pods run as %s", sa.Metadata.Name, pod.ServiceAccountName)
	}

	// An existing ServiceAccount gets the Role.
	m = mustRender(t, "--set", "replicaUrl="+helmReplicaURL, "--set", "serviceAccount.create=false", "--set", "serviceAccount.name=ci-atoll")
	checkRequiredRBAC(t, m, "ci-atoll")

	m = mustRender(t, "--set", "replicaUrl="+helmReplicaURL, "--set", "kubernetes.enabled=false",
		"--set", "config.default-execution-pool=prod", "--set", "config.kube-namespace=jobs")
	for _, d := range m.docs {
		if d.Kind == "Role" || d.Kind == "RoleBinding" || d.Kind == "ConfigMap" {
			t.Errorf("kubernetes.enabled=false (and no repoConfig): %s %s rendered", d.Kind, d.Name)
		}
	}
	pod = helmOne[k8sWorkload](t, m, "StatefulSet").Spec.Template.Spec
	if a := pod.AutomountServiceAccountToken; a == nil || *a {
		t.Errorf("kubernetes.enabled=false: automountServiceAccountToken %v, want false", deref(a))
	}
	c := pod.Containers[0]
	// The chart sets nothing of the executor; config may.
	for name, want := range map[string]string{"ATOLL_DEFAULT_EXECUTION_POOL": "prod", "ATOLL_KUBE_NAMESPACE": "jobs", "ATOLL_KUBE_SERVER_URL": "", "ATOLL_KUBE_WORKER_IMAGE": "", "ATOLL_KUBE_SCHEDULE_TIMEOUT": ""} {
		if e, ok := c.env(name); ok != (want != "") || c.envValue(name) != want || (ok && e.ValueFrom != nil) {
			t.Errorf("kubernetes.enabled=false: %s=%q (set %v), want %q", name, c.envValue(name), ok, want)
		}
	}
	if _, ok := c.env("ATOLL_REPO_CONFIG"); ok {
		t.Errorf("kubernetes.enabled=false and no repoConfig: ATOLL_REPO_CONFIG is set")
	}
}

// TestDeployHelmKubernetesPools: the defaults run every job as a
// Kubernetes Job: the pool of kubernetes.pools in the repo config's
// execution_pools (a pod template the server accepts), the default pool,
// the Jobs' namespace, image and way back to the server. A user's
// repoConfig is kept as written, with the pools added.
func TestDeployHelmKubernetesPools(t *testing.T) {
	const userConfig = "repos:\n- id: /.*/\n  apply_requirements: [approved]\n- id: /github.com/acme/legacy-.*/\n  execution_pool: local\n"
	m := mustRender(t, "--set", "replicaUrl="+helmReplicaURL, "--set", "repoConfig="+userConfig)
	sts, c := helmServer(t, m, serverFlags(t, buildAtoll(t)))
	pod := sts.Spec.Template.Spec

	sc, pools := helmRepoConfig(t, m, pod, c)
	if len(pools) != 1 {
		t.Fatalf("execution_pools %v, want the default pool only", slices.Collect(maps.Keys(pools)))
	}
	tmpl, ok := pools["kubernetes"]
	if !ok {
		t.Fatalf("no execution_pools.kubernetes")
	}
	if tmpl.Limits["memory"] == "" || tmpl.Requests["cpu"] == "" || tmpl.Requests["memory"] == "" || tmpl.TTLSecondsAfterFinished == nil {
		t.Errorf("the default pool: %+v, want requests, a memory limit and a TTL", tmpl)
	}
	if tmpl.Image != "" {
		t.Errorf("the default pool names image %q: it should take the chart's (ATOLL_KUBE_WORKER_IMAGE)", tmpl.Image)
	}
	// The user's entries survive the merge, in order.
	if n := len(sc.Repos); n < 2 || sc.Repos[n-1].ExecutionPool == nil || *sc.Repos[n-1].ExecutionPool != "local" || len(sc.Repos[n-2].ApplyRequirements) != 1 {
		t.Errorf("the user's repos entries are not in the rendered repo config: %+v", sc.Repos)
	}
	cm := helmOne[k8sConfigMap](t, m, "ConfigMap")
	if !strings.HasPrefix(cm.Data["repos.yaml"], userConfig) {
		t.Errorf("repos.yaml does not begin with repoConfig as written (its line numbers are the server's messages'):\n%s", cm.Data["repos.yaml"])
	}

	svc := helmService(t, m, sts.Metadata.Name)
	for name, want := range map[string]string{
		"ATOLL_KUBE_SERVER_URL":        fmt.Sprintf("http://%s.%s.svc.cluster.local:%d", svc.Metadata.Name, helmNamespace, svc.Spec.Ports[0].Port),
		"ATOLL_KUBE_WORKER_IMAGE":      c.Image,
		"ATOLL_KUBE_SCHEDULE_TIMEOUT":  "5m",
		"ATOLL_DEFAULT_EXECUTION_POOL": "kubernetes",
	} {
		if got := c.envValue(name); got != want {
			t.Errorf("%s=%q, want %q", name, got, want)
		}
	}

	// The checksum annotation follows the rendered config: the pools too.
	sum := sts.Spec.Template.Metadata.Annotations["checksum/repo-config"]
	for _, args := range [][]string{
		{"--set", "kubernetes.pools.kubernetes.limits.memory=4Gi"},
		{"--set", "repoConfig=repos: []"},
	} {
		other := helmOne[k8sWorkload](t, mustRender(t, append([]string{"--set", "replicaUrl=" + helmReplicaURL, "--set", "repoConfig=" + userConfig}, args...)...), "StatefulSet")
		if other.Spec.Template.Metadata.Annotations["checksum/repo-config"] == sum {
			t.Errorf("%v: checksum/repo-config unchanged", args)
		}
	}

	// config may point the Jobs elsewhere; the chart then sets neither.
	m = mustRender(t, "--set", "replicaUrl="+helmReplicaURL, "--set", "config.kube-server-url=https://atoll.example.com",
		"--set", "config.kube-worker-image=registry.example.com/atoll:custom", "--set", "kubernetes.defaultPool=")
	c = helmOne[k8sWorkload](t, m, "StatefulSet").Spec.Template.Spec.Containers[0]
	for name, want := range map[string]string{"ATOLL_KUBE_SERVER_URL": "https://atoll.example.com", "ATOLL_KUBE_WORKER_IMAGE": "registry.example.com/atoll:custom"} {
		n := 0
		for _, e := range c.Env {
			if e.Name == name {
				n++
			}
		}
		if n != 1 || c.envValue(name) != want {
			t.Errorf("%s set %d times, %q; want once, %q (config's)", name, n, c.envValue(name), want)
		}
	}
	if _, ok := c.env("ATOLL_DEFAULT_EXECUTION_POOL"); ok {
		t.Errorf("kubernetes.defaultPool=\"\": ATOLL_DEFAULT_EXECUTION_POOL is set (runs stay on the active node without it)")
	}
}
