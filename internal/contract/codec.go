package contract

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"unicode/utf8"

	"github.com/dlroute/dlroute/internal/number"
)

// Tags of a field of a binary input: one field per declared input of the
// rule set, in the order dlroute_describe lists them.
const (
	TagAbsent = 0 // left out: the default, or (platform_version) ask the host
	TagNull   = 1
	TagString = 2 // u32 length, then the UTF-8 bytes
	TagInt    = 3 // i64
	TagBool   = 4 // u8, 0 or 1
	TagDouble = 5 // f64
	TagJSON   = 6 // u32 length, then a JSON value (lists and maps)
)

// AppendField appends one input value in the binary layout. Values are
// what engine.Input holds; a missing value is Absent.
func AppendField(b []byte, v any, present bool) ([]byte, error) {
	if !present {
		return append(b, TagAbsent), nil
	}
	switch x := v.(type) {
	case nil:
		return append(b, TagNull), nil
	case string:
		b = binary.LittleEndian.AppendUint32(append(b, TagString), uint32(len(x)))
		return append(b, x...), nil
	case bool:
		if x {
			return append(b, TagBool, 1), nil
		}
		return append(b, TagBool, 0), nil
	}
	if i, ok := number.Int(v); ok {
		return binary.LittleEndian.AppendUint64(append(b, TagInt), uint64(i)), nil
	}
	if x, ok := v.(float64); ok {
		return binary.LittleEndian.AppendUint64(append(b, TagDouble), math.Float64bits(x)), nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return b, fmt.Errorf("cannot encode %T: %w", v, err)
	}
	b = binary.LittleEndian.AppendUint32(append(b, TagJSON), uint32(len(data)))
	return append(b, data...), nil
}

var errShort = errors.New("binary input ends inside a field")

// errNotUTF8 is a JSON field that is not UTF-8, an invalid_utf8 input as
// a JSON line that is not would be.
var errNotUTF8 = errors.New("is not valid UTF-8")

// decodeJSON reads a JSON field as the JSON line path reads a line (with
// json.Number): valid UTF-8, where encoding/json would replace the bytes,
// and one value, with nothing but white space after it, where a Decoder
// stops at the first and `[1] [2]` would read as [1].
func decodeJSON(data []byte, v any) error {
	if !utf8.Valid(data) {
		return fmt.Errorf("JSON %w (at byte %d)", errNotUTF8, invalidUTF8At(data))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	end := dec.InputOffset() // the value's end: Token reads past what follows it
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		rest := data[end:]
		return fmt.Errorf("unexpected data after the JSON value (at byte %d)", int(end)+len(rest)-len(bytes.TrimLeft(rest, " \t\r\n")))
	}
	return nil
}

// DecodeFields reads n fields; present[i] is false for TagAbsent. JSON
// fields decode with json.Number, as the JSON entry does.
func DecodeFields(b []byte, n int) (values []any, present []bool, err error) {
	values, present = make([]any, n), make([]bool, n)
	for i := range n {
		if values[i], present[i], b, err = decodeField(b, i); err != nil {
			return nil, nil, err
		}
	}
	if len(b) != 0 {
		return nil, nil, fmt.Errorf("%d bytes after the last field", len(b))
	}
	return values, present, nil
}

// decodeField reads field i from the front of b and returns the rest.
func decodeField(b []byte, i int) (v any, present bool, rest []byte, err error) {
	if len(b) < 1 {
		return nil, false, nil, errShort
	}
	tag := b[0]
	b = b[1:]
	switch tag {
	case TagAbsent:
		return nil, false, b, nil
	case TagNull:
		return nil, true, b, nil
	case TagString, TagJSON:
		if len(b) < 4 || uint64(len(b)-4) < uint64(binary.LittleEndian.Uint32(b)) {
			return nil, false, nil, errShort
		}
		n := binary.LittleEndian.Uint32(b)
		data := b[4 : 4+n]
		if tag == TagString {
			return string(data), true, b[4+n:], nil
		}
		if err := decodeJSON(data, &v); err != nil {
			return nil, false, nil, fmt.Errorf("field %d: %w", i, err)
		}
		return v, true, b[4+n:], nil
	case TagInt, TagDouble:
		if len(b) < 8 {
			return nil, false, nil, errShort
		}
		u := binary.LittleEndian.Uint64(b)
		if tag == TagInt {
			return int64(u), true, b[8:], nil
		}
		return math.Float64frombits(u), true, b[8:], nil
	case TagBool:
		if len(b) < 1 || b[0] > 1 {
			return nil, false, nil, errShort
		}
		return b[0] == 1, true, b[1:], nil
	}
	return nil, false, nil, fmt.Errorf("field %d has unknown tag %d", i, tag)
}

// invalidUTF8At is the offset of the first byte of b that is not UTF-8.
func invalidUTF8At(b []byte) int {
	at := 0
	for at < len(b) {
		r, n := utf8.DecodeRune(b[at:])
		if r == utf8.RuneError && n == 1 {
			break
		}
		at += n
	}
	return at
}

// Kinds of a binary decision.
const (
	KindDevice    = 0 // u32 rule index, i64 device type code, i64 device id
	KindException = 1 // u32 rule index, u32 length + type, u32 length + message
	// KindExport is a device with an export's outcomes: u32 rule index,
	// i64 device type code, i64 device id, u8 copy, u8 capsule, u64 flags.
	// A module writes it only for a decision that sets copy, capsule or
	// flags, so a host of rule sets that never do (jax) never reads it.
	KindExport = 2
)

// Capsule kinds of a KindExport decision.
const (
	CapsuleNone        = 0 // the rules do not say
	CapsuleUnversioned = 1 // "dltensor": DLManagedTensor
	CapsuleVersioned   = 2 // "dltensor_versioned": DLManagedTensorVersioned
)

// AppendDevice appends a device decision.
func AppendDevice(b []byte, rule uint32, code, id int64) []byte {
	b = binary.LittleEndian.AppendUint32(append(b, KindDevice), rule)
	b = binary.LittleEndian.AppendUint64(b, uint64(code))
	return binary.LittleEndian.AppendUint64(b, uint64(id))
}

// AppendExport appends a device decision with its export's outcomes;
// capsule is a Capsule* constant.
func AppendExport(b []byte, rule uint32, code, id int64, copy bool, capsule byte, flags uint64) []byte {
	b = binary.LittleEndian.AppendUint32(append(b, KindExport), rule)
	b = binary.LittleEndian.AppendUint64(b, uint64(code))
	b = binary.LittleEndian.AppendUint64(b, uint64(id))
	c := byte(0)
	if copy {
		c = 1
	}
	b = append(b, c, capsule)
	return binary.LittleEndian.AppendUint64(b, flags)
}

// AppendException appends an exception decision.
func AppendException(b []byte, rule uint32, typ, message string) []byte {
	b = binary.LittleEndian.AppendUint32(append(b, KindException), rule)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(typ)))
	b = append(b, typ...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(message)))
	return append(b, message...)
}

// Decision is a binary decision, decoded. Copy, Capsule and Flags are
// zero but for KindExport.
type Decision struct {
	Kind          byte
	Rule          uint32
	Code, ID      int64
	Copy          bool
	Capsule       byte
	Flags         uint64
	Type, Message string
}

// DecodeDecision reads what AppendDevice, AppendExport or AppendException
// wrote.
func DecodeDecision(b []byte) (Decision, error) {
	var d Decision
	if len(b) < 5 {
		return d, errShort
	}
	d.Kind, d.Rule = b[0], binary.LittleEndian.Uint32(b[1:])
	b = b[5:]
	switch d.Kind {
	case KindDevice:
		if len(b) != 16 {
			return d, errShort
		}
		d.Code, d.ID = int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
		return d, nil
	case KindExport:
		if len(b) != 26 {
			return d, errShort
		}
		d.Code, d.ID = int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
		if b[16] > 1 || b[17] > CapsuleVersioned {
			return d, fmt.Errorf("export decision has copy %d and capsule %d", b[16], b[17])
		}
		d.Copy, d.Capsule, d.Flags = b[16] == 1, b[17], binary.LittleEndian.Uint64(b[18:])
		return d, nil
	case KindException:
		typ, rest, ok := cutString(b)
		msg, rest2, ok2 := cutString(rest)
		if !ok || !ok2 || len(rest2) != 0 {
			return d, errShort
		}
		d.Type, d.Message = typ, msg
		return d, nil
	}
	return d, fmt.Errorf("unknown decision kind %d", d.Kind)
}

func cutString(b []byte) (string, []byte, bool) {
	if len(b) < 4 || uint64(len(b)-4) < uint64(binary.LittleEndian.Uint32(b)) {
		return "", nil, false
	}
	n := binary.LittleEndian.Uint32(b)
	return string(b[4 : 4+n]), b[4+n:], true
}
