package leasehold

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLS and mutual TLS against a real server with a key ACL (docs/security.md): certificates
// made here with crypto/x509, a throw-away CA.

type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newCA(t *testing.T, name string) *testCA {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a PEM certificate and PKCS#8 key signed by the CA.
func (ca *testCA) issue(t *testing.T, cn string, ips []net.IP, uris []*url.URL, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: ips, URIs: uris}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	pk, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk})
}

func TestMutualTLSWithKeyACL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ca := newCA(t, "leasehold go test CA")
	srvCert, srvKey := ca.issue(t, "server", []net.IP{net.ParseIP("127.0.0.1")}, nil, x509.ExtKeyUsageServerAuth)
	spiffe, _ := url.Parse("spiffe://leasehold-test/go")
	cliCert, cliKey := ca.issue(t, "go-client", nil, []*url.URL{spiffe}, x509.ExtKeyUsageClientAuth)
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	b := "--spring.ssl.bundle.pem.lh."
	srv := startServer(t, "",
		b+"keystore.certificate=file:"+write("server.crt", srvCert),
		b+"keystore.private-key=file:"+write("server.key", srvKey),
		b+"truststore.certificate=file:"+write("ca.crt", ca.pem),
		"--leasehold.tls.bundle=lh", "--leasehold.tls.client-auth=need",
		"--leasehold.acl[uri:spiffe://leasehold-test/go]=go/")
	t.Cleanup(srv.close)
	ctx := context.Background()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.pem)
	pair, err := tls.X509KeyPair(cliCert, cliKey)
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, Options{Servers: []string{srv.addr}, PoolSize: 1,
		TLS: &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}}})
	tk := mustAcquire(t, c, "go/tls", 0, 10*time.Second)
	if err := tk.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// a key the ACL does not give this identity: X 7 closes the session
	_, err = c.Acquire(ctx, "other/tls", 0, 10*time.Second)
	if !errors.Is(err, ErrForbidden) || !errors.Is(err, ErrIndeterminate) {
		t.Fatalf("want ErrForbidden (and Indeterminate), got %v", err)
	}
	mustAcquire(t, c, "go/tls", 0, 10*time.Second).Release(ctx) // a new session serves again

	// no client certificate: the handshake fails, nothing was sent
	noCert := newClient(t, Options{Servers: []string{srv.addr}, TransportDeadline: 3 * time.Second,
		TLS: &tls.Config{RootCAs: roots}})
	if _, err := noCert.Acquire(ctx, "go/tls", 0, 10*time.Second); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("without a client certificate: want ErrUnavailable, got %v", err)
	}
	// a server certificate from a CA the client does not trust
	other := x509.NewCertPool()
	other.AppendCertsFromPEM(newCA(t, "another CA").pem)
	wrongCA := newClient(t, Options{Servers: []string{srv.addr}, TransportDeadline: 3 * time.Second,
		TLS: &tls.Config{RootCAs: other, Certificates: []tls.Certificate{pair}}})
	_, err = wrongCA.Acquire(ctx, "go/tls", 0, 10*time.Second)
	var unknown x509.UnknownAuthorityError
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &unknown) {
		t.Fatalf("an untrusted server: want ErrUnavailable quoting the unknown authority, got %v", err)
	}
}
