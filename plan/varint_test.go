package plan

import (
	"encoding/binary"
	"testing"
)

// FuzzVarint: the varints read and write encoding/binary's bytes.
func FuzzVarint(f *testing.F) {
	f.Add(uint64(0), []byte{})
	f.Add(uint64(1<<63), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02})
	f.Add(uint64(300), []byte{0x80})
	f.Fuzz(func(t *testing.T, v uint64, b []byte) {
		if got, want := appendUvarint(nil, v), binary.AppendUvarint(nil, v); string(got) != string(want) {
			t.Errorf("appendUvarint(%d) = %x, want %x", v, got, want)
		}
		if got, want := appendVarint(nil, int64(v)), binary.AppendVarint(nil, int64(v)); string(got) != string(want) {
			t.Errorf("appendVarint(%d) = %x, want %x", int64(v), got, want)
		}
		if got, want := appendUint64LE(nil, v), binary.LittleEndian.AppendUint64(nil, v); string(got) != string(want) {
			t.Errorf("appendUint64LE(%d) = %x, want %x", v, got, want)
		}
		gv, gn := uvarint(b)
		wv, wn := binary.Uvarint(b)
		if gv != wv || gn != wn {
			t.Errorf("uvarint(%x) = %d, %d, want %d, %d", b, gv, gn, wv, wn)
		}
		iv, in := varint(b)
		jv, jn := binary.Varint(b)
		if iv != jv || in != jn {
			t.Errorf("varint(%x) = %d, %d, want %d, %d", b, iv, in, jv, jn)
		}
		if len(b) >= 8 && uint64LE(b) != binary.LittleEndian.Uint64(b) {
			t.Errorf("uint64LE(%x) differs", b)
		}
	})
}
