// Package kubetest is a fake Kubernetes API server for client-go's typed
// clientset: an httptest.Server that speaks the real wire format (JSON and
// protobuf request bodies, JSON answers, metav1.Status errors, watch
// streams) for batch/v1 Jobs and v1 Pods, Secrets and Events, with a tiny
// Job controller whose pods' fate a test decides (Options.Run).
//
// It supports what Atoll's kube package uses and a little around it; it is
// no API server: no admission, no RBAC, no patch, no status subresources,
// one pod per Job and no retries (backoffLimit is kept, not acted on).
package kubetest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

// Request is one request the fake served, in RBAC's words: Verb is get,
// list, watch, create, update, patch or delete; Resource is jobs, pods,
// secrets or events; Subresource is "log" for pods/log.
type Request struct {
	Verb, Group, Resource, Subresource, Namespace string
}

// Options configures a Server.
type Options struct {
	// Run decides what happens to each pod the Job controller creates. It
	// is called in its own goroutine while the pod is Pending; see
	// PodOutcome and Server.Exec. Nil: every pod succeeds at once.
	Run func(pod *corev1.Pod) PodOutcome
	// TerminationDelay is how long a deleted pod stays (with a
	// deletionTimestamp) before it is gone: the time a foreground deletion
	// of its Job waits.
	TerminationDelay time.Duration
	// NodeName is where scheduled pods run (default "kubetest-node").
	NodeName string
	// Intercept, if set, is asked about each request before it is served:
	// an error (an *apierrors.StatusError for a given code) is answered
	// instead. The request is recorded either way.
	Intercept func(Request) error
}

// Server is the fake API server. Close it (New registers it with t.Cleanup).
type Server struct {
	*httptest.Server
	opts Options

	mu       sync.Mutex
	rv       int64
	objects  map[string]map[string]runtime.Object // resource → namespace/name → object
	history  []event                              // every change since compacted
	oldest   int64                                // watches from before this get 410
	changed  chan struct{}                        // closed and replaced on each change
	closing  chan struct{}                        // closed by Close
	drop     chan struct{}                        // closed and replaced by DropWatches
	recorded []Request
	unknown  []string
	runs     map[types.UID]*podRun
	wg       sync.WaitGroup
	closed   bool
}

type event struct {
	rv       int64
	resource string
	typ      watch.EventType
	obj      runtime.Object
}

// kinds is what the fake serves, by resource.
var kinds = map[string]struct {
	group, version, kind string
	newObj               func() runtime.Object
	newList              func() runtime.Object
}{
	"jobs":    {"batch", "v1", "Job", func() runtime.Object { return &batchv1.Job{} }, func() runtime.Object { return &batchv1.JobList{} }},
	"pods":    {"", "v1", "Pod", func() runtime.Object { return &corev1.Pod{} }, func() runtime.Object { return &corev1.PodList{} }},
	"secrets": {"", "v1", "Secret", func() runtime.Object { return &corev1.Secret{} }, func() runtime.Object { return &corev1.SecretList{} }},
	"events":  {"", "v1", "Event", func() runtime.Object { return &corev1.Event{} }, func() runtime.Object { return &corev1.EventList{} }},
}

// New starts a fake API server, closed when the test ends.
func New(t testing.TB, opts Options) *Server {
	if opts.NodeName == "" {
		opts.NodeName = "kubetest-node"
	}
	s := &Server{
		// An empty store's list has a resourceVersion a watch can start
		// from, as etcd's revision is never 0 ("0" means "any": the
		// current state).
		rv:      1,
		opts:    opts,
		objects: map[string]map[string]runtime.Object{},
		changed: make(chan struct{}),
		drop:    make(chan struct{}),
		closing: make(chan struct{}),
		runs:    map[types.UID]*podRun{},
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Close stops the server, its watches and its pods' processes.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.closing)
	close(s.drop)
	s.drop = make(chan struct{})
	for _, r := range s.runs {
		r.kill()
	}
	s.mu.Unlock()
	s.Server.CloseClientConnections()
	s.Server.Close()
	s.wg.Wait()
}

// Config is a client configuration for the server, without client-go's
// default rate limit (5 requests a second, bursts of 10), which would make
// tests slow and timings flaky.
func (s *Server) Config() *rest.Config { return &rest.Config{Host: s.URL, QPS: 1000, Burst: 1000} }

// Client is a typed clientset talking to the server.
func (s *Server) Client() kubernetes.Interface {
	c, err := kubernetes.NewForConfig(s.Config())
	if err != nil {
		panic(err)
	}
	return c
}

// Recorded is every request served so far, in order.
func (s *Server) Recorded() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.recorded)
}

// UnknownFields is every unknown field a JSON request body had: the real
// server accepts them with a warning (or refuses them with
// fieldValidation=Strict); the fake accepts them and records them here.
func (s *Server) UnknownFields() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.unknown)
}

// Compact forgets the history: a watch from a resourceVersion before now
// gets a 410 Gone (an ERROR event with a Status of code 410), as after an
// etcd compaction.
func (s *Server) Compact() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = nil
	s.oldest = s.rv + 1
}

// DropWatches ends every open watch stream, as an API server restart or a
// load balancer's idle timeout would.
func (s *Server) DropWatches() {
	s.mu.Lock()
	defer s.mu.Unlock()
	close(s.drop)
	s.drop = make(chan struct{})
}

// Object is a copy of the stored object (nil if there is none).
func (s *Server) Object(resource, namespace, name string) runtime.Object {
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[resource][namespace+"/"+name]
	if o == nil {
		return nil
	}
	return o.DeepCopyObject()
}

// Pods is a copy of the stored pods of namespace.
func (s *Server) Pods(namespace string) []*corev1.Pod {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*corev1.Pod
	for _, o := range s.objects["pods"] {
		if p := o.(*corev1.Pod); p.Namespace == namespace {
			out = append(out, p.DeepCopy())
		}
	}
	slices.SortFunc(out, func(a, b *corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// --- HTTP ---

type route struct {
	group, resource, namespace, name, sub string
}

// parsePath reads /api/v1/[namespaces/NS/]RES[/NAME[/SUB]] and
// /apis/batch/v1/[namespaces/NS/]RES[/NAME[/SUB]].
func parsePath(p string) (route, bool) {
	parts := strings.Split(strings.Trim(p, "/"), "/")
	var r route
	switch {
	case len(parts) >= 3 && parts[0] == "api" && parts[1] == "v1":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis" && parts[1] == "batch" && parts[2] == "v1":
		r.group = "batch"
		parts = parts[3:]
	default:
		return r, false
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		r.namespace = parts[1]
		parts = parts[2:]
	}
	if len(parts) == 0 || len(parts) > 3 {
		return r, false
	}
	r.resource = parts[0]
	if len(parts) > 1 {
		r.name = parts[1]
	}
	if len(parts) > 2 {
		r.sub = parts[2]
	}
	k, ok := kinds[r.resource]
	if !ok || k.group != r.group {
		return r, false
	}
	return r, true
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	r, ok := parsePath(req.URL.Path)
	if !ok {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{}, req.URL.Path))
		return
	}
	q := req.URL.Query()
	verb := ""
	switch req.Method {
	case http.MethodGet:
		switch {
		case r.name != "":
			verb = "get"
		case q.Get("watch") == "true" || q.Get("watch") == "1":
			verb = "watch"
		default:
			verb = "list"
		}
	case http.MethodPost:
		verb = "create"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
		if r.name == "" {
			verb = "deletecollection"
		}
	}
	s.mu.Lock()
	s.recorded = append(s.recorded, Request{Verb: verb, Group: r.group, Resource: r.resource, Subresource: r.sub, Namespace: r.namespace})
	drop := s.drop // a watch recorded before DropWatches is dropped by it
	s.mu.Unlock()
	if s.opts.Intercept != nil {
		if err := s.opts.Intercept(Request{Verb: verb, Group: r.group, Resource: r.resource, Subresource: r.sub, Namespace: r.namespace}); err != nil {
			writeStatus(w, err)
			return
		}
	}
	gr := schema.GroupResource{Group: r.group, Resource: r.resource}
	if r.sub != "" && !(r.resource == "pods" && r.sub == "log" && verb == "get") {
		writeStatus(w, apierrors.NewMethodNotSupported(gr, verb+" "+r.sub))
		return
	}
	if (verb == "create" || verb == "update" || verb == "delete" || verb == "get") && r.namespace == "" {
		writeStatus(w, apierrors.NewBadRequest("the fake serves namespaced resources only: a namespace is required"))
		return
	}
	switch verb {
	case "get":
		if r.sub == "log" {
			s.podLog(w, r)
			return
		}
		s.get(w, r)
	case "list":
		s.list(w, r, q)
	case "watch":
		s.watch(w, req, r, q, drop)
	case "create":
		s.create(w, req, r)
	case "update":
		s.update(w, req, r)
	case "delete":
		s.delete(w, req, r, q)
	default:
		writeStatus(w, apierrors.NewMethodNotSupported(gr, verb))
	}
}

// writeStatus answers err as the API server does: a metav1.Status with its
// code (an error that is not an API status is a 500 InternalError).
func writeStatus(w http.ResponseWriter, err error) {
	se, ok := err.(*apierrors.StatusError)
	if !ok {
		se = apierrors.NewInternalError(err)
	}
	status := statusOf(se)
	writeJSON(w, int(status.Code), status)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(b)
}

// decode reads a request body in JSON or protobuf into into, recording
// unknown JSON fields.
func (s *Server) decode(req *http.Request, into runtime.Object) error {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	ct := req.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "application/json") || ct == "" {
		strict := kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, kjson.SerializerOptions{Strict: true})
		_, _, err := strict.Decode(body, nil, into)
		if err != nil && runtime.IsStrictDecodingError(err) {
			s.mu.Lock()
			s.unknown = append(s.unknown, err.Error())
			s.mu.Unlock()
			return nil
		}
		if err != nil {
			return apierrors.NewBadRequest(err.Error())
		}
		return nil
	}
	if _, _, err := scheme.Codecs.UniversalDeserializer().Decode(body, nil, into); err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	return nil
}

// --- storage (s.mu held) ---

func key(o metav1.Object) string { return o.GetNamespace() + "/" + o.GetName() }

func (s *Server) put(resource string, typ watch.EventType, obj runtime.Object) {
	s.rv++
	acc := mustAccessor(obj)
	acc.SetResourceVersion(strconv.FormatInt(s.rv, 10))
	setTypeMeta(resource, obj)
	if s.objects[resource] == nil {
		s.objects[resource] = map[string]runtime.Object{}
	}
	if typ == watch.Deleted {
		delete(s.objects[resource], key(acc))
	} else {
		s.objects[resource][key(acc)] = obj
	}
	s.history = append(s.history, event{rv: s.rv, resource: resource, typ: typ, obj: obj.DeepCopyObject()})
	close(s.changed)
	s.changed = make(chan struct{})
}

func mustAccessor(obj runtime.Object) metav1.Object {
	acc, err := meta.Accessor(obj)
	if err != nil {
		panic(err)
	}
	return acc
}

func setTypeMeta(resource string, obj runtime.Object) {
	k := kinds[resource]
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: k.group, Version: k.version, Kind: k.kind})
}

// stamp sets what the server sets on a new object.
func (s *Server) stamp(resource string, acc metav1.Object) {
	acc.SetUID(uuid.NewUUID())
	acc.SetCreationTimestamp(metav1.Now())
	if resource == "jobs" {
		acc.SetGeneration(1)
	}
	acc.SetDeletionTimestamp(nil)
}

const nameChars = "bcdfghjklmnpqrstvwxz2456789"

func (s *Server) generateName(resource string, acc metav1.Object) {
	if acc.GetName() != "" || acc.GetGenerateName() == "" {
		return
	}
	for {
		b := make([]byte, 5)
		for i := range b {
			b[i] = nameChars[rand.IntN(len(nameChars))]
		}
		name := acc.GetGenerateName() + string(b)
		if s.objects[resource][acc.GetNamespace()+"/"+name] == nil {
			acc.SetName(name)
			return
		}
	}
}

// --- verbs ---

func (s *Server) get(w http.ResponseWriter, r route) {
	s.mu.Lock()
	o := s.objects[r.resource][r.namespace+"/"+r.name]
	if o != nil {
		o = o.DeepCopyObject()
	}
	s.mu.Unlock()
	if o == nil {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Group: r.group, Resource: r.resource}, r.name))
		return
	}
	writeJSON(w, http.StatusOK, o)
}

// selector is a list or watch's label and field selectors.
type selector struct {
	namespace string
	labels    labels.Selector
	fields    fields.Selector
}

func parseSelector(r route, q map[string][]string) (selector, error) {
	sel := selector{namespace: r.namespace, labels: labels.Everything(), fields: fields.Everything()}
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	var err error
	if ls := get("labelSelector"); ls != "" {
		if sel.labels, err = labels.Parse(ls); err != nil {
			return sel, apierrors.NewBadRequest(fmt.Sprintf("unable to parse requirement: %v", err))
		}
	}
	if fs := get("fieldSelector"); fs != "" {
		if sel.fields, err = fields.ParseSelector(fs); err != nil {
			return sel, apierrors.NewBadRequest(err.Error())
		}
		for _, req := range sel.fields.Requirements() {
			if !slices.Contains(fieldsOf(r.resource), req.Field) {
				return sel, apierrors.NewBadRequest(fmt.Sprintf("%q is not a known field selector: only %q", req.Field, fieldsOf(r.resource)))
			}
		}
	}
	return sel, nil
}

func fieldsOf(resource string) []string {
	base := []string{"metadata.name", "metadata.namespace"}
	switch resource {
	case "pods":
		return append(base, "spec.nodeName", "status.phase")
	case "events":
		return append(base, "involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "involvedObject.uid", "reason", "type")
	}
	return base
}

func (sel selector) matches(obj runtime.Object) bool {
	acc := mustAccessor(obj)
	if sel.namespace != "" && acc.GetNamespace() != sel.namespace {
		return false
	}
	if !sel.labels.Matches(labels.Set(acc.GetLabels())) {
		return false
	}
	f := fields.Set{"metadata.name": acc.GetName(), "metadata.namespace": acc.GetNamespace()}
	switch o := obj.(type) {
	case *corev1.Pod:
		f["spec.nodeName"], f["status.phase"] = o.Spec.NodeName, string(o.Status.Phase)
	case *corev1.Event:
		f["involvedObject.kind"], f["involvedObject.name"] = o.InvolvedObject.Kind, o.InvolvedObject.Name
		f["involvedObject.namespace"], f["involvedObject.uid"] = o.InvolvedObject.Namespace, string(o.InvolvedObject.UID)
		f["reason"], f["type"] = o.Reason, o.Type
	}
	return sel.fields.Matches(f)
}

func (s *Server) list(w http.ResponseWriter, r route, q map[string][]string) {
	sel, err := parseSelector(r, q)
	if err != nil {
		writeStatus(w, err)
		return
	}
	s.mu.Lock()
	var items []runtime.Object
	for _, o := range s.objects[r.resource] {
		if sel.matches(o) {
			items = append(items, o.DeepCopyObject())
		}
	}
	rv := strconv.FormatInt(s.rv, 10)
	s.mu.Unlock()
	slices.SortFunc(items, func(a, b runtime.Object) int {
		return strings.Compare(key(mustAccessor(a)), key(mustAccessor(b)))
	})
	list := kinds[r.resource].newList()
	if err := meta.SetList(list, items); err != nil {
		writeStatus(w, err)
		return
	}
	la, _ := meta.ListAccessor(list)
	la.SetResourceVersion(rv)
	k := kinds[r.resource]
	list.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{Group: k.group, Version: k.version, Kind: k.kind + "List"})
	writeJSON(w, http.StatusOK, list)
}

func (s *Server) create(w http.ResponseWriter, req *http.Request, r route) {
	gr := schema.GroupResource{Group: r.group, Resource: r.resource}
	obj := kinds[r.resource].newObj()
	if err := s.decode(req, obj); err != nil {
		writeStatus(w, err)
		return
	}
	acc := mustAccessor(obj)
	if acc.GetNamespace() == "" {
		acc.SetNamespace(r.namespace)
	}
	if acc.GetNamespace() != r.namespace {
		writeStatus(w, apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request"))
		return
	}
	normalize(obj)
	s.mu.Lock()
	s.generateName(r.resource, acc)
	if err := validate(r.resource, obj); err != nil {
		s.mu.Unlock()
		writeStatus(w, err)
		return
	}
	if s.objects[r.resource][key(acc)] != nil {
		s.mu.Unlock()
		writeStatus(w, apierrors.NewAlreadyExists(gr, acc.GetName()))
		return
	}
	s.stamp(r.resource, acc)
	if j, ok := obj.(*batchv1.Job); ok {
		defaultJob(j)
	}
	s.put(r.resource, watch.Added, obj)
	s.orphaned(r.resource, obj)
	out := obj.DeepCopyObject()
	if j, ok := obj.(*batchv1.Job); ok {
		s.startJob(j.DeepCopy())
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) update(w http.ResponseWriter, req *http.Request, r route) {
	gr := schema.GroupResource{Group: r.group, Resource: r.resource}
	obj := kinds[r.resource].newObj()
	if err := s.decode(req, obj); err != nil {
		writeStatus(w, err)
		return
	}
	acc := mustAccessor(obj)
	if acc.GetNamespace() == "" {
		acc.SetNamespace(r.namespace)
	}
	if acc.GetName() != r.name || acc.GetNamespace() != r.namespace {
		writeStatus(w, apierrors.NewBadRequest("the name or namespace of the object does not match the request's"))
		return
	}
	normalize(obj)
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.objects[r.resource][key(acc)]
	if old == nil {
		writeStatus(w, apierrors.NewNotFound(gr, r.name))
		return
	}
	oldAcc := mustAccessor(old)
	if rv := acc.GetResourceVersion(); rv != "" && rv != oldAcc.GetResourceVersion() {
		writeStatus(w, apierrors.NewConflict(gr, r.name, fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again")))
		return
	}
	if err := validate(r.resource, obj); err != nil {
		writeStatus(w, err)
		return
	}
	// What the server owns stays the server's.
	acc.SetUID(oldAcc.GetUID())
	acc.SetCreationTimestamp(oldAcc.GetCreationTimestamp())
	acc.SetDeletionTimestamp(oldAcc.GetDeletionTimestamp())
	acc.SetGeneration(oldAcc.GetGeneration())
	switch o := obj.(type) {
	case *batchv1.Job:
		oj := old.(*batchv1.Job)
		o.Status = *oj.Status.DeepCopy()
		o.Spec.Selector, o.Spec.Template.Labels = oj.Spec.Selector, oj.Spec.Template.Labels
		if !equalJSON(o.Spec, oj.Spec) {
			o.Generation++
		}
	case *corev1.Pod:
		o.Status = *old.(*corev1.Pod).Status.DeepCopy()
	}
	s.put(r.resource, watch.Modified, obj)
	s.orphaned(r.resource, obj)
	writeJSON(w, http.StatusOK, obj.DeepCopyObject())
}

// normalize is what the server does to a written object: a Secret's
// stringData is merged into its data.
func normalize(obj runtime.Object) {
	if sec, ok := obj.(*corev1.Secret); ok && len(sec.StringData) > 0 {
		if sec.Data == nil {
			sec.Data = map[string][]byte{}
		}
		for k, v := range sec.StringData {
			sec.Data[k] = []byte(v)
		}
		sec.StringData = nil
	}
}

func equalJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func validate(resource string, obj runtime.Object) error {
	acc := mustAccessor(obj)
	k := kinds[resource]
	gk := schema.GroupKind{Group: k.group, Kind: k.kind}
	var errs field.ErrorList
	if acc.GetName() == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "name"), "name or generateName is required"))
	} else {
		for _, msg := range validation.IsDNS1123Subdomain(acc.GetName()) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), acc.GetName(), msg))
		}
	}
	for k, v := range acc.GetLabels() {
		for _, msg := range validation.IsQualifiedName(k) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels"), k, msg))
		}
		for _, msg := range validation.IsValidLabelValue(v) {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "labels"), v, msg))
		}
	}
	if j, ok := obj.(*batchv1.Job); ok {
		if len(j.Name) > 63 {
			errs = append(errs, field.Invalid(field.NewPath("metadata", "name"), j.Name, "must be no more than 63 characters (it is the job-name label's value)"))
		}
		p := field.NewPath("spec", "template", "spec")
		ps := j.Spec.Template.Spec
		if ps.RestartPolicy != corev1.RestartPolicyNever && ps.RestartPolicy != corev1.RestartPolicyOnFailure {
			errs = append(errs, field.NotSupported(p.Child("restartPolicy"), ps.RestartPolicy, []string{"OnFailure", "Never"}))
		}
		if len(ps.Containers) == 0 {
			errs = append(errs, field.Required(p.Child("containers"), ""))
		}
		for i, c := range ps.Containers {
			if c.Image == "" {
				errs = append(errs, field.Required(p.Child("containers").Index(i).Child("image"), ""))
			}
			if c.Name == "" {
				errs = append(errs, field.Required(p.Child("containers").Index(i).Child("name"), ""))
			}
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(gk, acc.GetName(), errs)
	}
	return nil
}

func defaultJob(j *batchv1.Job) {
	one := int32(1)
	if j.Spec.Parallelism == nil {
		j.Spec.Parallelism = &one
	}
	if j.Spec.Completions == nil {
		j.Spec.Completions = &one
	}
	if j.Spec.BackoffLimit == nil {
		six := int32(6)
		j.Spec.BackoffLimit = &six
	}
	if j.Spec.CompletionMode == nil {
		m := batchv1.NonIndexedCompletion
		j.Spec.CompletionMode = &m
	}
	if j.Spec.Suspend == nil {
		f := false
		j.Spec.Suspend = &f
	}
	uid := string(j.UID)
	ctl := map[string]string{"batch.kubernetes.io/controller-uid": uid}
	j.Spec.Selector = &metav1.LabelSelector{MatchLabels: ctl}
	l := map[string]string{}
	for k, v := range j.Spec.Template.Labels {
		l[k] = v
	}
	l["batch.kubernetes.io/controller-uid"], l["controller-uid"] = uid, uid
	l["batch.kubernetes.io/job-name"], l["job-name"] = j.Name, j.Name
	j.Spec.Template.Labels = l
	if j.Spec.Template.Spec.TerminationGracePeriodSeconds == nil {
		g := int64(30)
		j.Spec.Template.Spec.TerminationGracePeriodSeconds = &g
	}
}

// delete removes an object, honouring propagationPolicy for Jobs: Orphan
// (batch/v1's default) leaves the dependents, Background removes the Job
// then its dependents, Foreground keeps the Job (deletionTimestamp, the
// foregroundDeletion finalizer) until its dependents are gone.
func (s *Server) delete(w http.ResponseWriter, req *http.Request, r route, q map[string][]string) {
	gr := schema.GroupResource{Group: r.group, Resource: r.resource}
	var opts metav1.DeleteOptions
	if req.ContentLength != 0 {
		if err := s.decode(req, &opts); err != nil {
			writeStatus(w, err)
			return
		}
	}
	if p := q["propagationPolicy"]; len(p) > 0 && opts.PropagationPolicy == nil {
		pp := metav1.DeletionPropagation(p[0])
		opts.PropagationPolicy = &pp
	}
	policy := metav1.DeletePropagationOrphan
	if r.resource != "jobs" {
		policy = metav1.DeletePropagationBackground
	}
	if opts.PropagationPolicy != nil {
		policy = *opts.PropagationPolicy
	}
	//lint:ignore SA1019 deprecated, yet the real API server still honours it, and old clients send it
	if opts.OrphanDependents != nil && !*opts.OrphanDependents {
		policy = metav1.DeletePropagationBackground
	}
	switch policy {
	case metav1.DeletePropagationOrphan, metav1.DeletePropagationBackground, metav1.DeletePropagationForeground:
	default:
		writeStatus(w, apierrors.NewBadRequest(fmt.Sprintf("unsupported propagationPolicy %q", policy)))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	o := s.objects[r.resource][r.namespace+"/"+r.name]
	if o == nil {
		writeStatus(w, apierrors.NewNotFound(gr, r.name))
		return
	}
	acc := mustAccessor(o)
	if opts.Preconditions != nil && opts.Preconditions.UID != nil && *opts.Preconditions.UID != acc.GetUID() {
		writeStatus(w, apierrors.NewConflict(gr, r.name, fmt.Errorf("the UID in the precondition (%s) does not match the UID in record (%s)", *opts.Preconditions.UID, acc.GetUID())))
		return
	}
	switch {
	case r.resource == "pods":
		s.deletePod(o.(*corev1.Pod))
	case policy == metav1.DeletePropagationForeground:
		if acc.GetDeletionTimestamp() == nil {
			o = o.DeepCopyObject()
			acc = mustAccessor(o)
			now := metav1.Now()
			acc.SetDeletionTimestamp(&now)
			acc.SetFinalizers(append(acc.GetFinalizers(), metav1.FinalizerDeleteDependents))
			s.put(r.resource, watch.Modified, o)
			s.collect(acc.GetUID(), acc.GetNamespace(), func() {
				if cur := s.objects[r.resource][r.namespace+"/"+r.name]; cur != nil && mustAccessor(cur).GetUID() == acc.GetUID() {
					s.put(r.resource, watch.Deleted, cur.DeepCopyObject())
				}
			})
		}
		writeJSON(w, http.StatusOK, o.DeepCopyObject())
		return
	case policy == metav1.DeletePropagationBackground:
		s.put(r.resource, watch.Deleted, o.DeepCopyObject())
		s.collect(acc.GetUID(), acc.GetNamespace(), nil)
	default:
		s.put(r.resource, watch.Deleted, o.DeepCopyObject())
		s.orphan(acc.GetUID(), acc.GetNamespace())
	}
	writeJSON(w, http.StatusOK, &metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusSuccess,
		Details: &metav1.StatusDetails{Name: r.name, Group: r.group, Kind: r.resource, UID: acc.GetUID()}})
}

// owned is the objects of namespace with an ownerReference to uid.
func (s *Server) owned(uid types.UID, namespace string) (out []struct {
	resource string
	obj      runtime.Object
}) {
	for res, objs := range s.objects {
		for _, o := range objs {
			acc := mustAccessor(o)
			if acc.GetNamespace() != namespace {
				continue
			}
			for _, ref := range acc.GetOwnerReferences() {
				if ref.UID == uid {
					out = append(out, struct {
						resource string
						obj      runtime.Object
					}{res, o})
					break
				}
			}
		}
	}
	return out
}

// collect deletes the dependents of uid as the garbage collector does, then
// calls done (s.mu held) once they are all gone.
func (s *Server) collect(uid types.UID, namespace string, done func()) {
	for _, d := range s.owned(uid, namespace) {
		if p, ok := d.obj.(*corev1.Pod); ok {
			s.deletePod(p)
		} else {
			s.put(d.resource, watch.Deleted, d.obj.DeepCopyObject())
		}
	}
	if done == nil {
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			s.mu.Lock()
			owned := s.owned(uid, namespace)
			if s.closed || len(owned) == 0 {
				if !s.closed {
					done()
				}
				s.mu.Unlock()
				return
			}
			// A dependent made while its owner is being deleted (an owner
			// reference set meanwhile) is deleted too, as the real
			// collector does: otherwise the owner would wait forever.
			for _, d := range owned {
				if p, ok := d.obj.(*corev1.Pod); ok {
					if p.DeletionTimestamp == nil {
						s.deletePod(p)
					}
				} else if mustAccessor(d.obj).GetDeletionTimestamp() == nil {
					s.put(d.resource, watch.Deleted, d.obj.DeepCopyObject())
				}
			}
			ch := s.changed
			s.mu.Unlock()
			select {
			case <-ch:
			case <-s.closing:
			}
		}
	}()
}

// orphan removes the ownerReferences to uid.
func (s *Server) orphan(uid types.UID, namespace string) {
	for _, d := range s.owned(uid, namespace) {
		o := d.obj.DeepCopyObject()
		acc := mustAccessor(o)
		acc.SetOwnerReferences(slices.DeleteFunc(acc.GetOwnerReferences(), func(r metav1.OwnerReference) bool { return r.UID == uid }))
		s.put(d.resource, watch.Modified, o)
	}
}

// deletePod stops the pod's run and removes it after TerminationDelay.
func (s *Server) deletePod(p *corev1.Pod) {
	if r := s.runs[p.UID]; r != nil {
		r.kill()
	}
	if p.DeletionTimestamp != nil {
		return
	}
	if s.opts.TerminationDelay <= 0 {
		s.put("pods", watch.Deleted, p.DeepCopy())
		return
	}
	p = p.DeepCopy()
	now := metav1.Now()
	p.DeletionTimestamp = &now
	s.put("pods", watch.Modified, p)
	uid, k := p.UID, key(p)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-time.After(s.opts.TerminationDelay):
		case <-s.closing:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if cur := s.objects["pods"][k]; cur != nil && mustAccessor(cur).GetUID() == uid && !s.closed {
			s.put("pods", watch.Deleted, cur.DeepCopyObject())
		}
	}()
}

func (s *Server) podLog(w http.ResponseWriter, r route) {
	s.mu.Lock()
	o := s.objects["pods"][r.namespace+"/"+r.name]
	var log string
	if o != nil {
		if run := s.runs[mustAccessor(o).GetUID()]; run != nil {
			log = run.log.String()
		}
	}
	s.mu.Unlock()
	if o == nil {
		writeStatus(w, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, r.name))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusOK)
	w.Write([]byte(log))
}

// --- watch ---

func (s *Server) watch(w http.ResponseWriter, req *http.Request, r route, q map[string][]string, drop chan struct{}) {
	sel, err := parseSelector(r, q)
	if err != nil {
		writeStatus(w, err)
		return
	}
	get := func(k string) string {
		if v := q[k]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	ctx := req.Context()
	if ts := get("timeoutSeconds"); ts != "" {
		n, _ := strconv.Atoi(ts)
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(n)*time.Second)
		defer cancel()
	}
	flusher, _ := w.(http.Flusher)
	started := false
	start := func() {
		// The answer's headers go once the watch's starting point is
		// taken: a change made after the client's Watch returned is seen.
		if started {
			return
		}
		started = true
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Transfer-Encoding", "chunked")
		w.WriteHeader(http.StatusOK)
		if flusher != nil {
			flusher.Flush()
		}
	}
	defer start()
	enc := json.NewEncoder(w)
	send := func(typ watch.EventType, obj any) bool {
		start()
		b, err := json.Marshal(obj)
		if err != nil {
			return false
		}
		if err := enc.Encode(struct {
			Type   watch.EventType `json:"type"`
			Object json.RawMessage `json:"object"`
		}{typ, b}); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	s.mu.Lock()
	var pending []event
	var from int64
	switch rv := get("resourceVersion"); rv {
	case "", "0":
		// The current state as ADDED events, then what follows.
		for _, o := range s.objects[r.resource] {
			if sel.matches(o) {
				pending = append(pending, event{rv: s.rv, resource: r.resource, typ: watch.Added, obj: o.DeepCopyObject()})
			}
		}
		slices.SortFunc(pending, func(a, b event) int { return strings.Compare(key(mustAccessor(a.obj)), key(mustAccessor(b.obj))) })
		from = s.rv
	default:
		n, err := strconv.ParseInt(rv, 10, 64)
		if err != nil {
			s.mu.Unlock()
			send(watch.Error, statusOf(apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", rv))))
			return
		}
		if n+1 < s.oldest {
			s.mu.Unlock()
			send(watch.Error, statusOf(apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", n, s.oldest-1))))
			return
		}
		from = n
	}
	s.mu.Unlock()
	start()
	for {
		for _, e := range pending {
			if !send(e.typ, e.obj) {
				return
			}
		}
		pending = nil
		s.mu.Lock()
		changed := s.changed
		for _, e := range s.history {
			if e.rv > from && e.resource == r.resource && sel.matches(e.obj) {
				pending = append(pending, e)
			}
		}
		if n := len(s.history); n > 0 && s.history[n-1].rv > from {
			from = s.history[n-1].rv
		}
		s.mu.Unlock()
		if len(pending) > 0 {
			continue
		}
		select {
		case <-changed:
		case <-drop:
			return
		case <-ctx.Done():
			return
		}
	}
}

func statusOf(err *apierrors.StatusError) *metav1.Status {
	st := err.Status()
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}

// orphaned is the garbage collector's rule for an object whose owners are
// all gone (s.mu held): it is deleted, soon after, as the real collector
// deletes dependents of owners that no longer exist (an owner reference
// set after its owner was deleted).
func (s *Server) orphaned(resource string, obj runtime.Object) {
	acc := mustAccessor(obj)
	refs := acc.GetOwnerReferences()
	if len(refs) == 0 {
		return
	}
	for _, ref := range refs {
		if s.exists(ref.UID) {
			return
		}
	}
	k, uid := key(acc), acc.GetUID()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		select {
		case <-time.After(50 * time.Millisecond):
		case <-s.closing:
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		cur := s.objects[resource][k]
		if s.closed || cur == nil || mustAccessor(cur).GetUID() != uid {
			return
		}
		for _, ref := range mustAccessor(cur).GetOwnerReferences() {
			if s.exists(ref.UID) {
				return
			}
		}
		if p, ok := cur.(*corev1.Pod); ok {
			s.deletePod(p)
			return
		}
		s.put(resource, watch.Deleted, cur.DeepCopyObject())
		s.collect(uid, mustAccessor(cur).GetNamespace(), nil)
	}()
}

// exists reports whether an object with uid is stored (s.mu held).
func (s *Server) exists(uid types.UID) bool {
	for _, objs := range s.objects {
		for _, o := range objs {
			if mustAccessor(o).GetUID() == uid {
				return true
			}
		}
	}
	return false
}
