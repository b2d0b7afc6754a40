package plan

import "unicode/utf8"

// The string functions of package strings that plans use, here so that
// the decision module links neither strings nor the unicode tables its
// import brings (about 25 KB; plan/RATIONALE.md, "Why a hand-written JSON
// reader?"). Strings in plans are short (inputs at most MaxStringLen),
// so indexOf is the plain search.

func hasPrefix(s, prefix string) bool { return len(s) >= len(prefix) && s[:len(prefix)] == prefix }

func hasSuffix(s, suffix string) bool {
	return len(s) >= len(suffix) && s[len(s)-len(suffix):] == suffix
}

// indexOf is strings.Index: the byte offset of the first t in s, or -1.
func indexOf(s, t string) int {
	for i := 0; i+len(t) <= len(s); i++ {
		if s[i:i+len(t)] == t {
			return i
		}
	}
	return -1
}

// split is strings.Split: s cut around every sep, or into its UTF-8
// sequences when sep is "" (an invalid byte alone).
func split(s, sep string) []string {
	var out []string
	if sep == "" {
		for len(s) > 0 {
			_, n := utf8.DecodeRuneInString(s)
			out, s = append(out, s[:n]), s[n:]
		}
		return out
	}
	for {
		i := indexOf(s, sep)
		if i < 0 {
			return append(out, s)
		}
		out, s = append(out, s[:i]), s[i+len(sep):]
	}
}

// join is strings.Join.
//
//go:noinline
func join(parts []string, sep string) string {
	var b []byte
	for i, p := range parts {
		if i > 0 {
			b = append(b, sep...)
		}
		b = append(b, p...)
	}
	return string(b)
}
