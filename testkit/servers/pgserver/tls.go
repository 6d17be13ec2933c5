package pgserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
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

// makeCertificate writes a self-signed certificate for localhost and 127.0.0.1 (its own CA)
// and its key into dir, owned by the server's user, and returns the server settings that turn
// TLS on with them (Config.TLS).
func (s *Server) makeCertificate(dir string) (map[string]string, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "localhost", Organization: []string{"hotspotkit temporary server"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	certFile, keyFile := filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	for _, f := range []struct {
		path, kind string
		der        []byte
		mode       os.FileMode
	}{{certFile, "CERTIFICATE", der, 0o644}, {keyFile, "EC PRIVATE KEY", keyDER, 0o600}} {
		if err := os.WriteFile(f.path, pem.EncodeToMemory(&pem.Block{Type: f.kind, Bytes: f.der}), f.mode); err != nil {
			return nil, fmt.Errorf("writing the server's certificate: %w", err)
		}
		if s.uid >= 0 {
			if err := os.Chown(f.path, s.uid, s.gid); err != nil {
				return nil, err
			}
		}
	}
	s.caFile = certFile
	return map[string]string{"ssl": "on", "ssl_cert_file": certFile, "ssl_key_file": keyFile}, nil
}

// CAFile is the certificate a client verifies the server's with (sslrootcert), when the server
// was started with Config.TLS; "" otherwise.
func (s *Server) CAFile() string { return s.caFile }
