// Package kube runs Atoll jobs as Kubernetes Jobs: one batch/v1 Job per
// job attempt, whose pod runs `atoll worker --once` for exactly that job
// (the client side only; the dispatcher decides when).
package kube

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
)

// DefaultTTLSecondsAfterFinished is how long a finished Job (and its pod,
// its log and its Secret) is kept when the template sets no TTL.
const DefaultTTLSecondsAfterFinished = 600

// PodTemplate is how a pool's pods are made: the server-side config of a
// pool that runs on Kubernetes.
type PodTemplate struct {
	// Image is the worker image (default Launcher.Image).
	Image string `json:"image,omitempty"`
	// ImagePullPolicy is Always, IfNotPresent or Never (default: the
	// cluster's).
	ImagePullPolicy string `json:"imagePullPolicy,omitempty"`
	// Command replaces the image's entrypoint (default: the image's, which
	// runs atoll); the arguments are always the worker's.
	Command []string `json:"command,omitempty"`
	// ExtraArgs are appended to `worker --once ...`, e.g.
	// --terraform-bin=/opt/terraform.
	ExtraArgs []string `json:"extraArgs,omitempty"`
	// Requests and Limits are quantities by resource name: "cpu": "500m",
	// "memory": "2Gi", "ephemeral-storage": "10Gi".
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
	// NodeSelector, Tolerations and Affinity place the pod.
	NodeSelector map[string]string   `json:"nodeSelector,omitempty"`
	Tolerations  []corev1.Toleration `json:"tolerations,omitempty"`
	Affinity     *corev1.Affinity    `json:"affinity,omitempty"`
	// ServiceAccountName is the pod's identity (workload identity, IRSA):
	// its token is mounted only when it is set.
	ServiceAccountName string `json:"serviceAccountName,omitempty"`
	// Env is literal environment variables; EnvFromSecrets names Secrets
	// of the namespace whose keys become variables.
	Env            []EnvVar `json:"env,omitempty"`
	EnvFromSecrets []string `json:"envFromSecrets,omitempty"`
	// Annotations and Labels are added to the pod (labels also to the
	// Job); Atoll's own labels cannot be overridden.
	Annotations map[string]string `json:"annotations,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	// ActiveDeadlineSeconds bounds the Job's run (0: none).
	ActiveDeadlineSeconds int64 `json:"activeDeadlineSeconds,omitempty"`
	// TTLSecondsAfterFinished is how long the finished Job is kept
	// (nil: DefaultTTLSecondsAfterFinished).
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// EnvVar is one environment variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Validate checks the template as the API server would, with errors that
// name the field; defaultImage stands in for an empty Image.
func (t PodTemplate) Validate(defaultImage string) error {
	var errs []error
	if t.Image == "" && defaultImage == "" {
		errs = append(errs, errors.New("image: empty (and no default image)"))
	}
	switch t.ImagePullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		errs = append(errs, fmt.Errorf("image_pull_policy %q: Always, IfNotPresent or Never", t.ImagePullPolicy))
	}
	if _, err := t.resources(); err != nil {
		errs = append(errs, err)
	}
	for k, v := range t.NodeSelector {
		if m := validation.IsQualifiedName(k); len(m) > 0 {
			errs = append(errs, fmt.Errorf("node_selector key %q: %s", k, strings.Join(m, "; ")))
		}
		if m := validation.IsValidLabelValue(v); len(m) > 0 {
			errs = append(errs, fmt.Errorf("node_selector %s value %q: %s", k, v, strings.Join(m, "; ")))
		}
	}
	for k, v := range t.Labels {
		if m := validation.IsQualifiedName(k); len(m) > 0 {
			errs = append(errs, fmt.Errorf("labels key %q: %s", k, strings.Join(m, "; ")))
		}
		if m := validation.IsValidLabelValue(v); len(m) > 0 {
			errs = append(errs, fmt.Errorf("labels %s value %q: %s", k, v, strings.Join(m, "; ")))
		}
		if strings.HasPrefix(k, "atoll.dev/") || k == LabelManagedBy || strings.Contains(k, "kubernetes.io/") || k == "job-name" || k == "controller-uid" {
			errs = append(errs, fmt.Errorf("labels key %q: reserved for Atoll and Kubernetes", k))
		}
	}
	for k := range t.Annotations {
		if m := validation.IsQualifiedName(k); len(m) > 0 {
			errs = append(errs, fmt.Errorf("annotations key %q: %s", k, strings.Join(m, "; ")))
		}
	}
	for _, e := range t.Env {
		if m := validation.IsEnvVarName(e.Name); len(m) > 0 {
			errs = append(errs, fmt.Errorf("env %q: %s", e.Name, strings.Join(m, "; ")))
		}
	}
	for _, s := range t.EnvFromSecrets {
		if m := validation.IsDNS1123Subdomain(s); len(m) > 0 {
			errs = append(errs, fmt.Errorf("env_from_secrets %q: %s", s, strings.Join(m, "; ")))
		}
	}
	if t.ServiceAccountName != "" {
		if m := validation.IsDNS1123Subdomain(t.ServiceAccountName); len(m) > 0 {
			errs = append(errs, fmt.Errorf("service_account_name %q: %s", t.ServiceAccountName, strings.Join(m, "; ")))
		}
	}
	if t.ActiveDeadlineSeconds < 0 {
		errs = append(errs, fmt.Errorf("active_deadline_seconds %d: must be positive (0: none)", t.ActiveDeadlineSeconds))
	}
	if t.TTLSecondsAfterFinished != nil && *t.TTLSecondsAfterFinished < 0 {
		errs = append(errs, fmt.Errorf("ttl_seconds_after_finished %d: must not be negative", *t.TTLSecondsAfterFinished))
	}
	for _, tol := range t.Tolerations {
		switch tol.Operator {
		case "", corev1.TolerationOpEqual, corev1.TolerationOpExists:
		default:
			errs = append(errs, fmt.Errorf("tolerations: operator %q: Equal or Exists", tol.Operator))
		}
		if tol.Operator == corev1.TolerationOpExists && tol.Value != "" {
			errs = append(errs, fmt.Errorf("tolerations: key %q: a value with operator Exists", tol.Key))
		}
	}
	return errors.Join(errs...)
}

// resources parses Requests and Limits.
func (t PodTemplate) resources() (corev1.ResourceRequirements, error) {
	var rr corev1.ResourceRequirements
	var errs []error
	parse := func(what string, in map[string]string) corev1.ResourceList {
		if len(in) == 0 {
			return nil
		}
		out := corev1.ResourceList{}
		for name, v := range in {
			if m := validation.IsQualifiedName(name); len(m) > 0 {
				errs = append(errs, fmt.Errorf("%s: resource name %q: %s", what, name, strings.Join(m, "; ")))
				continue
			}
			q, err := resource.ParseQuantity(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s %s: %q is not a quantity (e.g. 500m, 2Gi)", what, name, v))
				continue
			}
			if q.Sign() < 0 {
				errs = append(errs, fmt.Errorf("%s %s: %q is negative", what, name, v))
				continue
			}
			out[corev1.ResourceName(name)] = q
		}
		return out
	}
	rr.Requests = parse("requests", t.Requests)
	rr.Limits = parse("limits", t.Limits)
	for name, req := range rr.Requests {
		if lim, ok := rr.Limits[name]; ok && req.Cmp(lim) > 0 {
			errs = append(errs, fmt.Errorf("requests %s %s is more than its limit %s", name, req.String(), lim.String()))
		}
	}
	return rr, errors.Join(errs...)
}

// ParsePodTemplate decodes a pool's pod template (JSON, in Kubernetes'
// spelling: imagePullPolicy, nodeSelector, ...) strictly, and checks it
// as Validate does: where names where it is, e.g. "repos.yaml line 7:
// execution_pools.gpu.kubernetes".
func ParsePodTemplate(where string, raw []byte, defaultImage string) (PodTemplate, error) {
	var t PodTemplate
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return t, fmt.Errorf("%s: %s", where, strings.TrimPrefix(err.Error(), "json: "))
	}
	if err := t.Validate(defaultImage); err != nil {
		return t, fmt.Errorf("%s: %w", where, err)
	}
	return t, nil
}
