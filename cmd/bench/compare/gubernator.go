package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/gubernator-io/gubernator/v2"
	"github.com/sirupsen/logrus"

	"governor.dev/governor/cmd/internal/bench"
)

// startGubernator starts one Gubernator instance inside this process on
// loopback, owner of every key, memory only, with the settings its own
// daemon starts with.
func startGubernator(ctx context.Context) (bench.Peer, func(), error) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	grpcAddr, err := freeAddr()
	if err != nil {
		return bench.Peer{}, nil, err
	}
	d, err := gubernator.SpawnDaemon(ctx, gubernator.DaemonConfig{
		GRPCListenAddress: grpcAddr,
		HTTPListenAddress: "127.0.0.1:0",
		PeerDiscoveryType: "none",
		Logger:            logrus.NewEntry(log),
	})
	if err != nil {
		return bench.Peer{}, nil, fmt.Errorf("start Gubernator: %w", err)
	}
	d.SetPeers([]gubernator.PeerInfo{{GRPCAddress: grpcAddr, HTTPAddress: d.HTTPListener.Addr().String(), IsOwner: true}})
	return bench.Peer{
		Name:     "Gubernator v2.13.0",
		GRPCAddr: grpcAddr,
		HTTPURL:  "http://" + d.HTTPListener.Addr().String(),
	}, d.Close, nil
}

// freeAddr returns a loopback address with a port nothing listens on now.
// Gubernator's HTTP gateway dials the configured gRPC address itself, so
// that address must carry a real port rather than 0; another program may
// take the port before Gubernator binds it, which fails the start.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port for Gubernator: %w", err)
	}
	addr := l.Addr().String()
	return addr, l.Close()
}
