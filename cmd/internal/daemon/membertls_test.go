package daemon

import (
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"governor.dev/governor/cmd/internal/config"
	"governor.dev/governor/internal/testcert"
)

// tlsMembers starts a member of n for each certificate in certs, each
// serving its API over TLS with its certificate and trusting, between
// members, the CA its certificate is (testcert's are their own CAs). extra
// is added to each file. It returns the members and their API addresses.
func tlsMembers(t *testing.T, certs []testcert.Cert, extra string) ([]*Daemon, []string) {
	t.Helper()
	dir := t.TempDir()
	files, apis := clusterFiles(t, dir, len(certs))
	var ds []*Daemon
	for i, f := range files {
		certDir, err := os.MkdirTemp(dir, "cert")
		must(t, err)
		certFile, keyFile := certs[i].Write(t, certDir)
		more := fmt.Sprintf("  tls: {ca_file: %q}\ntls: {cert_file: %q, key_file: %q}\n%s", certFile, certFile, keyFile, extra)
		raw, err := os.ReadFile(f)
		must(t, err)
		must(t, os.WriteFile(f, append(raw, more...), 0o600))
		cfg, err := config.Load(f)
		must(t, err)
		ds = append(ds, startDaemon(t, cfg, Options{}))
	}
	return ds, apis
}

// replicated waits until the members of want hold the same log, beyond
// the bootstrap entry and the leader's first: the leader's seeding of the
// configuration went through them all.
func replicated(t *testing.T, want []*Daemon) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		idx := map[uint64]bool{}
		for _, d := range want {
			idx[d.member.node.Raft().AppliedIndex()] = true
		}
		if len(idx) == 1 && !idx[0] && !idx[1] && !idx[2] {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the members' applied indices never met beyond the start: %v", idx)
		}
		time.Sleep(20 * time.Millisecond) // polling raft's progress, not a result
	}
}

// Three members whose API uses TLS talk to each other over mutual TLS
// with the API's certificate: they elect a leader and replicate its log.
func TestMembersTalkOverTLS(t *testing.T) {
	cert := testcert.New(t, 1)
	ds, _ := tlsMembers(t, []testcert.Cert{cert, cert, cert}, "")
	replicated(t, ds)
}

// A member whose certificate another CA signed is refused by the others:
// it never receives their log, while the two that trust each other go
// on. A transport with that certificate (which trusts the leader's), and
// one in plain text, cannot make the leader take a higher term.
func TestMemberOfAnotherCAIsRefused(t *testing.T) {
	ours, theirs := testcert.New(t, 1), testcert.New(t, 2)
	ds, _ := tlsMembers(t, []testcert.Cert{ours, ours, theirs}, "")
	replicated(t, ds[:2])
	time.Sleep(time.Second) // long enough for a heartbeat to reach an accepted member; none may reach this one
	if got := ds[2].member.node.Raft().AppliedIndex(); got > 1 {
		t.Fatalf("the member of another CA applied the log up to %d", got)
	}
	lead := ds[0]
	if lead.member.node.Raft().State() != raft.Leader {
		lead = ds[1]
	}
	addr, id := lead.member.node.Raft().LeaderWithID()
	term := lead.member.node.Raft().CurrentTerm()

	certFile, keyFile := theirs.Write(t, t.TempDir())
	certs, err := loadCertificate(certFile, keyFile, lead.log, time.Now)
	must(t, err)
	oursFile, _ := ours.Write(t, t.TempDir())
	ca, err := loadCA(oursFile) // it trusts the leader: only the leader's check of its certificate refuses it
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	foreign := raft.NewNetworkTransport(newTLSLayer(ln, ln.Addr(), certs.get, ca), 1, 5*time.Second, io.Discard)
	defer foreign.Close()
	plain, err := raft.NewTCPTransport("127.0.0.1:0", nil, 1, 5*time.Second, io.Discard)
	must(t, err)
	defer plain.Close()
	for name, tr := range map[string]raft.Transport{"another CA": foreign, "plain text": plain} {
		var resp raft.RequestVoteResponse
		req := raft.RequestVoteRequest{RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte("intruder"), Addr: []byte(tr.LocalAddr())}, Term: term + 1000, LastLogIndex: 1 << 40, LastLogTerm: term + 1000}
		if err := tr.RequestVote(id, addr, &req, &resp); err == nil {
			t.Errorf("%s: the leader answered a vote request: %+v", name, resp)
		}
	}
	if now := lead.member.node.Raft().CurrentTerm(); now >= term+1000 {
		t.Fatalf("the leader took term %d from a peer it should have refused", now)
	}
}
