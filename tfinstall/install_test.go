package tfinstall_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll/tfinstall"
)

// releases is a release server laid out like releases.hashicorp.com:
// /terraform/index.json and /terraform/{v}/terraform_{v}_{os}_{arch}.zip
// with its _SHA256SUMS; each zip holds a script printing its version.
type releases struct {
	*httptest.Server
	zips    map[string][]byte // path → zip
	sums    map[string]string // path → SHA256SUMS
	hits    atomic.Int64      // zip downloads
	release chan struct{}     // when set, zip downloads wait for it
}

func newReleases(t *testing.T, versions ...string) *releases {
	t.Helper()
	r := &releases{zips: map[string][]byte{}, sums: map[string]string{}}
	for _, v := range versions {
		r.add(t, "terraform", v, script(v))
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func script(v string) []byte {
	return fmt.Appendf(nil, "#!/bin/sh\necho 'Terraform v%s'\n", v)
}

func (r *releases) add(t *testing.T, cmd, v string, bin []byte) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create(cmd)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(bin)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%s_%s_%s_%s.zip", cmd, v, runtime.GOOS, runtime.GOARCH)
	sum := sha256.Sum256(buf.Bytes())
	r.zips["/"+cmd+"/"+v+"/"+name] = buf.Bytes()
	r.sums[fmt.Sprintf("/%s/%s/%s_%s_SHA256SUMS", cmd, v, cmd, v)] = hex.EncodeToString(sum[:]) + "  " + name + "\n"
}

func (r *releases) serve(w http.ResponseWriter, req *http.Request) {
	if req.URL.Path == "/terraform/index.json" {
		var vs []string
		for p := range r.zips {
			vs = append(vs, fmt.Sprintf("%q:{}", strings.Split(p, "/")[2]))
		}
		fmt.Fprintf(w, `{"name":"terraform","versions":{%s}}`, strings.Join(vs, ","))
		return
	}
	if s, ok := r.sums[req.URL.Path]; ok {
		fmt.Fprint(w, s)
		return
	}
	if z, ok := r.zips[req.URL.Path]; ok {
		r.hits.Add(1)
		if r.release != nil {
			<-r.release
		}
		w.Write(z)
		return
	}
	http.NotFound(w, req)
}

func installed(t *testing.T, dir string, versions ...string) {
	t.Helper()
	for _, v := range versions {
		if err := os.WriteFile(filepath.Join(dir, "terraform"+v), script(v), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSelect(t *testing.T) {
	srv := newReleases(t, "1.6.0", "1.7.1", "1.7.5", "2.0.0-beta1")
	cases := []struct {
		name      string
		installed []string
		want      string
		download  bool
		got       string // version selected; "" for an error
		errHas    []string
	}{
		{"exact installed", []string{"1.5.7", "1.6.0"}, "1.5.7", false, "1.5.7", nil},
		{"exact with v", []string{"1.5.7"}, "v1.5.7", false, "1.5.7", nil},
		{"exact with =", []string{"1.5.7"}, "= 1.5.7", false, "1.5.7", nil},
		// An exact version is that version even when a newer one would do.
		{"exact downloaded", []string{"1.7.5"}, "1.7.1", true, "1.7.1", nil},
		{"exact missing, downloads off", []string{"1.5.7"}, "1.7.1", false, "", []string{"1.7.1", "--tf-download=false"}},
		{"constraint newest installed", []string{"1.5.0", "1.5.7", "1.6.0", "1.10.0"}, "~> 1.5.0", false, "1.5.7", nil},
		{"constraint newest installed across minors", []string{"1.5.7", "1.9.0", "1.10.0"}, ">= 1.5, < 2.0", false, "1.10.0", nil},
		// Installed binaries are preferred to newer released ones.
		{"constraint installed before download", []string{"1.6.0"}, "~> 1.6", true, "1.6.0", nil},
		{"constraint downloads newest released", []string{"1.5.7"}, "~> 1.7.0", true, "1.7.5", nil},
		{"constraint none, downloads off", []string{"1.5.7", "1.6.0"}, "~> 1.9", false, "", []string{"installed: 1.6.0, 1.5.7", "--tf-download=false"}},
		{"constraint none released", []string{"1.5.7"}, ">= 3.0", true, "", []string{"installed: 1.5.7", "released"}},
		{"not a constraint", nil, "latest", true, "", []string{"latest"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			installed(t, dir, c.installed...)
			os.WriteFile(filepath.Join(dir, "tofu9.9.9"), script("9.9.9"), 0o755) // another distribution
			in := &tfinstall.Installer{Dir: dir, Download: c.download, TerraformURL: srv.URL}
			b, err := in.Select(context.Background(), tfinstall.Terraform, c.want)
			if c.got == "" {
				if err == nil {
					t.Fatalf("Select(%q) = %s, want an error", c.want, b.Version)
				}
				for _, s := range c.errHas {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Select(%q): %v", c.want, err)
			}
			if b.Version.String() != c.got || b.Path != filepath.Join(dir, "terraform"+c.got) {
				t.Fatalf("Select(%q) = %s at %s, want %s", c.want, b.Version, b.Path, c.got)
			}
			out, err := os.ReadFile(b.Path)
			if err != nil || !bytes.Equal(out, script(c.got)) {
				t.Fatalf("binary %s holds %q (%v)", b.Path, out, err)
			}
		})
	}
}

// The server's default binary counts as installed: a constraint it meets
// best, or its exact version, selects it.
func TestSelectExtra(t *testing.T) {
	dir := t.TempDir()
	installed(t, dir, "1.5.0")
	def := tfinstall.Binary{Path: "/usr/bin/terraform", Version: version.Must(version.NewVersion("1.5.7"))}
	in := &tfinstall.Installer{Dir: dir}
	for _, want := range []string{"~> 1.5", "1.5.7"} {
		b, err := in.Select(context.Background(), tfinstall.Terraform, want, def)
		if err != nil || b.Path != def.Path {
			t.Errorf("Select(%q) = %+v, %v; want the default binary", want, b, err)
		}
	}
	if b, err := in.Select(context.Background(), tfinstall.Terraform, "1.5.0", def); err != nil || b.Version.String() != "1.5.0" {
		t.Errorf("Select(1.5.0) = %+v, %v", b, err)
	}
}

func TestSelectOpenTofu(t *testing.T) {
	dir := t.TempDir()
	installed(t, dir, "1.8.0")
	os.WriteFile(filepath.Join(dir, "tofu1.8.0"), script("1.8.0"), 0o755)
	os.WriteFile(filepath.Join(dir, "tofu1.7.0"), script("1.7.0"), 0o755)
	in := &tfinstall.Installer{Dir: dir}
	b, err := in.Select(context.Background(), tfinstall.OpenTofu, ">= 1.7")
	if err != nil || b.Path != filepath.Join(dir, "tofu1.8.0") {
		t.Fatalf("Select(opentofu, >= 1.7) = %+v, %v; want tofu1.8.0", b, err)
	}
}

// OpenTofu downloads come from its GitHub releases layout:
// {url}/v{v}/tofu_{v}_{os}_{arch}.zip and tofu_{v}_SHA256SUMS.
func TestEnsureOpenTofu(t *testing.T) {
	r := newReleases(t)
	r.add(t, "tofu", "1.8.2", script("1.8.2"))
	mirror := httptest.NewServer(http.StripPrefix("/opentofu", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// /v1.8.2/x → /tofu/1.8.2/x
		req.URL.Path = "/tofu/" + strings.TrimPrefix(req.URL.Path, "/v")
		r.serve(w, req)
	})))
	t.Cleanup(mirror.Close)
	dir := t.TempDir()
	in := &tfinstall.Installer{Dir: dir, Download: true, TofuURL: mirror.URL + "/opentofu"}
	b, err := in.Select(context.Background(), tfinstall.OpenTofu, "1.8.2")
	if err != nil || b.Path != filepath.Join(dir, "tofu1.8.2") {
		t.Fatalf("Select(opentofu, 1.8.2) = %+v, %v", b, err)
	}
}

// A zip whose SHA256 is not the one in SHA256SUMS is refused, and nothing
// is installed.
func TestDownloadChecksumMismatch(t *testing.T) {
	srv := newReleases(t, "1.6.0")
	for p := range srv.zips {
		srv.zips[p] = append([]byte{}, srv.zips[p]...)
		srv.zips[p][len(srv.zips[p])-1] ^= 0xff
	}
	dir := t.TempDir()
	in := &tfinstall.Installer{Dir: dir, Download: true, TerraformURL: srv.URL}
	_, err := in.Select(context.Background(), tfinstall.Terraform, "1.6.0")
	if err == nil || !strings.Contains(err.Error(), "SHA256SUMS") {
		t.Fatalf("Select with a corrupt zip = %v, want a checksum error", err)
	}
	if !errors.Is(err, tfinstall.ErrNoVersion) {
		t.Errorf("error %v does not wrap ErrNoVersion", err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Fatalf("dir holds %v after a refused download, want nothing", entries)
	}
}

// Jobs wanting the same missing version at once download it once; none
// sees a partial binary.
func TestDownloadConcurrentOnce(t *testing.T) {
	srv := newReleases(t, "1.6.0")
	srv.release = make(chan struct{})
	dir := t.TempDir()
	in := &tfinstall.Installer{Dir: dir, Download: true, TerraformURL: srv.URL}
	const n = 8
	var wg sync.WaitGroup
	errs := make([]error, n)
	for k := range n {
		wg.Go(func() {
			b, err := in.Select(context.Background(), tfinstall.Terraform, "1.6.0")
			if err == nil {
				var out []byte
				if out, err = os.ReadFile(b.Path); err == nil && !bytes.Equal(out, script("1.6.0")) {
					err = fmt.Errorf("binary holds %q", out)
				}
			}
			errs[k] = err
		})
	}
	// While the one download is held, nothing is at the final path.
	for srv.hits.Load() == 0 {
		runtime.Gosched()
	}
	if _, err := os.Stat(filepath.Join(dir, "terraform1.6.0")); err == nil {
		t.Error("terraform1.6.0 exists before its download finished")
	}
	close(srv.release)
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", k, err)
		}
	}
	if got := srv.hits.Load(); got != 1 {
		t.Fatalf("%d downloads of one version, want 1", got)
	}
	st, err := os.Stat(filepath.Join(dir, "terraform1.6.0"))
	if err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("installed binary: %v, %v; want mode 0755", st, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %d entries, want only the binary (temp files removed)", len(entries))
	}
}

// A mirror's password never reaches an error (they are shown in comments).
func TestDownloadErrorRedactsPassword(t *testing.T) {
	srv := newReleases(t)
	u := strings.Replace(srv.URL, "http://", "http://user:hunter2@", 1)
	in := &tfinstall.Installer{Dir: t.TempDir(), Download: true, TerraformURL: u}
	for _, want := range []string{"1.9.0", "~> 1.9"} {
		_, err := in.Select(context.Background(), tfinstall.Terraform, want)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("Select(%q) error = %v; want an error without the password", want, err)
		}
	}
}
