package pool

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
	"os"
	"path/filepath"
	"testing"
	"time"
)

// certFiles are the PEM files redis-server needs for TLS.
type certFiles struct{ ca, cert, key string }

// writeTestCerts writes a throwaway CA and a server certificate for
// 127.0.0.1 into dir and returns the files and a client configuration that
// trusts the CA (with ServerName left empty on purpose).
func writeTestCerts(t testing.TB, dir string) (certFiles, *tls.Config) {
	t.Helper()
	caKey, caDER := newCert(t, "shardis test CA", nil, nil)
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, srvDER := newCert(t, "127.0.0.1", caCert, caKey)
	keyDER, err := x509.MarshalPKCS8PrivateKey(srvKey)
	if err != nil {
		t.Fatal(err)
	}
	files := certFiles{
		ca:   filepath.Join(dir, "ca.crt"),
		cert: filepath.Join(dir, "server.crt"),
		key:  filepath.Join(dir, "server.key"),
	}
	writePEM(t, files.ca, "CERTIFICATE", caDER)
	writePEM(t, files.cert, "CERTIFICATE", srvDER)
	writePEM(t, files.key, "PRIVATE KEY", keyDER)
	roots := x509.NewCertPool()
	roots.AddCert(caCert)
	return files, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
}

// newCert makes a CA certificate when parent is nil, otherwise a server
// certificate for 127.0.0.1 signed by parent.
func newCert(t testing.TB, name string, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
	}
	if parent == nil {
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
		parent, parentKey = tmpl, key
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return key, der
}

func writePEM(t testing.TB, path, kind string, der []byte) {
	t.Helper()
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
