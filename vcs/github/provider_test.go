package github_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/atollhq/atoll"
	ghp "github.com/atollhq/atoll/vcs/github"
)

func TestKind(t *testing.T) {
	if got := tokenProvider(t).Kind(); got != atoll.VCSGitHub {
		t.Errorf("Kind = %q", got)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	badKey := filepath.Join(t.TempDir(), "bad.pem")
	os.WriteFile(badKey, []byte("not a key"), 0o600)
	cases := map[string]ghp.Config{
		"no credentials":        {},
		"token and app":         {Token: "t", AppID: 1, AppKeyFile: appKeyFile(t)},
		"app id without key":    {AppID: 1},
		"key without app id":    {AppKeyFile: appKeyFile(t)},
		"missing key file":      {AppID: 1, AppKeyFile: filepath.Join(t.TempDir(), "nope.pem")},
		"malformed key file":    {AppID: 1, AppKeyFile: badKey},
		"malformed key":         {AppID: 1, AppKey: "not a key"},
		"key and key file":      {AppID: 1, AppKeyFile: appKeyFile(t), AppKey: "x"},
		"API URL not http":      {Token: "t", APIURL: "ftp://example.com/"},
		"API URL without host":  {Token: "t", APIURL: "/api/v3/"},
		"API URL with password": {Token: "t", APIURL: "https://u:p@example.com/"},
		"hostname with scheme":  {Token: "t", Hostname: "https://ghe.example.com"},
	}
	for name, cfg := range cases {
		if _, err := ghp.New(cfg); atoll.ErrorCode(err) != atoll.EINVALID {
			t.Errorf("%s: err = %v; want EINVALID", name, err)
		}
	}
}

// stubTransport answers like GitHub without a network and records the
// URLs it was asked for, so endpoint derivation can be checked.
type stubTransport struct {
	mu   sync.Mutex
	urls []string
}

func (s *stubTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.urls = append(s.urls, r.Method+" "+r.URL.String())
	s.mu.Unlock()
	body := `{"data":{"minimizeComment":{"minimizedComment":{"isMinimized":true}}}}`
	if strings.HasSuffix(r.URL.Path, "/comments") {
		body = `[{"id":1,"node_id":"IC_1","body":"<!-- atoll:plan -->","user":{"login":"atoll-bot"}}]`
	}
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Request: r,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader([]byte(body))),
	}, nil
}

func TestEndpoints(t *testing.T) {
	cases := []struct {
		name              string
		hostname, apiURL  string
		wantREST, wantGQL string
	}{
		{"github.com", "", "", "https://api.github.com/repos/", "https://api.github.com/graphql"},
		{"explicit github.com", "github.com", "", "https://api.github.com/repos/", "https://api.github.com/graphql"},
		{"enterprise", "ghe.example.com", "", "https://ghe.example.com/api/v3/repos/", "https://ghe.example.com/api/graphql"},
		{"enterprise API URL without slash", "", "https://ghe.example.com/api/v3", "https://ghe.example.com/api/v3/repos/", "https://ghe.example.com/api/graphql"},
		{"proxy API URL", "ghe.example.com", "https://proxy.example.com/github/", "https://proxy.example.com/github/repos/", "https://proxy.example.com/github/graphql"},
		{"test server", "", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/repos/", "http://127.0.0.1:8080/graphql"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			stub := &stubTransport{}
			p, err := ghp.New(ghp.Config{Hostname: tc.hostname, APIURL: tc.apiURL, User: "atoll-bot", Token: "t", HTTPClient: &http.Client{Transport: stub}})
			if err != nil {
				t.Fatal(err)
			}
			if err := p.HideComments(context.Background(), helloWorld, pullNum, "plan"); err != nil {
				t.Fatal(err)
			}
			if len(stub.urls) != 2 {
				t.Fatalf("requests = %v", stub.urls)
			}
			if want := "GET " + tc.wantREST + "octocat/Hello-World/issues/1347/comments?per_page=100"; stub.urls[0] != want {
				t.Errorf("REST request = %q, want %q", stub.urls[0], want)
			}
			if want := "POST " + tc.wantGQL; stub.urls[1] != want {
				t.Errorf("GraphQL request = %q, want %q", stub.urls[1], want)
			}
		})
	}
}
