package faultnet

import "errors"

// ErrDropped is wrapped by the error of a call whose request or reply the
// network dropped.
var ErrDropped = errors.New("faultnet: message dropped")

// ErrUnknownPeer is wrapped by the error of a call to an address that has no
// transport in the network.
var ErrUnknownPeer = errors.New("faultnet: no transport at this address")

// ErrClosed is wrapped by the error of a call to or from a closed transport.
var ErrClosed = errors.New("faultnet: transport closed")

// ErrTimeout is wrapped by the error of a call whose peer did not take or
// answer the request within the network's timeout.
var ErrTimeout = errors.New("faultnet: peer did not answer in time")
