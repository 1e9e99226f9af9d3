package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// member is a valid cluster section for node n1 of three, under dir.
func member(dir string) string {
	return `cluster:
  node_id: n1
  data_dir: ` + dir + `
  bootstrap: true
  peers:
    - {id: n1, raft: 127.0.0.1:7610, api: 127.0.0.1:7600}
    - {id: n2, raft: 127.0.0.1:7611, api: 127.0.0.1:7601}
    - {id: n3, raft: 127.0.0.1:7612, api: 127.0.0.1:7602}
`
}

func TestClusterSection(t *testing.T) {
	c, err := Parse([]byte("metrics_listen: off\n"+member("/var/lib/governor")), "g.yaml", env(nil))
	if err != nil {
		t.Fatal(err)
	}
	cl := c.Cluster
	self, ok := cl.Self()
	if !cl.Enabled() || !ok || self.API != "127.0.0.1:7600" || cl.BindAddress() != "127.0.0.1:7610" || !cl.Bootstrap || len(cl.Peers) != 3 {
		t.Fatalf("parsed %+v", cl)
	}
	c, err = Parse([]byte("metrics_listen: off\n"), "g.yaml", env(nil))
	if err != nil || c.Cluster.Enabled() {
		t.Fatalf("without a cluster section: %+v, %v", c.Cluster, err)
	}
}

// Each mistake in a cluster section is named with the key it is at and
// what is allowed.
func TestClusterMistakes(t *testing.T) {
	base := member("/d")
	tests := []struct {
		name, yaml, want string
	}{
		{"with a database", "database_url: sqlite:/tmp/g.db\n" + base,
			"g.yaml:1: database_url: a cluster member keeps its state in cluster.data_dir, not in a database: remove database_url (or GOVERNOR_DATABASE_URL), or remove the cluster section to run alone"},
		{"adaptive", "adaptive:\n  db: {max: 5}\n" + base,
			"g.yaml:1: adaptive: a cluster member does not run adaptive controllers yet (issue 16): remove the adaptive section, or the cluster section"},
		{"self missing", strings.Replace(base, "node_id: n1", "node_id: n9", 1),
			`g.yaml:2: cluster.node_id: "n9" is none of cluster.peers' ids: list this member among the peers too`},
		{"no id", strings.Replace(base, "  node_id: n1\n", "", 1),
			"g.yaml:1: cluster.node_id: required: this member's id, one of cluster.peers"},
		{"no data dir", strings.Replace(base, "  data_dir: /d\n", "", 1),
			"g.yaml:1: cluster.data_dir: required: the directory that holds this member's log and snapshots"},
		{"duplicate id", strings.Replace(base, "id: n2", "id: n1", 1),
			`g.yaml:7: cluster.peers[1].id: "n1" is already used by cluster.peers[0].id: every member needs its own id and its own addresses`},
		{"duplicate raft address", strings.Replace(base, "7611", "7610", 1),
			`g.yaml:7: cluster.peers[1].raft: "127.0.0.1:7610" is already used by cluster.peers[0].raft: every member needs its own id and its own addresses`},
		{"api address taken by a raft address", strings.Replace(base, "api: 127.0.0.1:7602", "api: 127.0.0.1:7611", 1),
			`g.yaml:8: cluster.peers[2].api: "127.0.0.1:7611" is already used by cluster.peers[1].raft: every member needs its own id and its own addresses`},
		{"bad address", strings.Replace(base, "raft: 127.0.0.1:7612", "raft: nowhere", 1),
			`g.yaml:8: cluster.peers[2].raft: must be host:port that the other members can reach, such as 10.0.0.1:7610; got "nowhere"`},
		{"no peers", "cluster:\n  node_id: n1\n  data_dir: /d\n",
			"g.yaml:1: cluster.peers: required: every member of the cluster, this one too, each with id, raft and api"},
		{"bad bind", strings.Replace(base, "node_id: n1", "node_id: n1\n  bind: here", 1),
			`g.yaml:3: cluster.bind: must be host:port, such as 0.0.0.0:7610; got "here"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml), "g.yaml", env(nil))
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("got %v, want a config error", err)
			}
			if got := err.Error(); !strings.Contains(got, tt.want) {
				t.Errorf("got\n%s\nwant it to contain\n%s", got, tt.want)
			}
		})
	}
}

// The data directory is created when missing; one that cannot be created
// or written in is refused with its key named.
func TestClusterDataDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "b")
	if err := (Cluster{DataDir: dir}).PrepareDataDir(); err != nil {
		t.Fatalf("a new directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the check left %d files behind", len(entries))
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err := (Cluster{DataDir: filepath.Join(file, "sub")}).PrepareDataDir()
	if err == nil || !strings.Contains(err.Error(), "cluster.data_dir: cannot create") {
		t.Errorf("a directory under a file: got %v", err)
	}
}

// The example file's cluster section, uncommented, is a valid member.
func TestExampleClusterSection(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "governor.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "\n# cluster:\n")
	if !ok {
		t.Fatal("the example has no commented cluster section")
	}
	var b strings.Builder
	b.WriteString("cluster:\n")
	for line := range strings.Lines(section) {
		b.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "#"), " "))
	}
	c, err := Parse([]byte(b.String()), "example cluster", env(nil))
	if err != nil {
		t.Fatalf("the example's cluster section does not load:\n%v\n%s", err, b.String())
	}
	if self, ok := c.Cluster.Self(); !ok || self.ID != "n1" || len(c.Cluster.Peers) != 3 {
		t.Errorf("parsed %+v", c.Cluster)
	}
}
