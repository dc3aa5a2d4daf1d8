package web_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"testing"

	"github.com/atollhq/atoll"
	"github.com/atollhq/atoll/web"
)

// Every address atoll.Links makes — the links of comments, statuses and
// pages — is a route Handler registers, with the public URL or without.
// A new Links method fails the test until it is listed here.
func TestRoutesServeEveryLink(t *testing.T) {
	s := &web.Server{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	s.Handler()
	mux := http.NewServeMux()
	for _, p := range s.Patterns() {
		mux.HandleFunc(p, func(http.ResponseWriter, *http.Request) {})
	}
	type link struct{ method, url string }
	made := func(l atoll.Links) map[string][]link {
		return map[string][]link{
			"Job":     {{"GET", l.Job(7)}},
			"JobLog":  {{"GET", l.JobLog(7)}},
			"JobLine": {{"GET", l.JobLine(7, 12)}},
			// An Azure DevOps owner (org/project) is one segment.
			"Pull":           {{"GET", l.Pull("acme/infra", 3)}, {"GET", l.Pull("org/proj/infra", 3)}, {"GET", l.Pull("acme/a b", 3)}, {"GET", l.Pull("acme/infra", -1)}},
			"Drift":          {{"GET", l.Drift("", "")}, {"GET", l.Drift("org/proj/infra", atoll.DriftDrifted)}},
			"DriftHistory":   {{"GET", l.DriftHistory("org/proj/infra", 9, "main")}},
			"DriftCheck":     {{"POST", l.DriftCheck()}},
			"DriftReconcile": {{"POST", l.DriftReconcile()}},
			"DriftApply":     {{"POST", l.DriftApply()}},
			"PullCommands":   {{"POST", l.PullCommands("org/proj/infra", 3)}},
			"PullComment":    {{"POST", l.PullComment("org/proj/infra", 3)}},
			"Project":        {{"GET", l.Project("org/proj/infra", 3, 9)}},
			"Plan":           {{"GET", l.Plan(5)}},
			"PlanDecision":   {{"POST", l.PlanDecision(5, atoll.DecisionApprove)}, {"POST", l.PlanDecision(5, atoll.DecisionReject)}},
			// Not an address: the id of a row, which Project links to.
			"ProjectAnchor": nil,
		}
	}
	typ := reflect.TypeOf(atoll.Links{})
	for _, l := range []atoll.Links{{}, {Base: "https://atoll.example.com"}} {
		links := made(l)
		for i := 0; i < typ.NumMethod(); i++ {
			name := typ.Method(i).Name
			got, ok := links[name]
			if !ok {
				t.Errorf("atoll.Links.%s is not checked against the routes: add it here", name)
			}
			for _, lk := range got {
				u, err := url.Parse(lk.url)
				if err != nil {
					t.Fatalf("%s: %v", lk.url, err)
				}
				req := httptest.NewRequest(lk.method, u.EscapedPath(), nil)
				// "GET /" is the catch-all that answers the 404 page.
				if _, pattern := mux.Handler(req); pattern == "" || pattern == "GET /" {
					t.Errorf("%s %s (atoll.Links.%s) is served by no route", lk.method, lk.url, name)
				}
			}
		}
	}
}
