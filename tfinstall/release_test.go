package tfinstall_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/armor"
	"github.com/ProtonMail/go-crypto/openpgp/packet"

	"github.com/atollhq/atoll/tfinstall"
)

// Keys made once per test binary: releases are signed by signer, whose
// public key the installers under test are given; stranger is any other.
var signer, stranger = sync.OnceValue(func() *openpgp.Entity { return newKey("release signer") }),
	sync.OnceValue(func() *openpgp.Entity { return newKey("stranger") })

func newKey(name string) *openpgp.Entity {
	e, err := openpgp.NewEntity(name, "", name+"@example.com", &packet.Config{Algorithm: packet.PubKeyAlgoEdDSA})
	if err != nil {
		panic(err)
	}
	return e
}

func armored(t *testing.T, e *openpgp.Entity) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := armor.Encode(&buf, openpgp.PublicKeyType, nil)
	if err == nil {
		err = e.Serialize(w)
	}
	if err == nil {
		err = w.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func sign(t *testing.T, e *openpgp.Entity, data []byte) []byte {
	t.Helper()
	var sig bytes.Buffer
	if err := openpgp.DetachSign(&sig, e, bytes.NewReader(data), nil); err != nil {
		t.Fatal(err)
	}
	return sig.Bytes()
}

// releases is a release server speaking both wire layouts, every release
// signed by signer:
//   - Terraform as releases.hashicorp.com serves it (hc-install):
//     /terraform/index.json, /terraform/{v}/index.json, and beside it the
//     zip, terraform_{v}_SHA256SUMS and its signature .sig;
//   - OpenTofu under /tofu as its GitHub releases (tofudl):
//     /tofu/v{v}/tofu_{v}_{os}_{arch}.tar.gz, tofu_{v}_SHA256SUMS and its
//     signature .gpgsig, with the version list at /tofu/api.json.
//
// Each archive holds a script printing its version.
type releases struct {
	*httptest.Server
	mu      sync.Mutex
	files   map[string][]byte // path → body
	hits    atomic.Int64      // archive downloads
	release chan struct{}     // when set, archive downloads wait for it
}

func newReleases(t *testing.T, versions ...string) *releases {
	t.Helper()
	r := &releases{files: map[string][]byte{}}
	for _, v := range versions {
		r.add(t, tfinstall.Terraform, v)
	}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.Close)
	return r
}

func script(v string) []byte {
	return fmt.Appendf(nil, "#!/bin/sh\necho 'Terraform v%s'\n", v)
}

// URL is the installer's download URL for dist.
func (r *releases) url(dist string) string {
	if dist == tfinstall.OpenTofu {
		return r.Server.URL + "/tofu"
	}
	return r.Server.URL
}

// Paths of a release's archive, checksums and signature.
func (r *releases) paths(dist, v string) (archive, sums, sig string) {
	platform := runtime.GOOS + "_" + runtime.GOARCH
	if dist == tfinstall.OpenTofu {
		dir := "/tofu/v" + v + "/tofu_" + v
		return dir + "_" + platform + ".tar.gz", dir + "_SHA256SUMS", dir + "_SHA256SUMS.gpgsig"
	}
	dir := "/terraform/" + v + "/terraform_" + v
	return dir + "_" + platform + ".zip", dir + "_SHA256SUMS", dir + "_SHA256SUMS.sig"
}

// add publishes dist's release v, signed by signer.
func (r *releases) add(t *testing.T, dist, v string) {
	t.Helper()
	archive, sums, sig := r.paths(dist, v)
	var data []byte
	if dist == tfinstall.OpenTofu {
		data = tgz(t, map[string][]byte{"tofu": script(v), "LICENSE": []byte("MPL")})
	} else {
		data = zipOf(t, map[string][]byte{"terraform": script(v), "LICENSE.txt": []byte("BUSL")})
	}
	sum := sha256.Sum256(data)
	// Another platform's line, as in a real SHA256SUMS.
	sumsData := fmt.Appendf(nil, "%s  %s\n%x  %s\n", hex.EncodeToString(sum[:]), path.Base(archive), sha256.Sum256(nil), "other_platform.zip")
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files[archive], r.files[sums], r.files[sig] = data, sumsData, sign(t, signer(), sumsData)
	if dist == tfinstall.OpenTofu {
		return
	}
	name := "terraform_" + v
	index, err := json.Marshal(map[string]any{
		"name": "terraform", "version": v,
		"shasums": name + "_SHA256SUMS", "shasums_signature": name + "_SHA256SUMS.sig",
		// The real index names a signature per HashiCorp key too; hc-install
		// picks the one of its key, else the plain .sig.
		"shasums_signatures": []string{name + "_SHA256SUMS.72D7468F.sig", name + "_SHA256SUMS.sig"},
		"builds": []map[string]string{{
			"name": "terraform", "version": v, "os": runtime.GOOS, "arch": runtime.GOARCH,
			"filename": path.Base(archive), "url": "https://releases.hashicorp.com" + archive,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r.files["/terraform/"+v+"/index.json"] = index
}

// set replaces (nil: removes) a file of the server.
func (r *releases) set(p string, data []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if data == nil {
		delete(r.files, p)
	} else {
		r.files[p] = data
	}
}

func (r *releases) file(p string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.files[p]
}

func (r *releases) serve(w http.ResponseWriter, req *http.Request) {
	switch req.URL.Path {
	case "/terraform/index.json", "/tofu/api.json":
		w.Header().Set("Content-Type", "application/json")
		w.Write(r.list(req.URL.Path))
		return
	}
	data := r.file(req.URL.Path)
	if data == nil {
		http.NotFound(w, req)
		return
	}
	switch path.Ext(req.URL.Path) {
	case ".json":
		w.Header().Set("Content-Type", "application/json")
	case ".zip", ".gz":
		w.Header().Set("Content-Type", "application/zip")
		r.hits.Add(1)
		if r.release != nil {
			<-r.release
		}
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
	}
	w.Write(data)
}

// list is Terraform's index.json or OpenTofu's api.json of the releases.
func (r *releases) list(p string) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	tf, tofu := map[string]any{}, []map[string]any{}
	for f := range r.files {
		parts := strings.Split(f, "/")
		switch {
		case parts[1] == "terraform" && strings.HasSuffix(f, "SHA256SUMS"):
			tf[parts[2]] = map[string]string{"version": parts[2]}
		case parts[1] == "tofu" && strings.HasSuffix(f, "SHA256SUMS"):
			tofu = append(tofu, map[string]any{"id": strings.TrimPrefix(parts[2], "v"), "files": []string{path.Base(f)}})
		}
	}
	var out []byte
	if p == "/tofu/api.json" {
		out, _ = json.Marshal(map[string]any{"versions": tofu})
	} else {
		out, _ = json.Marshal(map[string]any{"name": "terraform", "versions": tf})
	}
	return out
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for name, data := range files {
		w, err := zw.Create(name)
		if err == nil {
			_, err = w.Write(data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tgz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, data := range files {
		err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o755, Size: int64(len(data)), Typeflag: tar.TypeReg})
		if err == nil {
			_, err = tw.Write(data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
