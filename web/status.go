package web

import (
	"context"
	"net/http"

	"github.com/atollhq/atoll"
)

// nodeStatus is this node's role; without a cluster the node is the only
// one, active at epoch 1, ready while its database can be written.
func (s *Server) nodeStatus(ctx context.Context) atoll.NodeStatus {
	if s.Cluster != nil {
		st := s.Cluster.Status(ctx)
		st.Ready = st.Ready && st.Role == atoll.RoleActive && s.DB.WriteHealth() == nil
		return st
	}
	return atoll.NodeStatus{Node: s.Node, Role: atoll.RoleActive, Epoch: 1, Version: s.Version, ActiveNode: s.Node,
		Replication: &atoll.ReplicationStatus{}, Ready: s.DB.WriteHealth() == nil}
}

// fullStatus is nodeStatus with the replication positions, which cost a
// listing of the replica.
func (s *Server) fullStatus(ctx context.Context) atoll.NodeStatus {
	st := s.nodeStatus(ctx)
	if s.Cluster != nil {
		st.Replication = s.Cluster.Replication(ctx)
	}
	return st
}

// handleStatus describes this node, the active node and replication.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.fullStatus(r.Context()))
}
