package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hashicorp/raft"
)

// RecoveryFile is the file in a member's data directory that makes Open
// recover a cluster that lost its quorum for good: it lists the servers of
// the new configuration, this member among them, as
//
//	{"members": [{"id": "a", "raft": "10.0.0.1:7610"}]}
//
// Open forces that configuration on the member's log and snapshots
// (raft.RecoverCluster: every entry in its log counts as committed), then
// renames the file to RecoveryFile+".done", so a later start does not
// recover again. The usual recovery lists the survivor alone; once it
// leads, new members join with AddVoter.
const RecoveryFile = "recover.json"

// recovery is RecoveryFile's form.
type recovery struct {
	Members []struct {
		ID   string `json:"id"`
		Raft string `json:"raft"`
	} `json:"members"`
}

// readRecovery returns the configuration of dir's RecoveryFile, or false
// when there is none.
func readRecovery(dir string, self raft.ServerID) (raft.Configuration, bool, error) {
	path := filepath.Join(dir, RecoveryFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return raft.Configuration{}, false, nil
	}
	if err != nil {
		return raft.Configuration{}, false, fmt.Errorf("read %s: %w", path, err)
	}
	var r recovery
	if err := json.Unmarshal(raw, &r); err != nil {
		return raft.Configuration{}, false, fmt.Errorf("%s: %w; it must be {\"members\": [{\"id\": ..., \"raft\": \"host:port\"}, ...]}", path, err)
	}
	var conf raft.Configuration
	ids, addrs := map[string]bool{}, map[string]bool{}
	for i, m := range r.Members {
		if m.ID == "" || m.Raft == "" || ids[m.ID] || addrs[m.Raft] {
			return conf, false, fmt.Errorf("%s: member %d needs an id and a raft address that no other member has; got id %q, raft %q", path, i+1, m.ID, m.Raft)
		}
		ids[m.ID], addrs[m.Raft] = true, true
		conf.Servers = append(conf.Servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(m.ID), Address: raft.ServerAddress(m.Raft)})
	}
	if !ids[string(self)] {
		return conf, false, fmt.Errorf("%s does not list this member, %s: list it among the members", path, self)
	}
	return conf, true, nil
}

// recoverIfAsked runs the recovery dir's RecoveryFile asks for, if any, on
// a member with state, and renames the file once done.
func recoverIfAsked(cfg Config, rc *raft.Config, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore) error {
	if cfg.Dir == "" {
		return nil
	}
	conf, ok, err := readRecovery(cfg.Dir, cfg.ID)
	if err != nil || !ok {
		return err
	}
	has, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return err
	}
	if !has {
		return fmt.Errorf("%s asks to recover, but %s holds no state of a cluster: remove the file, or give the data directory of a surviving member", RecoveryFile, cfg.Dir)
	}
	// RecoverCluster leaves the FSM it is given unusable: give it a fresh one.
	if err := raft.RecoverCluster(rc, NewFSM(), logs, stable, snaps, cfg.Transport, conf); err != nil {
		return fmt.Errorf("recover the cluster from %s: %w", RecoveryFile, err)
	}
	path := filepath.Join(cfg.Dir, RecoveryFile)
	return os.Rename(path, path+".done")
}
