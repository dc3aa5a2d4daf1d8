package atoll

import (
	"context"
	"time"
)

// Node roles. One node is active (it holds the lease, writes the database
// and runs the work); any other is a standby that follows the replica and
// forwards requests to the active.
const (
	RoleActive  = "active"
	RoleStandby = "standby"
)

// NodeStatus is what a node knows of itself and of the active node.
type NodeStatus struct {
	Node       string `json:"node"`
	Role       string `json:"role"`
	Epoch      int64  `json:"epoch"` // the lease generation this node (or the active) holds
	Version    string `json:"version"`
	ActiveNode string `json:"active_node"`
	// ActiveURL is where the active node is reached (its advertise URL);
	// a standby forwards requests there.
	ActiveURL      string             `json:"active_url,omitempty"`
	LeaseExpiresAt *time.Time         `json:"lease_expires_at,omitempty"`
	Replication    *ReplicationStatus `json:"replication"`
	// Ready is set while this node serves writes: the active, once promoted
	// and while its database can be written.
	Ready bool `json:"ready"`
}

// ReplicationStatus describes the database's replica as this node sees it.
type ReplicationStatus struct {
	URL        string     `json:"url"` // credentials redacted
	LagMS      int64      `json:"lag_ms"`
	LocalTXID  int64      `json:"local_txid"`
	RemoteTXID int64      `json:"remote_txid"`
	LastSync   *time.Time `json:"last_sync,omitempty"`
}

// NodeService reports this node's role; the web layer serves, readies and
// forwards by it.
type NodeService interface {
	// Status is the node's role and the active node, from memory: it is
	// asked on every request.
	Status(ctx context.Context) NodeStatus
	// Replication asks the replica how far this node is (it lists the
	// object store): for status pages and metrics, not per request.
	Replication(ctx context.Context) *ReplicationStatus
}
