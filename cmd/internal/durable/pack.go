package durable

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"fmt"
	"io"

	"governor.dev/governor/cmd/internal/engine"
)

// A snapshot is stored gzip-compressed at the fastest level: the smaller
// write matters more than the CPU, because SQLite has one writer and every
// commit waits while a snapshot is written. Compressing runs on the
// snapshot goroutine, outside every lock. A snapshot stored without
// compression (as it was before) still loads: its encoding starts with the
// binary mark or '{', never with gzip's magic bytes.
var gzipMagic = []byte{0x1f, 0x8b}

// pack writes what write writes, compressed for storage, to w, and
// returns how many bytes write wrote before compression.
func pack(w io.Writer, write func(io.Writer) (int64, error)) (int64, error) {
	zw, err := gzip.NewWriterLevel(w, flate.BestSpeed)
	if err != nil {
		return 0, err
	}
	n, err := write(zw)
	if err != nil {
		return n, err
	}
	return n, zw.Close()
}

// counter counts what passes through it to w.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
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
