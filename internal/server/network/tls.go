package network

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hotkv/hotkv/internal/config"
)

// TLS (decision 0047): the tls-port listeners speak TLS through Go's
// crypto/tls. Each connection's handshake runs on a goroutine of its own;
// then an event loop serves it (tls_loop_linux.go), or, in goroutine mode,
// that goroutine does. Everything past the handshake is the same connection
// as any other. The tls-* parameters build one *tls.Config; a
// CONFIG SET of any of them builds a new one (the certificate files are read
// again), which new connections use, or fails with Redis's error and changes
// nothing.

// tlsParams are the parameters the configuration is built from.
var tlsParams = []string{"tls-cert-file", "tls-key-file", "tls-key-file-pass", "tls-ca-cert-file",
	"tls-ca-cert-dir", "tls-auth-clients", "tls-protocols", "tls-ciphers", "tls-ciphersuites",
	"tls-session-caching", "tls-session-cache-timeout", "tls-session-cache-size", "tls-prefer-server-ciphers",
	"tls-dh-params-file", "tls-client-cert-file", "tls-client-key-file", "tls-client-key-file-pass",
	"tls-replication", "tls-cluster"}

// errTLSUpdate is CONFIG SET's error when the new TLS settings do not load.
var errTLSUpdate = errors.New("Unable to update TLS configuration. Check server logs.")

// tlsWanted reports whether TLS is configured for use (applyTlsCfg's test).
func (n *Net) tlsWanted() bool {
	return n.cfg.Int("tls-port") != 0 || n.cfg.Bool("tls-replication") || n.cfg.Bool("tls-cluster")
}

// configureTLS builds the TLS configuration from the parameters and installs
// it; on error nothing changes and the reason is logged.
func (n *Net) configureTLS() error {
	tc, err := n.buildTLS()
	if err != nil {
		n.log.Warn("Failed to configure TLS: " + err.Error())
		return err
	}
	n.tlsConf.Store(tc)
	return nil
}

// buildTLS is tlsConfigure: the certificate and key, the CAs that sign
// client certificates, client authentication, versions, ciphers and session
// resumption.
func (n *Net) buildTLS() (*tls.Config, error) {
	c := n.cfg
	certFile, keyFile := c.String("tls-cert-file"), c.String("tls-key-file")
	if certFile == "" || keyFile == "" {
		return nil, errors.New("no tls-cert-file or tls-key-file configured")
	}
	cert, err := loadKeyPair(certFile, keyFile, c.String("tls-key-file-pass"))
	if err != nil {
		return nil, err
	}
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	caFile, caDir := c.String("tls-ca-cert-file"), c.String("tls-ca-cert-dir")
	auth := c.String("tls-auth-clients")
	if caFile == "" && caDir == "" && (auth != "no" || c.Bool("tls-replication") || c.Bool("tls-cluster")) {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	if caFile != "" || caDir != "" {
		pool, err := loadCAs(caFile, caDir)
		if err != nil {
			return nil, err
		}
		tc.ClientCAs = pool
	}
	switch auth {
	case "yes":
		tc.ClientAuth = tls.RequireAndVerifyClientCert
	case "optional":
		tc.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		tc.ClientAuth = tls.NoClientCert
	}
	if tc.MinVersion, tc.MaxVersion, err = parseProtocols(c.String("tls-protocols")); err != nil {
		return nil, err
	}
	if s := c.String("tls-ciphers"); s != "" {
		if tc.CipherSuites, err = parseCiphers(s); err != nil {
			return nil, err
		}
	}
	if err := checkCipherSuites(c.String("tls-ciphersuites")); err != nil {
		return nil, err
	}
	if !c.Bool("tls-session-caching") {
		tc.SessionTicketsDisabled = true
	} else {
		limitSessionAge(tc, time.Duration(c.Int("tls-session-cache-timeout"))*time.Second)
	}
	return tc, nil
}

// loadKeyPair reads a certificate and its key; an encrypted key (PEM
// "Proc-Type: 4,ENCRYPTED", as `openssl rsa -aes256` writes) is decrypted
// with pass.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
	}
	if block, _ := pem.Decode(keyPEM); block != nil {
		encrypted := block.Type == "ENCRYPTED PRIVATE KEY" || x509.IsEncryptedPEMBlock(block) //nolint:staticcheck // OpenSSL's legacy PEM encryption is what Redis reads too
		if encrypted && pass == "" {
			return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: encrypted and no tls-key-file-pass", keyFile)
		}
		var der []byte
		var err error
		typ := block.Type
		switch {
		case block.Type == "ENCRYPTED PRIVATE KEY":
			der, err = decryptPKCS8(block.Bytes, []byte(pass))
			typ = "PRIVATE KEY"
		case encrypted:
			der, err = x509.DecryptPEMBlock(block, []byte(pass)) //nolint:staticcheck
		}
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
		}
		if der != nil {
			keyPEM = pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate/key pair: %v", err)
	}
	return cert, nil
}

// loadCAs reads the CA certificates of a file and of the PEM files of a
// directory.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if file != "" {
		data, err := os.ReadFile(file)
		if err != nil || !pool.AppendCertsFromPEM(data) {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s", file)
		}
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s: %v", dir, err)
		}
		for _, e := range ents {
			if data, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				pool.AppendCertsFromPEM(data)
			}
		}
	}
	return pool, nil
}

var tlsVersions = map[string]uint16{"tlsv1": tls.VersionTLS10, "tlsv1.1": tls.VersionTLS11,
	"tlsv1.2": tls.VersionTLS12, "tlsv1.3": tls.VersionTLS13}

// parseProtocols is tls-protocols: TLSv1.2 and TLSv1.3 when empty; the
// versions named must be a contiguous range (Go has a minimum and a maximum).
func parseProtocols(s string) (lo, hi uint16, err error) {
	if strings.TrimSpace(s) == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	set := map[uint16]bool{}
	for _, w := range strings.Fields(s) {
		v, ok := tlsVersions[strings.ToLower(w)]
		if !ok {
			return 0, 0, fmt.Errorf("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
		set[v] = true
		if lo == 0 || v < lo {
			lo = v
		}
		hi = max(hi, v)
	}
	for v := lo; v <= hi; v++ {
		if !set[v] {
			return 0, 0, fmt.Errorf("tls-protocols %q: the versions must be a contiguous range in HotKV (Go's crypto/tls)", s)
		}
	}
	return lo, hi, nil
}

// opensslCiphers maps OpenSSL's TLS 1.2 cipher names to Go's suites.
var opensslCiphers = map[string]uint16{
	"ECDHE-ECDSA-AES128-GCM-SHA256": tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-RSA-AES128-GCM-SHA256":   tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	"ECDHE-ECDSA-AES256-GCM-SHA384": tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-RSA-AES256-GCM-SHA384":   tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	"ECDHE-ECDSA-CHACHA20-POLY1305": tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-RSA-CHACHA20-POLY1305":   tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	"ECDHE-ECDSA-AES128-SHA256":     tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-RSA-AES128-SHA256":       tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256,
	"ECDHE-ECDSA-AES128-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA,
	"ECDHE-RSA-AES128-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
	"ECDHE-ECDSA-AES256-SHA":        tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-AES256-SHA":          tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA,
	"AES128-GCM-SHA256":             tls.TLS_RSA_WITH_AES_128_GCM_SHA256,
	"AES256-GCM-SHA384":             tls.TLS_RSA_WITH_AES_256_GCM_SHA384,
	"AES128-SHA256":                 tls.TLS_RSA_WITH_AES_128_CBC_SHA256,
	"AES128-SHA":                    tls.TLS_RSA_WITH_AES_128_CBC_SHA,
	"AES256-SHA":                    tls.TLS_RSA_WITH_AES_256_CBC_SHA,
	"ECDHE-RSA-DES-CBC3-SHA":        tls.TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA,
	"DES-CBC3-SHA":                  tls.TLS_RSA_WITH_3DES_EDE_CBC_SHA,
}

// parseCiphers is tls-ciphers, an OpenSSL cipher list: names, DEFAULT (Go's
// default suites), ALL (every suite here), and -NAME or !NAME to take one
// out, separated by colons, commas or spaces. Names Go does not implement
// are skipped as OpenSSL skips unknown ones; a list that leaves no suite is
// an error.
func parseCiphers(s string) ([]uint16, error) {
	var out []uint16
	add := func(id uint16) {
		for _, x := range out {
			if x == id {
				return
			}
		}
		out = append(out, id)
	}
	remove := func(id uint16) {
		for i, x := range out {
			if x == id {
				out = append(out[:i], out[i+1:]...)
				return
			}
		}
	}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		neg := w[0] == '-' || w[0] == '!'
		name := strings.TrimLeft(w, "-!+")
		var ids []uint16
		switch strings.ToUpper(name) {
		case "DEFAULT", "HIGH":
			for _, cs := range tls.CipherSuites() {
				ids = append(ids, cs.ID)
			}
		case "ALL":
			for _, id := range opensslCiphers {
				ids = append(ids, id)
			}
		default:
			if id, ok := opensslCiphers[strings.ToUpper(name)]; ok {
				ids = append(ids, id)
			}
		}
		for _, id := range ids {
			if neg {
				remove(id)
			} else {
				add(id)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("Failed to configure ciphers: %s", s)
	}
	return out, nil
}

// checkCipherSuites is tls-ciphersuites (TLS 1.3): Go's crypto/tls always
// offers its three TLS 1.3 suites and cannot restrict them, so a list is
// accepted only when it names all three (the default list, or OpenSSL's).
func checkCipherSuites(s string) error {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	named := map[string]bool{}
	for _, w := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' }) {
		named[strings.ToUpper(strings.TrimSpace(w))] = true
	}
	for _, need := range []string{"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"} {
		if !named[need] {
			return fmt.Errorf("tls-ciphersuites %q: HotKV (Go's crypto/tls) cannot restrict the TLS 1.3 suites; the list must name TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384 and TLS_CHACHA20_POLY1305_SHA256", s)
		}
	}
	return nil
}

// limitSessionAge makes a resumed session valid for at most age
// (tls-session-cache-timeout): the ticket carries its creation time.
func limitSessionAge(tc *tls.Config, age time.Duration) {
	tc.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(time.Now().Unix()))
		ss.Extra = append(ss.Extra, b[:])
		return tc.EncryptTicket(cs, ss)
	}
	tc.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := tc.DecryptTicket(identity, cs)
		if err != nil || ss == nil || len(ss.Extra) == 0 || len(ss.Extra[len(ss.Extra)-1]) != 8 {
			return nil, nil // a full handshake instead
		}
		born := time.Unix(int64(binary.BigEndian.Uint64(ss.Extra[len(ss.Extra)-1])), 0)
		if time.Since(born) > age {
			return nil, nil
		}
		return ss, nil
	}
}

// watchTLSParams rebuilds the configuration on CONFIG SET of a tls-*
// parameter (applyTlsCfg) and moves the TLS listeners on tls-port.
func (n *Net) watchTLSParams() {
	for _, p := range tlsParams {
		n.cfg.OnChange(p, func(string) error {
			if !n.tlsWanted() {
				return nil
			}
			if n.configureTLS() != nil {
				return errTLSUpdate
			}
			return nil
		})
	}
	n.cfg.OnChange("tls-port", func(v string) error {
		port, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		if port != 0 && n.tlsConf.Load() == nil && n.configureTLS() != nil {
			return errTLSUpdate
		}
		return n.rebindTLS(n.bind, port)
	})
}

// rebindTLS moves the TLS listeners to port (0: none), as rebind does for
// the TCP ones.
func (n *Net) rebindTLS(bind string, port int64) error {
	n.lnMu.Lock()
	defer n.lnMu.Unlock()
	for _, ln := range n.tlsLns {
		_ = ln.Close()
	}
	lns, err := listenAll(bind, port)
	if err != nil {
		n.log.Warn("failed to bind", "bind", bind, "tls-port", port, "err", err)
		n.tlsLns = nil
		if restored, rerr := listenAll(bind, n.tlsPort); rerr == nil {
			n.startTLSListeners(restored)
		}
		return errors.New("Unable to listen on this port. Check server logs.")
	}
	n.tlsPort = port
	n.startTLSListeners(lns)
	return nil
}

// startTLSListeners installs lns and, when the server runs, accepts on them.
// Call with lnMu held.
func (n *Net) startTLSListeners(lns []net.Listener) {
	n.tlsLns = lns
	if !n.running {
		return
	}
	for _, ln := range lns {
		go n.acceptTLS(ln)
	}
}

// acceptTLS accepts TLS connections on ln: each one's handshake runs on its
// own goroutine, which then serves it.
func (n *Net) acceptTLS(ln net.Listener) {
	n.acceptEach(ln, func(conn net.Conn) bool {
		go n.handshake(conn)
		return true
	})
}

// tlsHandshakeTimeout bounds a handshake: a client that opens the socket and
// says nothing holds no goroutine for longer.
const tlsHandshakeTimeout = 10 * time.Second

func (n *Net) handshake(raw net.Conn) {
	tc := n.tlsConf.Load()
	if tc == nil {
		_ = raw.Close()
		return
	}
	if t, ok := raw.(*net.TCPConn); ok {
		_ = t.SetNoDelay(true)
		if ka := n.cfg.Int("tcp-keepalive"); ka > 0 {
			_ = t.SetKeepAlive(true)
			_ = t.SetKeepAlivePeriod(time.Duration(ka) * time.Second)
		}
	}
	if !n.goroutines && n.handshakeForLoop(raw, tc) {
		return // served by an event loop from now on
	}
	conn := tls.Server(raw, tc)
	if !n.runHandshake(conn, raw) {
		return
	}
	c := n.NewConn(conn)
	c.raw = raw
	if st := conn.ConnectionState(); len(st.PeerCertificates) > 0 && len(st.VerifiedChains) > 0 {
		c.peerCN = st.PeerCertificates[0].Subject.CommonName
	}
	n.serveAccepted(c, conn)
}

// runHandshake runs conn's handshake, bounded by tlsHandshakeTimeout; on
// failure it closes raw and reports false.
func (n *Net) runHandshake(conn *tls.Conn, raw net.Conn) bool {
	ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
	err := conn.HandshakeContext(ctx)
	cancel()
	if err != nil {
		n.log.Debug("Error accepting a client connection: " + err.Error())
		_ = raw.Close()
		return false
	}
	return true
}

// PeerCN is the Common Name of a TLS client's verified certificate ("" for
// none, or a plain connection).
func (c *Conn) PeerCN() string { return c.peerCN }

// ClientTLS is the configuration of this server's outgoing TLS connections,
// a replica's link to its master with tls-replication yes (Redis's
// redisTLSClientCtx): its certificate is tls-client-cert-file and
// tls-client-key-file, or else the server's own tls-cert-file and
// tls-key-file; the master's certificate must chain to tls-ca-cert-file or
// tls-ca-cert-dir (its name is not checked, as Redis does not); versions as
// tls-protocols, suites as tls-ciphers.
func ClientTLS(c *config.Config) (*tls.Config, error) {
	certFile, keyFile, pass := c.String("tls-client-cert-file"), c.String("tls-client-key-file"), c.String("tls-client-key-file-pass")
	if certFile == "" || keyFile == "" {
		certFile, keyFile, pass = c.String("tls-cert-file"), c.String("tls-key-file"), c.String("tls-key-file-pass")
	}
	tc := &tls.Config{}
	if certFile != "" && keyFile != "" {
		cert, err := loadKeyPair(certFile, keyFile, pass)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	caFile, caDir := c.String("tls-ca-cert-file"), c.String("tls-ca-cert-dir")
	if caFile == "" && caDir == "" {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	pool, err := loadCAs(caFile, caDir)
	if err != nil {
		return nil, err
	}
	// the chain is verified, not the name (Redis sets SSL_VERIFY_PEER and no
	// host name)
	tc.InsecureSkipVerify = true
	tc.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("the master sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, b := range raw {
			if certs[i], err = x509.ParseCertificate(b); err != nil {
				return err
			}
		}
		inter := x509.NewCertPool()
		for _, ct := range certs[1:] {
			inter.AddCert(ct)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		return err
	}
	if tc.MinVersion, tc.MaxVersion, err = parseProtocols(c.String("tls-protocols")); err != nil {
		return nil, err
	}
	if s := c.String("tls-ciphers"); s != "" {
		if tc.CipherSuites, err = parseCiphers(s); err != nil {
			return nil, err
		}
	}
	return tc, nil
}
