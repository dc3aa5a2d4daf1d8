package main_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	main "github.com/atollhq/atoll/cmd/atoll"
)

// writeCert writes a self-signed certificate for 127.0.0.1 with serial and
// its key, and returns the certificate.
func writeCert(t *testing.T, certFile, keyFile string, serial int64) *x509.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "atoll-test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

// --ssl-cert-file and --ssl-key-file serve https; plain http is refused;
// a renewed certificate is served without a restart.
func TestServesTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	first := writeCert(t, certFile, keyFile, 1)
	m := startMainWith(t, t.TempDir(), func(m *main.Main) { m.Config.SSLCertFile, m.Config.SSLKeyFile = certFile, keyFile })
	t.Cleanup(func() { m.Close() })
	if !strings.HasPrefix(m.URL, "https://") {
		t.Fatalf("URL = %s, want https", m.URL)
	}
	get := func(trust *x509.Certificate) (*http.Response, error) {
		pool := x509.NewCertPool()
		pool.AddCert(trust)
		c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
		return c.Get(m.URL + "/healthz")
	}
	resp, err := get(first)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || resp.TLS.PeerCertificates[0].SerialNumber.Int64() != 1 {
		t.Fatalf("https /healthz = %d, tls %v", resp.StatusCode, resp.TLS != nil)
	}
	if resp, err := http.Get("http://" + strings.TrimPrefix(m.URL, "https://") + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Fatal("plain http was served")
		}
	}

	// A renewal: new files with a later modification time.
	second := writeCert(t, certFile, keyFile, 2)
	later := time.Now().Add(2 * time.Second)
	for _, f := range []string{certFile, keyFile} {
		if err := os.Chtimes(f, later, later); err != nil {
			t.Fatal(err)
		}
	}
	resp, err = get(second)
	if err != nil {
		t.Fatalf("after the renewal: %v", err)
	}
	resp.Body.Close()
	if got := resp.TLS.PeerCertificates[0].SerialNumber.Int64(); got != 2 {
		t.Fatalf("served serial %d after the renewal, want 2", got)
	}
}

// --use-tf-plugin-cache=false leaves TF_PLUGIN_CACHE_DIR out of Terraform's
// environment; by default runs share DATA_DIR/plugin-cache.
func TestPluginCacheFlag(t *testing.T) {
	for _, use := range []bool{true, false} {
		dataDir := t.TempDir()
		m := startMainWith(t, dataDir, func(m *main.Main) { m.Config.UseTFPluginCache = use })
		m.Close()
		want := "TF_PLUGIN_CACHE_DIR=" + filepath.Join(dataDir, "plugin-cache")
		got := false
		for _, kv := range m.Runner.Terraform.Env {
			got = got || kv == want
		}
		if got != use {
			t.Errorf("use-tf-plugin-cache=%v: Terraform env %v", use, m.Runner.Terraform.Env)
		}
	}
}
