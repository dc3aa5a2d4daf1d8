package web_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// A page on another site can post a form (or a text/plain fetch) to the
// demo, whose API is open: every route that changes state must refuse it.
// POST /events is the exception, left to its signature check.
func TestMutatingRoutesRefuseCrossSiteAndNonJSON(t *testing.T) {
	f := newPageFixture(t)
	lock := "/api/v1/locks/" + strconv.FormatInt(f.lockID, 10)
	routes := []struct{ method, path string }{
		{"DELETE", lock},
		{"POST", "/api/v1/repos/acme/infra/pulls/7/comments"},
		{"POST", "/api/v1/plan"},
		{"POST", "/api/v1/apply"},
		{"POST", "/api/plan"},
		{"POST", "/api/apply"},
	}
	body := `{"body":"atlantis apply","Repository":"acme/infra","PR":7}`
	cases := []struct {
		name        string
		contentType string
		header      map[string]string
		status      int
		errSub      string
	}{
		{"form", "application/x-www-form-urlencoded", nil, 415, "application/json"},
		{"multipart form", "multipart/form-data; boundary=x", nil, 415, "application/json"},
		{"text/plain", "text/plain", nil, 415, "application/json"},
		{"no content type", "", nil, 415, "application/json"},
		{"JSON from another site", "application/json", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "Cross-origin"},
		{"JSON with a foreign Origin", "application/json", map[string]string{"Origin": "https://evil.example"}, 403, "Cross-origin"},
		{"form from another site", "text/plain", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "https://evil.example"}, 403, "Cross-origin"},
	}
	for _, rt := range routes {
		for _, c := range cases {
			t.Run(rt.method+" "+rt.path+" "+c.name, func(t *testing.T) {
				req, _ := http.NewRequest(rt.method, f.srv.URL+rt.path, strings.NewReader(body))
				if c.contentType != "" {
					req.Header.Set("Content-Type", c.contentType)
				}
				for k, v := range c.header {
					req.Header.Set(k, v)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var out struct{ Error string }
				decodeBody(t, res, &out)
				if res.StatusCode != c.status || !strings.Contains(out.Error, c.errSub) {
					t.Fatalf("status %d error %q; want %d with %q", res.StatusCode, out.Error, c.status, c.errSub)
				}
			})
		}
	}
	// Nothing got through: the lock is still held.
	if locks, err := f.db.Locks(t.Context()); err != nil || len(locks) != 1 {
		t.Fatalf("locks = %v, %v; want the one lock", locks, err)
	}

	// The same-origin JSON call the pages make works.
	req, _ := http.NewRequest("DELETE", f.srv.URL+lock, nil)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", f.srv.URL)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("same-origin JSON unlock: status %d", res.StatusCode)
	}

	// Webhooks are not JSON-only (GitHub can send forms) nor same-origin.
	req, _ = http.NewRequest("POST", f.srv.URL+"/events", strings.NewReader("payload=%7B%7D"))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode == 415 || res.StatusCode == 403 {
		t.Fatalf("POST /events: status %d; the guard must leave webhooks to their signature check", res.StatusCode)
	}
}
