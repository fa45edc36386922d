package main

import (
	"context"
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
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// TestServeSQLTLS serves HTTPS with --tls-cert/--tls-key and checks that
// HTTP/2 is negotiated.
func TestServeSQLTLS(t *testing.T) {
	dir := t.TempDir()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	dbPath := filepath.Join(dir, "demo.db")
	if err := sqlserver.EnsureDemo(dbPath); err != nil {
		t.Fatal(err)
	}

	// A missing key file fails the start.
	if r := mcpkit(t, "serve", "sql", "--addr", "127.0.0.1:0", "--db", dbPath, "--tls-cert", certFile, "--tls-key", filepath.Join(dir, "none.pem")); r.code != exitFailed || !strings.Contains(r.stderr, "--tls-key") {
		t.Errorf("missing key: %d %s", r.code, r.stderr)
	}

	ctx, cancel := context.WithCancel(context.Background())
	inv := start(ctx, terminal{}, "", "serve", "sql", "--addr", "127.0.0.1:0", "--db", dbPath, "--tls-cert", certFile, "--tls-key", keyFile)
	t.Cleanup(func() {
		cancel()
		if r := inv.wait(t); r.code != exitOK {
			t.Errorf("serve sql ended with %d: %s", r.code, r.stderr)
		}
	})
	re := regexp.MustCompile(`on (https://\S+/mcp)`)
	var url string
	for deadline := time.Now().Add(10 * time.Second); url == ""; {
		if m := re.FindStringSubmatch(inv.stderr.String()); m != nil {
			url = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("serve sql did not start: %s", inv.stderr.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	pool := x509.NewCertPool()
	pool.AddCert(mustParse(t, der))
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 {
		t.Errorf("protocol %s, want HTTP/2", resp.Proto)
	}
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
