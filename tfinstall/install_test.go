package tfinstall_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-version"

	"github.com/atollhq/atoll/tfinstall"
)

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
			in := newInstaller(t, srv, dir)
			in.Download = c.download
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

func newInstaller(t *testing.T, r *releases, dir string) *tfinstall.Installer {
	key := armored(t, signer())
	return &tfinstall.Installer{Dir: dir, Download: true, TerraformURL: r.url(tfinstall.Terraform), TofuURL: r.url(tfinstall.OpenTofu),
		TerraformKey: key, TofuKey: key}
}

// checkBinary fails unless b is dist's v, installed in dir under Atlantis's
// name, executable, holding the release's script.
func checkBinary(t *testing.T, dir, dist, v string, b tfinstall.Binary) {
	t.Helper()
	want := filepath.Join(dir, tfinstall.Command(dist)+v)
	if b.Path != want || b.Version == nil || b.Version.String() != v {
		t.Fatalf("binary %s %s, want %s at %s", b.Version, b.Path, v, want)
	}
	out, err := os.ReadFile(want)
	if err != nil || !bytes.Equal(out, script(v)) {
		t.Fatalf("%s holds %q (%v), want the release's script", want, out, err)
	}
	if st, err := os.Stat(want); err != nil || st.Mode().Perm() != 0o755 {
		t.Fatalf("%s: %v, %v; want mode 0755", want, st, err)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

var dists = []string{tfinstall.Terraform, tfinstall.OpenTofu}

// A release is installed only when its SHA256SUMS is signed by the
// expected key and its archive matches it; a refusal names the version and
// the server, and leaves nothing in the directory.
func TestDownloadVerifies(t *testing.T) {
	for _, dist := range dists {
		cases := []struct {
			name   string
			tamper func(r *releases, archive, sums, sig string)
			errHas string // "" installs
		}{
			{"good release", func(*releases, string, string, string) {}, ""},
			{"tampered archive", func(r *releases, archive, _, _ string) {
				r.set(archive, append(bytes.Clone(r.file(archive)), 0))
			}, "checksum"},
			{"tampered SHA256SUMS", func(r *releases, _, sums, _ string) {
				r.set(sums, append(bytes.Clone(r.file(sums)), "0000  evil.zip\n"...))
			}, "ignature"},
			{"missing signature", func(r *releases, _, _, sig string) { r.set(sig, nil) }, "404"},
			{"signed by another key", func(r *releases, _, sums, sig string) {
				r.set(sig, sign(t, stranger(), r.file(sums)))
			}, "ignature"},
		}
		for _, c := range cases {
			t.Run(dist+"/"+c.name, func(t *testing.T) {
				r := newReleases(t)
				r.add(t, dist, "1.8.2")
				archive, sums, sig := r.paths(dist, "1.8.2")
				c.tamper(r, archive, sums, sig)
				dir := t.TempDir()
				b, err := newInstaller(t, r, dir).Select(context.Background(), dist, "1.8.2")
				if c.errHas == "" {
					if err != nil {
						t.Fatal(err)
					}
					checkBinary(t, dir, dist, "1.8.2", b)
					if b.Unverified {
						t.Error("a verified download is marked unverified")
					}
					if got := entries(t, dir); len(got) != 1 {
						t.Errorf("dir holds %v, want only the binary", got)
					}
					return
				}
				if err == nil {
					t.Fatalf("installed %+v, want a refusal", b)
				}
				t.Log(err)
				for _, want := range []string{c.errHas, tfinstall.Command(dist) + " 1.8.2", r.url(dist)} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				if !errors.Is(err, tfinstall.ErrNoVersion) {
					t.Errorf("error %v does not wrap ErrNoVersion", err)
				}
				if got := entries(t, dir); len(got) != 0 {
					t.Errorf("dir holds %v after a refusal, want nothing", got)
				}
			})
		}
	}
}

// With SkipVerify a release without a signature installs, marked
// unverified, and stays marked for another installer (a restarted server).
func TestDownloadSkipVerify(t *testing.T) {
	for _, dist := range dists {
		t.Run(dist, func(t *testing.T) {
			r := newReleases(t)
			r.add(t, dist, "1.8.2")
			_, _, sig := r.paths(dist, "1.8.2")
			r.set(sig, nil)
			dir := t.TempDir()
			in := newInstaller(t, r, dir)
			in.SkipVerify = true
			b, err := in.Select(context.Background(), dist, "1.8.2")
			if err != nil {
				t.Fatal(err)
			}
			checkBinary(t, dir, dist, "1.8.2", b)
			if !b.Unverified {
				t.Error("a download without verification is not marked unverified")
			}
			again := newInstaller(t, r, dir)
			again.Download = false
			for _, want := range []string{"1.8.2", ">= 1.0"} {
				if b, err := again.Select(context.Background(), dist, want); err != nil || !b.Unverified {
					t.Errorf("Select(%q) after a restart = %+v, %v; want it marked unverified", want, b, err)
				}
			}
			if bins, err := again.Installed(dist); err != nil || len(bins) != 1 {
				t.Errorf("Installed = %+v, %v; want the one binary (the marker is not a binary)", bins, err)
			}
		})
	}
}

// A constraint for OpenTofu downloads the newest released version meeting
// it, as listed by the mirror's api.json.
func TestSelectOpenTofuDownloadsNewest(t *testing.T) {
	r := newReleases(t)
	for _, v := range []string{"1.7.3", "1.8.1", "1.8.2", "1.9.0"} {
		r.add(t, tfinstall.OpenTofu, v)
	}
	dir := t.TempDir()
	b, err := newInstaller(t, r, dir).Select(context.Background(), tfinstall.OpenTofu, "~> 1.8.0")
	if err != nil {
		t.Fatal(err)
	}
	checkBinary(t, dir, tfinstall.OpenTofu, "1.8.2", b)
}

// Jobs wanting the same missing version at once download it once; none
// sees a partial binary.
func TestDownloadConcurrentOnce(t *testing.T) {
	for _, dist := range dists {
		t.Run(dist, func(t *testing.T) {
			r := newReleases(t)
			r.add(t, dist, "1.6.0")
			r.release = make(chan struct{})
			dir := t.TempDir()
			in := newInstaller(t, r, dir)
			const n = 8
			var wg sync.WaitGroup
			bins := make([]tfinstall.Binary, n)
			errs := make([]error, n)
			for k := range n {
				wg.Go(func() { bins[k], errs[k] = in.Select(context.Background(), dist, "1.6.0") })
			}
			// While the one download is held, nothing is at the final path.
			for r.hits.Load() == 0 {
				runtime.Gosched()
			}
			final := filepath.Join(dir, tfinstall.Command(dist)+"1.6.0")
			if _, err := os.Stat(final); err == nil {
				t.Errorf("%s exists before its download finished", final)
			}
			close(r.release)
			wg.Wait()
			for k, err := range errs {
				if err != nil {
					t.Fatalf("caller %d: %v", k, err)
				}
				checkBinary(t, dir, dist, "1.6.0", bins[k])
			}
			if got := r.hits.Load(); got != 1 {
				t.Fatalf("%d downloads of one version, want 1", got)
			}
			if got := entries(t, dir); len(got) != 1 {
				t.Errorf("dir holds %v, want only the binary (temporary files removed)", got)
			}
		})
	}
}

// A mirror's password never reaches an error (they are shown in comments).
func TestDownloadErrorRedactsPassword(t *testing.T) {
	srv := newReleases(t)
	in := newInstaller(t, srv, t.TempDir())
	in.TerraformURL = strings.Replace(in.TerraformURL, "http://", "http://user:hunter2@", 1)
	in.TofuURL = strings.Replace(in.TofuURL, "http://", "http://user:hunter2@", 1)
	for _, dist := range dists {
		for _, want := range []string{"1.9.0", "~> 1.9"} {
			_, err := in.Select(context.Background(), dist, want)
			if err == nil || strings.Contains(err.Error(), "hunter2") {
				t.Errorf("Select(%s, %q) error = %v; want an error without the password", dist, want, err)
			}
		}
	}
}
