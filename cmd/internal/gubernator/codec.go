package gubernator

import (
	"google.golang.org/grpc/encoding"
	grpcproto "google.golang.org/grpc/encoding/proto"
	"google.golang.org/grpc/mem"

	gubernatorv1 "governor.dev/governor/internal/gen/gubernator/v1"
)

// wireCodec is grpc-go's protobuf codec with GetRateLimits' two messages
// written and read by hand (wire.go); every other message goes to the
// protobuf codec. It speaks the same protobuf, so the content type stays
// application/grpc.
type wireCodec struct {
	encoding.CodecV2 // the protobuf codec, for every other message
}

var _ encoding.CodecV2 = wireCodec{}

func newWireCodec() wireCodec {
	return wireCodec{encoding.GetCodecV2(grpcproto.Name)}
}

// answerBytes is room for a typical answer in protobuf, the owner's
// address included; a longer one grows the buffer.
const answerBytes = 64

// Marshal encodes a GetRateLimitsResp by hand.
func (c wireCodec) Marshal(v any) (mem.BufferSlice, error) {
	m, ok := v.(*gubernatorv1.GetRateLimitsResp)
	if !ok {
		return c.CodecV2.Marshal(v)
	}
	b := appendResponse(make([]byte, 0, answerBytes*len(m.Responses)), m)
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

// Unmarshal decodes a GetRateLimitsReq by hand, reusing the structs it
// holds.
func (c wireCodec) Unmarshal(data mem.BufferSlice, v any) error {
	m, ok := v.(*gubernatorv1.GetRateLimitsReq)
	if !ok {
		return c.CodecV2.Unmarshal(data, v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshalRequest(buf.ReadOnlyData(), m)
}
