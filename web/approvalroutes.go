package web

// approvalRoutes registers plan approvals, the apply freeze and the audit
// log. Reads need a viewer, decisions an operator, the freeze an admin.
func (s *Server) approvalRoutes(mux *routeMux) {
	mux.HandleFunc("POST /plans/{id}/approve", s.require(operator, s.handleApprovePlan))
	mux.HandleFunc("POST /plans/{id}/reject", s.require(operator, s.handleRejectPlan))
	mux.HandleFunc("GET /api/v1/plans/{id}/approvals", s.require(viewer, s.handleAPIApprovals))
	mux.HandleFunc("POST /api/v1/plans/{id}/approvals", s.require(operator, s.handleAPIDecide))
	mux.HandleFunc("POST /admin/freeze", s.require(admin, s.handleFreezeForm))
	mux.HandleFunc("GET /api/v1/freeze", s.require(viewer, s.handleAPIFreeze))
	mux.HandleFunc("PUT /api/v1/freeze", s.require(admin, s.handleAPISetFreeze))
	mux.HandleFunc("GET /banner/freeze", s.require(viewer, s.handleFreezeBanner))
	mux.HandleFunc("GET /audit", s.require(viewer, s.handleAuditPage))
	mux.HandleFunc("GET /api/v1/audit", s.require(viewer, s.handleAPIAudit))
}
