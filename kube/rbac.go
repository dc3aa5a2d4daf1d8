package kube

// Permission is one rule of a Kubernetes RBAC Role.
type Permission struct {
	Group    string // "" is the core group
	Resource string
	Verbs    []string
}

// RequiredRBAC is exactly what the Launcher does in its namespace: the
// rules the Helm chart's Role must grant the Atoll server's service
// account (and no more). A test records every request the Launcher makes
// and checks both ways.
//
//   - jobs: create (Launch), get (Launch of an existing Job, Watch when the
//     pod goes without ending), list (List), delete (Delete).
//   - pods: list and watch (Watch).
//   - secrets: create, get, update (the token, its owner reference), delete
//     (the token of a Job that could not be created). Deleting a Job
//     deletes its Secret by the garbage collector, not by Atoll.
//   - events: list (Watch: the scheduler's message).
//
// The ownerReference Atoll sets has no blockOwnerDeletion, which would need
// update on jobs/finalizers. As a Role:
//
//	rules:
//	- apiGroups: [batch]
//	  resources: [jobs]
//	  verbs: [create, delete, get, list]
//	- apiGroups: [""]
//	  resources: [pods]
//	  verbs: [list, watch]
//	- apiGroups: [""]
//	  resources: [secrets]
//	  verbs: [create, delete, get, update]
//	- apiGroups: [""]
//	  resources: [events]
//	  verbs: [list]
var RequiredRBAC = []Permission{
	{Group: "batch", Resource: "jobs", Verbs: []string{"create", "delete", "get", "list"}},
	{Group: "", Resource: "pods", Verbs: []string{"list", "watch"}},
	{Group: "", Resource: "secrets", Verbs: []string{"create", "delete", "get", "update"}},
	{Group: "", Resource: "events", Verbs: []string{"list"}},
}
