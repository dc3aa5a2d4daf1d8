package web_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/web"
)

// --enable-profiling-api serves pprof to admins only; without it the
// routes do not exist.
func TestProfilingRoutes(t *testing.T) {
	admin := &atoll.User{ID: 1, Name: "root", Role: atoll.RoleAdmin, Source: "local"}
	for _, tc := range []struct {
		on   bool
		user *atoll.User
		want int
	}{
		{true, nil, http.StatusUnauthorized},
		{true, operator, http.StatusForbidden},
		{true, admin, http.StatusOK},
		{false, admin, http.StatusNotFound},
	} {
		s := startLiveServer(t, func(s *web.Server) { s.Profiling = tc.on })
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("GET", "/debug/pprof/goroutine?debug=1", nil)
		asUser(s.Handler(), tc.user).ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("profiling %v as %v: %d, want %d", tc.on, tc.user, rec.Code, tc.want)
		}
		if tc.want == http.StatusOK && !strings.Contains(rec.Body.String(), "goroutine profile:") {
			t.Errorf("no goroutine profile:\n%.300s", rec.Body.String())
		}
	}
}
