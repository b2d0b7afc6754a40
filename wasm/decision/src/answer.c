/*
 * answer.c ports plan/answer.go: a decision's JSON, byte for byte what
 * engine.Decision.MarshalJSON writes (write_decision_json), and
 * encoding/json's string quoting, with and without HTML escaping
 * (quote_json).
 */
#include "decision.h"

/* flag_names are eval.go's flagNames: DLPack's flag bits, by bit. */
static const char *const flag_names[] = {
	"DLPACK_FLAG_BITMASK_READ_ONLY",
	"DLPACK_FLAG_BITMASK_IS_COPIED",
	"DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
};

/* write_flag writes flagsString(1 << bit), quoted. */
static void write_flag(buf *w, int bit)
{
	if (bit < (int)(sizeof flag_names / sizeof flag_names[0])) {
		buf_byte(w, '"');
		buf_lit(w, flag_names[bit]);
		buf_byte(w, '"');
		return;
	}
	fmt_arg a = fa_d(bit);
	quote_json(w, fmt("bit %d", &a, 1), false);
}

/* write_decision_json ports Decision.AppendJSON (jsonWriter.decision):
 * {"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}
 * with "copy", "capsule" and "flags" where set, or
 * {"error":{"type":"BufferError","message":"..."},"rule":...,"ruleset":...}. */
void write_decision_json(buf *w, const decision *d)
{
	buf_byte(w, '{');
	if (d->error_type.n == 0) {
		if (d->device_type.n != 0) { /* "" only in the zero decision of a failed import's explanation */
			buf_lit(w, "\"device_type\":");
			quote_json(w, d->device_type, false);
			buf_byte(w, ',');
		}
		buf_lit(w, "\"device_type_code\":");
		buf_int(w, d->device_type_code);
		buf_lit(w, ",\"device_id\":");
		buf_int(w, d->device_id);
		if (d->copy)
			buf_lit(w, ",\"copy\":true");
		if (d->capsule.n != 0) {
			buf_lit(w, ",\"capsule\":");
			quote_json(w, d->capsule, false);
		}
		if (d->flags != 0) {
			buf_lit(w, ",\"flags\":[");
			bool first = true;
			for (uint64_t f = d->flags; f != 0; first = false) {
				int bit = __builtin_ctzll(f);
				if (!first)
					buf_byte(w, ',');
				write_flag(w, bit);
				f &= ~((uint64_t)1 << bit);
			}
			buf_byte(w, ']');
		}
		buf_byte(w, ',');
	} else {
		buf_lit(w, "\"error\":{\"type\":");
		quote_json(w, d->error_type, false);
		buf_lit(w, ",\"message\":");
		quote_json(w, d->error_message, false);
		buf_lit(w, "},");
	}
	buf_lit(w, "\"rule\":");
	quote_json(w, d->rule, false);
	buf_lit(w, ",\"ruleset\":");
	quote_json(w, d->ruleset, false);
	buf_byte(w, '}');
}

static const char hexdig[] = "0123456789abcdef";

/* safe_ascii says of each ASCII byte whether a JSON string holds it as
 * itself: SAFE_HTML where HTML escaping keeps it too, SAFE_JSON for <,
 * > and & (which it escapes), neither for the bytes every string
 * escapes (the controls, " and \). */
enum { SAFE_HTML = 1, SAFE_JSON = 2 };
static const uint8_t safe_ascii[128] = {
	['\x20'] = 1, ['!'] = 1, ['"'] = 0, ['#'] = 1, ['$'] = 1, ['%'] = 1, ['&'] = 2, ['\''] = 1,
	['('] = 1, [')'] = 1, ['*'] = 1, ['+'] = 1, [','] = 1, ['-'] = 1, ['.'] = 1, ['/'] = 1,
	['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1,
	['8'] = 1, ['9'] = 1, [':'] = 1, [';'] = 1, ['<'] = 2, ['='] = 1, ['>'] = 2, ['?'] = 1,
	['@'] = 1, ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1,
	['H'] = 1, ['I'] = 1, ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1,
	['P'] = 1, ['Q'] = 1, ['R'] = 1, ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1,
	['X'] = 1, ['Y'] = 1, ['Z'] = 1, ['['] = 1, ['\\'] = 0, [']'] = 1, ['^'] = 1, ['_'] = 1,
	['`'] = 1, ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1,
	['h'] = 1, ['i'] = 1, ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1,
	['p'] = 1, ['q'] = 1, ['r'] = 1, ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1,
	['x'] = 1, ['y'] = 1, ['z'] = 1, ['{'] = 1, ['|'] = 1, ['}'] = 1, ['~'] = 1, ['\x7f'] = 1,
};

/* quote_json ports appendQuoted: s as encoding/json quotes it: invalid
 * UTF-8 becomes U+FFFD, control characters and U+2028/U+2029 are
 * escaped, and with html <, > and & are \u003c, \u003e and \u0026, as
 * json.Marshal writes them. */
void quote_json(buf *w, str s, bool html)
{
	buf_byte(w, '"');
	uint8_t safe = SAFE_HTML;
	if (!html)
		safe |= SAFE_JSON;
	uint32_t start = 0;
	for (uint32_t i = 0; i < s.n;) {
		uint8_t c = (uint8_t)s.p[i];
		if (c < 0x80) {
			if (safe_ascii[c] & safe) {
				i++;
				continue;
			}
			buf_bytes(w, s.p + start, i - start);
			buf_byte(w, '\\');
			switch (c) {
			case '"':
			case '\\':
				buf_byte(w, (char)c);
				break;
			case '\b':
				buf_byte(w, 'b');
				break;
			case '\f':
				buf_byte(w, 'f');
				break;
			case '\n':
				buf_byte(w, 'n');
				break;
			case '\r':
				buf_byte(w, 'r');
				break;
			case '\t':
				buf_byte(w, 't');
				break;
			default:
				buf_lit(w, "u00");
				buf_byte(w, hexdig[c >> 4]);
				buf_byte(w, hexdig[c & 0xF]);
			}
			start = ++i;
			continue;
		}
		uint32_t size;
		uint32_t r = utf8_decode_rune(s.p + i, s.n - i, &size);
		if (r == 0xFFFD && size == 1) {
			buf_bytes(w, s.p + start, i - start);
			buf_lit(w, "\\ufffd");
			start = i += size;
			continue;
		}
		if (r == 0x2028 || r == 0x2029) {
			buf_bytes(w, s.p + start, i - start);
			buf_lit(w, "\\u202");
			buf_byte(w, hexdig[r & 0xF]);
			start = i += size;
			continue;
		}
		i += size;
	}
	buf_bytes(w, s.p + start, s.n - start);
	buf_byte(w, '"');
}
