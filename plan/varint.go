package plan

// The varints of encoding/binary, here so that the decision module does
// not link encoding/binary, which imports reflect and, through it, the
// unicode tables. They read and write the same bytes.

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendVarint(b []byte, v int64) []byte {
	u := uint64(v) << 1
	if v < 0 {
		u = ^u
	}
	return appendUvarint(b, u)
}

// uvarint is binary.Uvarint: the value and the bytes read; n == 0 when b
// ends first, n < 0 when the value overflows 64 bits.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	var s uint
	for i, c := range b {
		if i == 10 {
			return 0, -(i + 1)
		}
		if c < 0x80 {
			if i == 9 && c > 1 {
				return 0, -(i + 1)
			}
			return v | uint64(c)<<s, i + 1
		}
		v |= uint64(c&0x7f) << s
		s += 7
	}
	return 0, 0
}

func varint(b []byte) (int64, int) {
	u, n := uvarint(b)
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v, n
}

func appendUint64LE(b []byte, v uint64) []byte {
	for i := 0; i < 8; i++ {
		b = append(b, byte(v>>(8*i)))
	}
	return b
}

func uint64LE(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}
