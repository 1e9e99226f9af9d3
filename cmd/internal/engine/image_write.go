package engine

import (
	"io"
	"slices"
)

// imageChunk is how many encoded bytes WriteTo gathers before each write.
const imageChunk = 32 << 10

// WriteTo writes the image's snapshot in its stored form (the encoding
// Snapshot.Encode gives) to w, a record at a time: what it holds besides w
// is a chunk of encoding and the ids of one kind of record, never a copy of
// the records or the whole encoding. Like Snapshot, it must not run during
// an Apply.
func (im *Image) WriteTo(w io.Writer) (int64, error) {
	cw := &chunkWriter{w: w, b: make([]byte, 0, imageChunk+4096)}
	cw.b = appendSnapshotHead(cw.b, im.seq, im.time, im.next, &im.settings)
	writeRecs(cw, im.nodes, appendNodeRec)
	writeRecs(cw, im.sessions, appendSessionRec)
	writeRecs(cw, im.leases, appendLeaseRec)
	writeRecs(cw, im.tombs, appendTombRec)
	cw.flush()
	return cw.n, cw.err
}

// Nodes returns how many nodes the image holds.
func (im *Image) Nodes() int { return len(im.nodes) }

// Time returns the engine's time the image is at.
func (im *Image) Time() int64 { return im.time }

// chunkWriter gathers encoded records and writes them in chunks. Its first
// error sticks.
type chunkWriter struct {
	w   io.Writer
	b   []byte
	n   int64
	err error
}

func (cw *chunkWriter) flush() {
	if cw.err == nil && len(cw.b) > 0 {
		var n int
		n, cw.err = cw.w.Write(cw.b)
		cw.n += int64(n)
	}
	cw.b = cw.b[:0]
}

// writeRecs encodes the records of m in id order.
func writeRecs[T any](cw *chunkWriter, m map[ID]*T, appendRec func([]byte, *T) []byte) {
	ids := make([]ID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		if cw.err != nil {
			return
		}
		cw.b = appendRec(cw.b, m[id])
		if len(cw.b) >= imageChunk {
			cw.flush()
		}
	}
}
