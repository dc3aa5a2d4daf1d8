package main_test

import (
	"context"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// Without --public-url, links (comments, statuses, the demo's pull request)
// point at the address Atoll prints, not at another name for it: the issue
// saw links to localhost while the server printed 127.0.0.1.
func TestPublicURLDefaultsToThePrintedAddress(t *testing.T) {
	cases := []struct {
		addr, publicURL string
		wantHost        string // of the printed URL
		wantPublic      string // "" means the printed URL
	}{
		{addr: "127.0.0.1:0", wantHost: "127.0.0.1"},
		{addr: ":0", wantHost: "127.0.0.1"},        // every interface: print the loopback
		{addr: "0.0.0.0:0", wantHost: "127.0.0.1"}, // the same, spelt out
		{addr: "127.0.0.1:0", publicURL: "https://atoll.example.com/", wantHost: "127.0.0.1", wantPublic: "https://atoll.example.com"},
	}
	for _, c := range cases {
		t.Run(c.addr+" "+c.publicURL, func(t *testing.T) {
			m := main.NewMain()
			m.Config.Addr = c.addr
			m.Config.PublicURL = c.publicURL
			m.Config.DataDir = filepath.Join(t.TempDir(), "data")
			m.Config.TerraformBin = filepath.Join(t.TempDir(), "no-terraform") // only warned about
			m.Config.LogLevel = "error"
			m.Config.StopTimeout = 5 * time.Second
			m.Config.RepoAllowlist = "github.com/acme/*"
			if err := m.Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { m.Close() })
			u, err := url.Parse(m.URL)
			if err != nil || u.Hostname() != c.wantHost || u.Port() == "" || u.Port() == "0" {
				t.Fatalf("printed URL %q, want host %s and the bound port", m.URL, c.wantHost)
			}
			if !strings.HasSuffix(m.Server.Addr(), ":"+u.Port()) {
				t.Errorf("printed %s, bound %s", m.URL, m.Server.Addr())
			}
			want := c.wantPublic
			if want == "" {
				want = m.URL
			}
			if m.Server.PublicURL != want || m.Runner.PublicURL != want {
				t.Errorf("public URL: server %q, runner %q; want %q", m.Server.PublicURL, m.Runner.PublicURL, want)
			}
		})
	}
}
