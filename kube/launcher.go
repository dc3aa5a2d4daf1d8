package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// Labels Atoll sets on its Jobs, their pods and their Secrets.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedBy      = "atoll"
	LabelJobID     = "atoll.dev/job-id"
	LabelAttempt   = "atoll.dev/attempt"
	LabelPool      = "atoll.dev/pool"
	LabelRepo      = "atoll.dev/repo"
	LabelPull      = "atoll.dev/pull"
	LabelProject   = "atoll.dev/project"
	// AnnotationRepo and AnnotationProject hold the full values the labels
	// shorten to a label value's rules.
	AnnotationRepo    = "atoll.dev/repo"
	AnnotationProject = "atoll.dev/project"
)

// The worker pod's layout.
const (
	ContainerName = "worker"
	TokenDir      = "/var/run/atoll"
	TokenKey      = "token"
	// UID is the image's atoll user (Dockerfile), the pod's user, group
	// and fsGroup: the token file is group-readable by it.
	UID = 10001
)

// DefaultScheduleTimeout is how long Watch waits for a pod no node can run
// before it reports the failure.
const DefaultScheduleTimeout = 5 * time.Minute

// Launcher creates, lists, follows and deletes the Kubernetes Jobs of Atoll
// jobs in one namespace.
type Launcher struct {
	Client    kubernetes.Interface
	Namespace string
	// Image is the worker image of templates that name none (Atoll's own).
	Image string
	// ScheduleTimeout is how long a pod may stay unschedulable before
	// Watch reports it failed (0: DefaultScheduleTimeout).
	ScheduleTimeout time.Duration
}

// Job is one attempt of an Atoll job to run on Kubernetes.
type Job struct {
	JobID   int64
	Attempt int
	Pool    string
	Repo    string
	Pull    int
	Project string
	// ServerURLs are the control plane's URLs (--server).
	ServerURLs []string
	// Token is the secret the pod's worker authenticates with; it is kept
	// in a Secret owned by the Job.
	Token    string
	Template PodTemplate
}

// Name is the Job's (and its Secret's) name: atoll-job-<id>-<attempt>.
func Name(jobID int64, attempt int) string {
	return fmt.Sprintf("atoll-job-%d-%d", jobID, attempt)
}

// labelValue shortens s to a label value: at most 63 of [A-Za-z0-9._-],
// beginning and ending with a letter or digit (others become '_').
func labelValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) > 63 {
		b = b[len(b)-63:] // the end of a path names it better than its host
	}
	return strings.TrimFunc(string(b), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	})
}

// selector is the label selector of one attempt's objects.
func selector(jobID int64, attempt int) string {
	return labels.SelectorFromSet(labels.Set{
		LabelManagedBy: ManagedBy,
		LabelJobID:     strconv.FormatInt(jobID, 10),
		LabelAttempt:   strconv.Itoa(attempt),
	}).String()
}

func (j Job) labels() map[string]string {
	return map[string]string{
		LabelManagedBy: ManagedBy,
		LabelJobID:     strconv.FormatInt(j.JobID, 10),
		LabelAttempt:   strconv.Itoa(j.Attempt),
		LabelPool:      labelValue(j.Pool),
		LabelRepo:      labelValue(j.Repo),
		LabelPull:      strconv.Itoa(j.Pull),
		LabelProject:   labelValue(j.Project),
	}
}

func (j Job) validate() error {
	var errs []error
	if j.JobID <= 0 {
		errs = append(errs, fmt.Errorf("job id %d: must be positive", j.JobID))
	}
	if j.Attempt < 0 {
		errs = append(errs, fmt.Errorf("attempt %d: must not be negative", j.Attempt))
	}
	if j.Pool == "" {
		errs = append(errs, errors.New("pool: empty"))
	}
	if len(j.ServerURLs) == 0 {
		errs = append(errs, errors.New("server URLs: none"))
	}
	if j.Token == "" {
		errs = append(errs, errors.New("token: empty"))
	}
	return errors.Join(errs...)
}

// args is the worker's command line.
func (j Job) args() []string {
	args := []string{"worker", "--once",
		"--server", strings.Join(j.ServerURLs, ","),
		"--pool", j.Pool,
		"--token-file", TokenDir + "/" + TokenKey,
	}
	return append(args, j.Template.ExtraArgs...)
}

// manifest is the Job of j (image already defaulted).
func (l *Launcher) manifest(j Job, image string) (*batchv1.Job, error) {
	t := j.Template
	res, err := t.resources()
	if err != nil {
		return nil, err
	}
	name := Name(j.JobID, j.Attempt)
	lbl := j.labels()
	podLabels := map[string]string{}
	for k, v := range t.Labels {
		podLabels[k] = v
	}
	for k, v := range lbl {
		podLabels[k] = v
	}
	annotations := map[string]string{AnnotationRepo: j.Repo, AnnotationProject: j.Project}
	podAnnotations := map[string]string{}
	for k, v := range t.Annotations {
		podAnnotations[k] = v
	}
	var env []corev1.EnvVar
	env = append(env, corev1.EnvVar{Name: "ATOLL_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}}})
	for _, e := range t.Env {
		env = append(env, corev1.EnvVar{Name: e.Name, Value: e.Value})
	}
	var envFrom []corev1.EnvFromSource
	for _, s := range t.EnvFromSecrets {
		envFrom = append(envFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: s}}})
	}
	ttl := int32(DefaultTTLSecondsAfterFinished)
	if t.TTLSecondsAfterFinished != nil {
		ttl = *t.TTLSecondsAfterFinished
	}
	var deadline *int64
	if t.ActiveDeadlineSeconds > 0 {
		deadline = ptr(t.ActiveDeadlineSeconds)
	}
	uid := int64(UID)
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.Namespace, Labels: podLabels, Annotations: annotations},
		Spec: batchv1.JobSpec{
			BackoffLimit:            ptr(int32(0)), // Atoll decides what runs again
			Completions:             ptr(int32(1)),
			Parallelism:             ptr(int32(1)),
			ActiveDeadlineSeconds:   deadline,
			TTLSecondsAfterFinished: &ttl,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: podAnnotations},
				Spec: corev1.PodSpec{
					RestartPolicy:                corev1.RestartPolicyNever,
					ServiceAccountName:           t.ServiceAccountName,
					AutomountServiceAccountToken: ptr(t.ServiceAccountName != ""),
					EnableServiceLinks:           ptr(false),
					NodeSelector:                 t.NodeSelector,
					Tolerations:                  t.Tolerations,
					Affinity:                     t.Affinity,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   ptr(true),
						RunAsUser:      &uid,
						RunAsGroup:     &uid,
						FSGroup:        &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:            ContainerName,
						Image:           image,
						ImagePullPolicy: corev1.PullPolicy(t.ImagePullPolicy),
						Command:         t.Command,
						Args:            j.args(),
						Env:             env,
						EnvFrom:         envFrom,
						Resources:       res,
						VolumeMounts: []corev1.VolumeMount{
							{Name: "atoll-token", MountPath: TokenDir, ReadOnly: true},
							{Name: "data", MountPath: "/data"},
						},
						SecurityContext: &corev1.SecurityContext{
							RunAsNonRoot:             ptr(true),
							Privileged:               ptr(false),
							AllowPrivilegeEscalation: ptr(false),
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile:           &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
						TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
					}},
					Volumes: []corev1.Volume{
						{Name: "atoll-token", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
							SecretName:  name,
							Items:       []corev1.KeyToPath{{Key: TokenKey, Path: TokenKey}},
							DefaultMode: ptr(int32(0o440)),
						}}},
						{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
					},
				},
			},
		},
	}, nil
}

func ptr[T any](v T) *T { return &v }

// ours reports whether an object's labels are those of j's attempt.
func ours(obj metav1.Object, jobID int64, attempt int) bool {
	l := obj.GetLabels()
	return l[LabelManagedBy] == ManagedBy && l[LabelJobID] == strconv.FormatInt(jobID, 10) && l[LabelAttempt] == strconv.Itoa(attempt)
}

// Launch creates j's Secret (its token) and Job, and makes the Job own the
// Secret, so that deleting the Job deletes it. It is idempotent: a Job of
// the same attempt that exists already (another node launched it) is
// success, and its Secret is left as it is.
func (l *Launcher) Launch(ctx context.Context, j Job) error {
	image := j.Template.Image
	if image == "" {
		image = l.Image
	}
	if err := errors.Join(j.validate(), j.Template.Validate(l.Image)); err != nil {
		return fmt.Errorf("launch job %d attempt %d: %w", j.JobID, j.Attempt, err)
	}
	manifest, err := l.manifest(j, image)
	if err != nil {
		return fmt.Errorf("launch job %d attempt %d: %w", j.JobID, j.Attempt, err)
	}
	name := manifest.Name
	secrets := l.Client.CoreV1().Secrets(l.Namespace)
	jobs := l.Client.BatchV1().Jobs(l.Namespace)

	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.Namespace, Labels: j.labels()},
		Type:       corev1.SecretTypeOpaque,
		Data:       map[string][]byte{TokenKey: []byte(j.Token)},
	}
	created, err := secrets.Create(ctx, secret, metav1.CreateOptions{})
	switch {
	case err == nil:
		secret = created
	case apierrors.IsAlreadyExists(err):
		// A launch that stopped half-way, or another node's.
		if secret, err = secrets.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("launch %s: read its secret: %w", name, err)
		}
		if !ours(secret, j.JobID, j.Attempt) {
			return fmt.Errorf("launch %s: a Secret of that name exists that Atoll did not make for this job", name)
		}
		if len(secret.OwnerReferences) == 0 && string(secret.Data[TokenKey]) != j.Token {
			// No Job has read it yet (it would own it): this launch's token.
			if _, err := jobs.Get(ctx, name, metav1.GetOptions{}); apierrors.IsNotFound(err) {
				secret.Data = map[string][]byte{TokenKey: []byte(j.Token)}
				if secret, err = secrets.Update(ctx, secret, metav1.UpdateOptions{}); err != nil {
					return fmt.Errorf("launch %s: update its secret: %w", name, err)
				}
			} else if err != nil {
				return fmt.Errorf("launch %s: %w", name, err)
			}
		}
	default:
		return fmt.Errorf("launch %s: create its secret: %w", name, err)
	}

	job, err := jobs.Create(ctx, manifest, metav1.CreateOptions{})
	switch {
	case err == nil:
	case apierrors.IsAlreadyExists(err):
		if job, err = jobs.Get(ctx, name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("launch %s: read the existing Job: %w", name, err)
		}
		if !ours(job, j.JobID, j.Attempt) {
			return fmt.Errorf("launch %s: a Job of that name exists that Atoll did not launch for this job", name)
		}
	default:
		if len(secret.OwnerReferences) == 0 {
			// Best effort: the Secret would outlive a Job never made.
			_ = secrets.Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &secret.UID}})
		}
		return fmt.Errorf("launch %s: create the Job: %w", name, err)
	}
	return l.own(ctx, secret, job)
}

// own makes job the owner of secret. BlockOwnerDeletion stays unset: it
// would need the update verb on jobs/finalizers.
func (l *Launcher) own(ctx context.Context, secret *corev1.Secret, job *batchv1.Job) error {
	ref := metav1.OwnerReference{APIVersion: "batch/v1", Kind: "Job", Name: job.Name, UID: job.UID}
	secrets := l.Client.CoreV1().Secrets(l.Namespace)
	for range 3 {
		if slices.ContainsFunc(secret.OwnerReferences, func(r metav1.OwnerReference) bool { return r.UID == job.UID }) {
			return nil
		}
		secret.OwnerReferences = append(secret.OwnerReferences, ref)
		_, err := secrets.Update(ctx, secret, metav1.UpdateOptions{})
		if err == nil {
			return nil
		}
		if !apierrors.IsConflict(err) {
			return fmt.Errorf("launch %s: make the Job own its secret: %w", job.Name, err)
		}
		if secret, err = secrets.Get(ctx, secret.Name, metav1.GetOptions{}); err != nil {
			return fmt.Errorf("launch %s: make the Job own its secret: %w", job.Name, err)
		}
	}
	return fmt.Errorf("launch %s: make the Job own its secret: conflicts", job.Name)
}

// Delete deletes an attempt's Job in the foreground: its pod first, then
// it and its Secret. A Job that does not exist is success.
func (l *Launcher) Delete(ctx context.Context, jobID int64, attempt int) error {
	name := Name(jobID, attempt)
	err := l.Client.BatchV1().Jobs(l.Namespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: ptr(metav1.DeletePropagationForeground)})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}

// Exists reports whether an attempt's Job exists and is not being
// deleted.
func (l *Launcher) Exists(ctx context.Context, jobID int64, attempt int) (bool, error) {
	name := Name(jobID, attempt)
	job, err := l.Client.BatchV1().Jobs(l.Namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("read %s: %w", name, err)
	}
	return ours(job, jobID, attempt) && job.DeletionTimestamp == nil, nil
}

// Launched is a Job Atoll launched, as List reads it.
type Launched struct {
	Name    string
	JobID   int64
	Attempt int
	Pool    string
	Repo    string // the full name (annotation)
	Pull    int
	Project string
	// State is Running while the Job is active, Succeeded or Failed once
	// it finished.
	State    State
	Deleting bool // it has a deletionTimestamp
	Created  time.Time
}

// List is the Jobs the launcher manages in its namespace, oldest first:
// what a restarted or new active node adopts instead of launching again.
func (l *Launcher) List(ctx context.Context) ([]Launched, error) {
	list, err := l.Client.BatchV1().Jobs(l.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedBy}).String() + "," + LabelJobID + "," + LabelAttempt,
	})
	if err != nil {
		return nil, fmt.Errorf("list Atoll's Jobs: %w", err)
	}
	var out []Launched
	for _, j := range list.Items {
		id, err1 := strconv.ParseInt(j.Labels[LabelJobID], 10, 64)
		attempt, err2 := strconv.Atoi(j.Labels[LabelAttempt])
		if err1 != nil || err2 != nil {
			continue
		}
		pull, _ := strconv.Atoi(j.Labels[LabelPull])
		out = append(out, Launched{
			Name: j.Name, JobID: id, Attempt: attempt, Pool: j.Labels[LabelPool],
			Repo: j.Annotations[AnnotationRepo], Pull: pull, Project: j.Annotations[AnnotationProject],
			State: jobState(&j), Deleting: j.DeletionTimestamp != nil, Created: j.CreationTimestamp.Time,
		})
	}
	slices.SortFunc(out, func(a, b Launched) int {
		if c := a.Created.Compare(b.Created); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out, nil
}

func jobState(j *batchv1.Job) State {
	for _, c := range j.Status.Conditions {
		if c.Status != corev1.ConditionTrue {
			continue
		}
		switch c.Type {
		case batchv1.JobComplete:
			return Succeeded
		case batchv1.JobFailed:
			return Failed
		}
	}
	return Running
}
