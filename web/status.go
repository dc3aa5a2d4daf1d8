package web

import "net/http"

type statusResponse struct {
	Node        string            `json:"node"`
	Role        string            `json:"role"`
	Epoch       int64             `json:"epoch"`
	Version     string            `json:"version"`
	ActiveNode  string            `json:"active_node"`
	Replication replicationStatus `json:"replication"`
}

type replicationStatus struct {
	URL        string `json:"url"`
	LagMS      int64  `json:"lag_ms"`
	LocalTXID  int64  `json:"local_txid"`
	RemoteTXID int64  `json:"remote_txid"`
}

// handleStatus describes this node. Replication and the lease come with the
// HA work; until then the node is the active one at epoch 1 and replicates
// nowhere.
func (s *Server) handleStatus(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, statusResponse{Node: s.Node, Role: "active", Epoch: 1, Version: s.Version, ActiveNode: s.Node})
}
