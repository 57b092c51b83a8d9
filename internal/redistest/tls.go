package redistest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// TLSFiles are the PEM files of a TLS server's throwaway certificates, all
// inside the server's directory. A TLSFiles is immutable.
type TLSFiles struct {
	// CAFile is the certificate of the CA that signed the others.
	CAFile string
	// CertFile and KeyFile are the server's certificate (for 127.0.0.1
	// and localhost) and private key.
	CertFile, KeyFile string
	// ClientCertFile and ClientKeyFile are a client certificate and key
	// signed by the same CA, for servers that require client certificates
	// (Options.TLSClientAuth) and for the servers' own outgoing
	// replication and cluster bus links.
	ClientCertFile, ClientKeyFile string

	authority *authority
}

// ClientConfig returns a fresh client configuration that trusts only the
// throwaway CA, expects the server name 127.0.0.1 and offers the client
// certificate.
func (f *TLSFiles) ClientConfig() *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(f.authority.caCert)
	return &tls.Config{
		RootCAs:      pool,
		ServerName:   "127.0.0.1",
		Certificates: []tls.Certificate{f.authority.client},
		MinVersion:   tls.VersionTLS12,
	}
}

// authority is a throwaway CA with one server and one client certificate,
// shared by the servers started together.
type authority struct {
	caCert               *x509.Certificate
	caPEM                []byte
	serverPEM, serverKey []byte
	clientPEM, clientKey []byte
	client               tls.Certificate
}

// newAuthority creates an ECDSA P-256 CA valid for 30 days, a server
// certificate for 127.0.0.1, ::1 and localhost, and a client certificate.
func newAuthority() (*authority, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("shardis: generate CA key: %w", err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "shardis redistest CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(30 * 24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("shardis: create CA certificate: %w", err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, fmt.Errorf("shardis: parse CA certificate: %w", err)
	}
	a := &authority{caCert: caCert, caPEM: pemBlock("CERTIFICATE", caDER)}

	leaf := func(cn string, usage []x509.ExtKeyUsage, server bool) (certPEM, keyPEM []byte, err error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, fmt.Errorf("shardis: generate %s key: %w", cn, err)
		}
		tmpl := &x509.Certificate{
			SerialNumber: serial(),
			Subject:      pkix.Name{CommonName: cn},
			NotBefore:    now.Add(-time.Hour),
			NotAfter:     now.Add(30 * 24 * time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  usage,
		}
		if server {
			tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
			tmpl.DNSNames = []string{"localhost"}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, fmt.Errorf("shardis: create %s certificate: %w", cn, err)
		}
		keyDER, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, nil, fmt.Errorf("shardis: encode %s key: %w", cn, err)
		}
		return pemBlock("CERTIFICATE", der), pemBlock("PRIVATE KEY", keyDER), nil
	}
	// The server certificate may also serve as a client certificate, for
	// the links between cluster nodes.
	a.serverPEM, a.serverKey, err = leaf("127.0.0.1",
		[]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}, true)
	if err != nil {
		return nil, err
	}
	a.clientPEM, a.clientKey, err = leaf("shardis redistest client",
		[]x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}, false)
	if err != nil {
		return nil, err
	}
	a.client, err = tls.X509KeyPair(a.clientPEM, a.clientKey)
	if err != nil {
		return nil, fmt.Errorf("shardis: load client key pair: %w", err)
	}
	return a, nil
}

// writeFiles writes the PEM files into dir/tls and returns their paths.
func (a *authority) writeFiles(dir string) (*TLSFiles, error) {
	tdir := filepath.Join(dir, tlsDirName)
	if err := os.MkdirAll(tdir, 0o700); err != nil {
		return nil, fmt.Errorf("shardis: create TLS directory: %w", err)
	}
	f := &TLSFiles{
		CAFile:         filepath.Join(tdir, "ca.crt"),
		CertFile:       filepath.Join(tdir, "server.crt"),
		KeyFile:        filepath.Join(tdir, "server.key"),
		ClientCertFile: filepath.Join(tdir, "client.crt"),
		ClientKeyFile:  filepath.Join(tdir, "client.key"),
		authority:      a,
	}
	for path, data := range map[string][]byte{
		f.CAFile: a.caPEM, f.CertFile: a.serverPEM, f.KeyFile: a.serverKey,
		f.ClientCertFile: a.clientPEM, f.ClientKeyFile: a.clientKey,
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, fmt.Errorf("shardis: write TLS file: %w", err)
		}
	}
	return f, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	if err != nil {
		// crypto/rand does not fail on supported platforms.
		return big.NewInt(time.Now().UnixNano())
	}
	return n.Add(n, big.NewInt(1))
}
