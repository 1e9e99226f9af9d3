package durable

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"

	"governor.dev/governor/cmd/internal/engine"
)

// A snapshot is stored gzip-compressed at the fastest level. Its encoding
// is about 180 bytes a node and compresses about tenfold, and the smaller
// write matters more than the CPU: SQLite has one writer, so every commit
// waits while a snapshot is written. Compressing runs on the snapshot
// goroutine, outside every lock. A snapshot stored without compression (as
// it was before) still loads: its encoding starts with '{', never with
// gzip's magic bytes.
var gzipMagic = []byte{0x1f, 0x8b}

// pack compresses an encoded snapshot for storage.
func pack(raw []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(raw)/8 + 64)
	zw, err := gzip.NewWriterLevel(&buf, flate.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// unpack returns the encoding of a stored snapshot, compressed or not.
func unpack(stored []byte) ([]byte, error) {
	if !bytes.HasPrefix(stored, gzipMagic) {
		return stored, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(stored))
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", engine.ErrCorrupt, err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%w: snapshot: %v", engine.ErrCorrupt, err)
	}
	return raw, nil
}
