package daemon

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/config"
)

// Raft's network transport: connections kept per peer, and how long one
// send may take.
const (
	memberPool    = 3
	memberTimeout = 10 * time.Second
)

// memberTransport is the raft transport between members: plain TCP, or,
// when the API uses TLS, TLS with the API's certificate in both
// directions and peers checked against cluster.tls.ca_file.
func (d *Daemon) memberTransport(cl config.Cluster, advertise *net.TCPAddr) (*raft.NetworkTransport, error) {
	if !d.cfg.TLS.Enabled() {
		trans, err := raft.NewTCPTransport(cl.BindAddress(), advertise, memberPool, memberTimeout, io.Discard)
		if err != nil {
			return nil, fmt.Errorf("%w: listen on %s for the cluster's members: %w", ErrAddress, cl.BindAddress(), err)
		}
		return trans, nil
	}
	certs, err := loadCertificate(d.cfg.TLS.CertFile, d.cfg.TLS.KeyFile, d.log, time.Now)
	if err != nil {
		return nil, err
	}
	ca, err := loadCA(cl.TLS.CAFile)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cl.BindAddress())
	if err != nil {
		return nil, fmt.Errorf("%w: listen on %s for the cluster's members: %w", ErrAddress, cl.BindAddress(), err)
	}
	layer := newTLSLayer(ln, advertise, certs.get, ca)
	return raft.NewNetworkTransport(layer, memberPool, memberTimeout, io.Discard), nil
}

// loadCA reads the PEM certificates that sign the members'.
func loadCA(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: cluster.tls.ca_file: %w", ErrCertificate, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: cluster.tls.ca_file: %s holds no PEM certificate: give the certificates that sign the members'", ErrCertificate, file)
	}
	return pool, nil
}

// tlsLayer is a raft.StreamLayer over mutual TLS 1.3: every connection,
// accepted or dialled, presents this member's certificate and requires
// the peer's, signed by the members' CA. Any certificate the CA signed is
// a member; host names are not checked, since the raft addresses need not
// be in the API's certificate. A peer that speaks plain text, or shows no
// certificate or another CA's, fails the handshake on its connection's
// first read or write, and raft drops the connection.
type tlsLayer struct {
	net.Listener
	advertise net.Addr
	client    *tls.Config
}

var _ raft.StreamLayer = (*tlsLayer)(nil)

func newTLSLayer(ln net.Listener, advertise net.Addr, cert func(*tls.ClientHelloInfo) (*tls.Certificate, error), ca *x509.CertPool) *tlsLayer {
	verify := verifyMember(ca)
	server := &tls.Config{
		MinVersion: tls.VersionTLS13, GetCertificate: cert,
		ClientAuth: tls.RequireAnyClientCert, VerifyPeerCertificate: verify,
	}
	client := &tls.Config{
		MinVersion:            tls.VersionTLS13,
		GetClientCertificate:  func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert(nil) },
		InsecureSkipVerify:    true, // verifyMember checks the chain; no host name applies (see tlsLayer)
		VerifyPeerCertificate: verify,
	}
	return &tlsLayer{Listener: tls.NewListener(ln, server), advertise: advertise, client: client}
}

// Addr is the address the other members reach this one at.
func (l *tlsLayer) Addr() net.Addr { return l.advertise }

// Dial opens a TLS connection to a member and completes the handshake
// within timeout.
func (l *tlsLayer) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout}
	conn, err := tls.DialWithDialer(d, "tcp", string(address), l.client)
	if err != nil {
		return nil, fmt.Errorf("dial member %s over TLS: %w", address, err)
	}
	return conn, nil
}

// verifyMember checks a peer's chain against the members' CA. A member's
// certificate is a server certificate (the API's), so either server or
// client use is accepted.
func verifyMember(ca *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("the member showed no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, der := range raw {
			c, err := x509.ParseCertificate(der)
			if err != nil {
				return fmt.Errorf("parse the member's certificate: %w", err)
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: ca, Intermediates: inter,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}})
		if err != nil {
			return fmt.Errorf("the member's certificate is not signed by cluster.tls.ca_file: %w", err)
		}
		return nil
	}
}
