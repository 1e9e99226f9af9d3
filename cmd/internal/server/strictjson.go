package server

import (
	"errors"
	"fmt"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// strictJSON is the JSON codec of governord's own API. It differs from
// Connect's in one way: a field the message does not have is refused, not
// ignored, so a misspelled field (`"amout": 5`) is an InvalidArgument error
// naming it rather than a call that silently leaves the field out. The
// Gubernator-compatible API keeps Connect's codec, which ignores unknown
// fields as Gubernator does.
type strictJSON struct{ name string }

// strictJSONCodecs are the codec under both names Connect speaks JSON by.
var strictJSONCodecs = []connect.HandlerOption{
	connect.WithCodec(strictJSON{name: "json"}),
	connect.WithCodec(strictJSON{name: "json; charset=utf-8"}),
}

func (c strictJSON) Name() string { return c.name }

func (strictJSON) IsBinary() bool { return false }

func (strictJSON) Marshal(m any) ([]byte, error) {
	pm, ok := m.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("marshal %T: not a protobuf message", m)
	}
	return protojson.Marshal(pm)
}

func (strictJSON) Unmarshal(data []byte, m any) error {
	pm, ok := m.(proto.Message)
	if !ok {
		return fmt.Errorf("unmarshal into %T: not a protobuf message", m)
	}
	if len(data) == 0 {
		return errors.New("an empty body is not a JSON object; send {} for a message with every field left out")
	}
	if err := protojson.Unmarshal(data, pm); err != nil {
		return fmt.Errorf("the request is not a %s in JSON (fields it does not have are refused): %w", pm.ProtoReflect().Descriptor().Name(), err)
	}
	return nil
}
