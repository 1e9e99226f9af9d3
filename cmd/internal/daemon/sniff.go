package daemon

import (
	"errors"
	"io"
	"net"
	"strings"

	"golang.org/x/net/http2/hpack"
)

// h2Preface is what an HTTP/2 client sends first on a connection without
// TLS (prior knowledge, as gRPC clients do).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// maxSniff bounds how much of a connection is read to find its first
// request; a first request whose headers do not fit goes to net/http.
const maxSniff = 64 << 10

// HTTP/2 frame types and flags the sniffer reads (RFC 9113 §6).
const (
	frameHeaders      = 0x1
	frameSettings     = 0x4
	frameContinuation = 0x9
	flagAck           = 0x1
	flagEndHeaders    = 0x4
	flagPadded        = 0x8
	flagPriority      = 0x20
	frameHeaderLen    = 9
)

// emptySettings is an empty SETTINGS frame: a valid server preface.
var emptySettings = []byte{0, 0, 0, frameSettings, 0, 0, 0, 0, 0}

var errSniff = errors.New("the first request's headers are malformed or too large to route")

// firstCall is what a connection's first request says about itself.
type firstCall struct {
	h2          bool   // HTTP/2 without TLS; HTTP/1 otherwise
	path        string // :path of the first HTTP/2 request
	contentType string // its content-type
}

// sniff reads from c until it knows c's first request and returns every
// byte it read, to be read again by the server that takes c. An HTTP/1
// connection is known from its first bytes. On an HTTP/2 one it sends an
// empty SETTINGS frame first, as gRPC clients send no request before the
// server's preface, and reads up to the first request's headers; the
// client answers that frame with a SETTINGS ACK that the server taking c
// did not ask for (see ackDropper). An error with h2 set means the headers
// could not be read in maxSniff bytes; c then still goes to net/http.
func sniff(c net.Conn) ([]byte, firstCall, error) {
	r := &recorder{r: c}
	for len(r.seen) < len(h2Preface) {
		if _, err := r.read(1); err != nil {
			return r.seen, firstCall{}, err
		}
		if !strings.HasPrefix(h2Preface, string(r.seen)) {
			return r.seen, firstCall{}, nil
		}
	}
	call := firstCall{h2: true}
	if _, err := c.Write(emptySettings); err != nil {
		return r.seen, call, err
	}
	var block []byte
	for {
		hdr, err := r.read(frameHeaderLen)
		if err != nil {
			return r.seen, call, err
		}
		n, typ, flags := frameLen(hdr), hdr[3], hdr[4]
		if len(r.seen)+n > maxSniff {
			return r.seen, call, errSniff
		}
		payload, err := r.read(n)
		if err != nil {
			return r.seen, call, err
		}
		switch {
		case typ == frameHeaders:
			frag, ok := headerFragment(payload, flags)
			if !ok {
				return r.seen, call, errSniff
			}
			block = frag
		case typ == frameContinuation && block != nil:
			block = append(block, payload...)
		case block != nil:
			return r.seen, call, errSniff
		default:
			continue
		}
		if flags&flagEndHeaders != 0 {
			err := decodeFirstCall(block, &call)
			return r.seen, call, err
		}
	}
}

// frameLen is the payload length a frame header gives (24 bits).
func frameLen(hdr []byte) int { return int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2]) }

// headerFragment is the header block fragment of a HEADERS frame's
// payload, without its padding and priority fields.
func headerFragment(p []byte, flags byte) ([]byte, bool) {
	pad := 0
	if flags&flagPadded != 0 {
		if len(p) < 1 {
			return nil, false
		}
		pad, p = int(p[0]), p[1:]
	}
	if flags&flagPriority != 0 {
		if len(p) < 5 {
			return nil, false
		}
		p = p[5:]
	}
	if pad > len(p) {
		return nil, false
	}
	return p[:len(p)-pad], true
}

// decodeFirstCall reads :path and content-type from the first header
// block of a connection (its HPACK dynamic table starts empty).
func decodeFirstCall(block []byte, call *firstCall) error {
	fields, err := hpack.NewDecoder(4096, nil).DecodeFull(block)
	if err != nil {
		return errSniff
	}
	for _, f := range fields {
		switch f.Name {
		case ":path":
			call.path = f.Value
		case "content-type":
			call.contentType = f.Value
		}
	}
	return nil
}

// recorder reads whole pieces from r and keeps everything it read.
type recorder struct {
	r    io.Reader
	seen []byte
}

func (r *recorder) read(n int) ([]byte, error) {
	start := len(r.seen)
	r.seen = append(r.seen, make([]byte, n)...)
	got, err := io.ReadFull(r.r, r.seen[start:])
	r.seen = r.seen[:start+got]
	return r.seen[start:], err
}

// ackDropper passes an HTTP/2 connection's bytes on without the first
// SETTINGS ACK: the client's answer to sniff's SETTINGS frame, which
// net/http, having sent its own SETTINGS later, would take for an
// unsolicited ACK and close the connection for. After that ACK it passes
// everything through.
type ackDropper struct {
	r       io.Reader
	started bool   // the preface has been passed on
	pending []byte // bytes to pass on before reading more
	done    bool   // the ACK has been dropped
}

func (d *ackDropper) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		if d.done {
			return d.r.Read(p)
		}
		if err := d.next(); err != nil {
			return 0, err
		}
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// next reads the preface or one whole frame into pending, leaving out the
// first SETTINGS ACK.
func (d *ackDropper) next() error {
	if !d.started {
		d.started = true
		d.pending = make([]byte, len(h2Preface))
		_, err := io.ReadFull(d.r, d.pending)
		return err
	}
	frame := make([]byte, frameHeaderLen)
	if _, err := io.ReadFull(d.r, frame); err != nil {
		return err
	}
	frame = append(frame, make([]byte, frameLen(frame))...)
	_, err := io.ReadFull(d.r, frame[frameHeaderLen:])
	if frame[3] == frameSettings && frame[4]&flagAck != 0 {
		d.done = true
		return err
	}
	d.pending = frame
	return err
}

// replayConn is a connection whose reads come from r: the bytes sniff
// read, then the connection.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
