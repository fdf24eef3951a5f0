package hotkvtest

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

// Certs are a test CA and the certificates it signed, as PEM files in Dir:
// ca.crt, server.crt/server.key (for 127.0.0.1 and localhost), and
// client.crt/client.key (Common Name "Client-only", as Redis's test certs).
type Certs struct {
	Dir                       string
	CA, ServerCert, ServerKey string
	ClientCert, ClientKey     string
	GenericCert, GenericKey   string // for both ends (Redis's tests/tls/redis.crt): a replica's own certificate as its client one
	Pool                      *x509.CertPool
	Client                    tls.Certificate
}

// MakeCerts writes a CA, a server and a client certificate under a new
// temporary directory.
func MakeCerts(t testing.TB) *Certs {
	t.Helper()
	dir := t.TempDir()
	c := &Certs{Dir: dir}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "HotKV Test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	c.Pool = x509.NewCertPool()
	c.Pool.AddCert(ca)
	c.CA = writePEM(t, dir, "ca.crt", "CERTIFICATE", caDER)
	issue := func(name, cn string, serial int64, usage ...x509.ExtKeyUsage) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn, Organization: []string{"HotKV Test"}},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: usage,
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"}}
		der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, _ := x509.MarshalPKCS8PrivateKey(key)
		return writePEM(t, dir, name+".crt", "CERTIFICATE", der), writePEM(t, dir, name+".key", "PRIVATE KEY", kder)
	}
	c.ServerCert, c.ServerKey = issue("server", "Server-only", 2, x509.ExtKeyUsageServerAuth)
	c.ClientCert, c.ClientKey = issue("client", "Client-only", 3, x509.ExtKeyUsageClientAuth)
	c.GenericCert, c.GenericKey = issue("redis", "Generic-cert", 4, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
	if c.Client, err = tls.LoadX509KeyPair(c.ClientCert, c.ClientKey); err != nil {
		t.Fatal(err)
	}
	return c
}

// ClientTLS is a client configuration that trusts the CA and presents the
// client certificate when withCert.
func (c *Certs) ClientTLS(withCert bool) *tls.Config {
	tc := &tls.Config{RootCAs: c.Pool, ServerName: "localhost"}
	if withCert {
		tc.Certificates = []tls.Certificate{c.Client}
	}
	return tc
}

func writePEM(t testing.TB, dir, name, typ string, der []byte) string {
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// FreePort is a TCP port free on 127.0.0.1 a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
