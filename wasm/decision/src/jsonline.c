/*
 * jsonline.c ports plan/jsonline.go (and the object sorting of
 * plan/object.go): the reader of input lines. The engine reads a line
 * with encoding/json (a json.Decoder, UseNumber, one Token after the
 * value), and its json_syntax messages quote encoding/json's. This reader
 * gives the same values and the same messages. It follows encoding/json's
 * scanner state by state.
 *
 * Go's flatObject fast path is left out: a line it accepts is one the
 * scanner accepts with nothing after it, so the result is the same.
 *
 * Nothing here recurses over the input's nesting (up to maxNesting
 * levels, far deeper than a WebAssembly stack allows): the scanner keeps
 * one state byte a level, as Go's does, and the builder its open arrays
 * and objects on an explicit stack.
 */
#include "decision.h"

/* maxNesting is encoding/json's limit on nested arrays and objects. */
#define MAX_NESTING 10000

static bool is_space(uint8_t c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

static bool is_hex(uint8_t c) { return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F'); }

/* ---- the scanner ------------------------------------------------------- */

/* The scanner's states, encoding/json's (scanner.go) by name. */
enum {
	ST_BEGIN_VALUE,
	ST_BEGIN_VALUE_OR_EMPTY,
	ST_BEGIN_STRING_OR_EMPTY,
	ST_BEGIN_STRING,
	ST_END_VALUE,
	ST_END_TOP,
	ST_IN_STRING,
	ST_IN_STRING_ESC,
	ST_IN_STRING_ESC_U, /* and the three after it, one for each hex digit read */
	ST_IN_STRING_ESC_U1,
	ST_IN_STRING_ESC_U2,
	ST_IN_STRING_ESC_U3,
	ST_NEG,
	ST_1,
	ST_0,
	ST_DOT,
	ST_DOT0,
	ST_E,
	ST_E_SIGN,
	ST_E0,
	ST_LITERAL, /* in true, false or null: lit[lit_at] is the byte expected */
	ST_ERROR,
};

/* What a step of the scanner says. */
enum {
	RES_CONTINUE,
	RES_END_COMPOSITE, /* a ] or } closed an array or object */
	RES_END,           /* the top-level value ended before this byte */
	RES_ERROR,
};

typedef struct scanner {
	int step;
	/* depth is how many arrays and objects are open; each has a state,
	 * 'a', 'k' (an object, before a key's colon) or 'v' (after it), the
	 * first levels' in low, the others' in high (from the arena, when
	 * the line nests that deep). */
	int depth;
	uint8_t low[16];
	uint8_t *high;
	const char *lit;
	int lit_at, lit_len;
	const char *context; /* fail's words, for the message */
	uint8_t bad;         /* the byte fail was given */
} scanner;

static int scan_begin_value(scanner *s, uint8_t c);
static int scan_end_value(scanner *s, uint8_t c);

static int scan_fail(scanner *s, uint8_t c, const char *context)
{
	s->step = ST_ERROR;
	s->bad = c;
	s->context = context;
	return RES_ERROR;
}

/* top is the innermost open array's or object's state. */
static uint8_t *scan_top(scanner *s)
{
	if (s->depth <= (int)sizeof s->low)
		return &s->low[s->depth - 1];
	return &s->high[s->depth - 1 - (int)sizeof s->low];
}

static int scan_push(scanner *s, uint8_t c, uint8_t state)
{
	s->depth++;
	if (s->depth > MAX_NESTING)
		return scan_fail(s, c, "exceeded max depth");
	if (s->depth > (int)sizeof s->low && s->high == NULL) {
		s->high = arena_alloc(MAX_NESTING);
		if (s->high == NULL) /* the arena is spent: no deeper than this */
			return scan_fail(s, c, "exceeded max depth");
	}
	*scan_top(s) = state;
	return RES_CONTINUE;
}

static void scan_pop(scanner *s)
{
	s->depth--;
	s->step = s->depth == 0 ? ST_END_TOP : ST_END_VALUE;
}

static int scan_begin_string(scanner *s, uint8_t c)
{
	if (is_space(c))
		return RES_CONTINUE;
	if (c == '"') {
		s->step = ST_IN_STRING;
		return RES_CONTINUE;
	}
	return scan_fail(s, c, "looking for beginning of object key string");
}

/* scan_end_top is after the top-level value: the value has ended,
 * whatever c is (encoding/json complains about a byte other than space
 * only on a later call, which Decode does not make). */
static int scan_end_top(void) { return RES_END; }

static int scan_end_value(scanner *s, uint8_t c)
{
	if (s->depth == 0) {
		s->step = ST_END_TOP;
		return scan_end_top();
	}
	if (is_space(c)) {
		s->step = ST_END_VALUE;
		return RES_CONTINUE;
	}
	uint8_t *top = scan_top(s);
	switch (*top) {
	case 'k':
		if (c == ':') {
			*top = 'v';
			s->step = ST_BEGIN_VALUE;
			return RES_CONTINUE;
		}
		return scan_fail(s, c, "after object key");
	case 'v':
		if (c == ',') {
			*top = 'k';
			s->step = ST_BEGIN_STRING;
			return RES_CONTINUE;
		}
		if (c == '}') {
			scan_pop(s);
			return RES_END_COMPOSITE;
		}
		return scan_fail(s, c, "after object key:value pair");
	}
	if (c == ',') {
		s->step = ST_BEGIN_VALUE;
		return RES_CONTINUE;
	}
	if (c == ']') {
		scan_pop(s);
		return RES_END_COMPOSITE;
	}
	return scan_fail(s, c, "after array element");
}

static int scan_zero(scanner *s, uint8_t c)
{
	if (c == '.') {
		s->step = ST_DOT;
		return RES_CONTINUE;
	}
	if (c == 'e' || c == 'E') {
		s->step = ST_E;
		return RES_CONTINUE;
	}
	return scan_end_value(s, c);
}

static int scan_e_sign(scanner *s, uint8_t c)
{
	if ('0' <= c && c <= '9') {
		s->step = ST_E0;
		return RES_CONTINUE;
	}
	return scan_fail(s, c, "in exponent of numeric literal");
}

static void scan_literal(scanner *s, const char *lit)
{
	s->step = ST_LITERAL;
	s->lit = lit;
	s->lit_at = 1;
	s->lit_len = (int)strlen(lit);
}

static int scan_begin_value(scanner *s, uint8_t c)
{
	if (is_space(c))
		return RES_CONTINUE;
	switch (c) {
	case '{':
		s->step = ST_BEGIN_STRING_OR_EMPTY;
		return scan_push(s, c, 'k');
	case '[':
		s->step = ST_BEGIN_VALUE_OR_EMPTY;
		return scan_push(s, c, 'a');
	case '"':
		s->step = ST_IN_STRING;
		break;
	case '-':
		s->step = ST_NEG;
		break;
	case '0':
		s->step = ST_0;
		break;
	case 't':
		scan_literal(s, "true");
		break;
	case 'f':
		scan_literal(s, "false");
		break;
	case 'n':
		scan_literal(s, "null");
		break;
	default:
		if (c < '1' || c > '9')
			return scan_fail(s, c, "looking for beginning of value");
		s->step = ST_1;
	}
	return RES_CONTINUE;
}

/* scan_next is scanner.next: one byte's step. */
static int scan_next(scanner *s, uint8_t c)
{
	switch (s->step) {
	case ST_BEGIN_VALUE_OR_EMPTY:
		if (is_space(c))
			return RES_CONTINUE;
		if (c == ']')
			return scan_end_value(s, c);
		return scan_begin_value(s, c);
	case ST_BEGIN_VALUE:
		return scan_begin_value(s, c);
	case ST_BEGIN_STRING_OR_EMPTY:
		if (is_space(c))
			return RES_CONTINUE;
		if (c == '}') {
			*scan_top(s) = 'v';
			return scan_end_value(s, c);
		}
		return scan_begin_string(s, c);
	case ST_BEGIN_STRING:
		return scan_begin_string(s, c);
	case ST_END_VALUE:
		return scan_end_value(s, c);
	case ST_END_TOP:
		return scan_end_top();
	case ST_IN_STRING:
		if (c == '"')
			s->step = ST_END_VALUE;
		else if (c == '\\')
			s->step = ST_IN_STRING_ESC;
		else if (c < 0x20)
			return scan_fail(s, c, "in string literal");
		return RES_CONTINUE;
	case ST_IN_STRING_ESC:
		switch (c) {
		case 'b': case 'f': case 'n': case 'r': case 't': case '\\': case '/': case '"':
			s->step = ST_IN_STRING;
			return RES_CONTINUE;
		case 'u':
			s->step = ST_IN_STRING_ESC_U;
			return RES_CONTINUE;
		}
		return scan_fail(s, c, "in string escape code");
	case ST_IN_STRING_ESC_U:
	case ST_IN_STRING_ESC_U1:
	case ST_IN_STRING_ESC_U2:
	case ST_IN_STRING_ESC_U3:
		if (!is_hex(c))
			return scan_fail(s, c, "in \\u hexadecimal character escape");
		s->step = s->step == ST_IN_STRING_ESC_U3 ? ST_IN_STRING : s->step + 1;
		return RES_CONTINUE;
	case ST_NEG:
		if (c == '0') {
			s->step = ST_0;
			return RES_CONTINUE;
		}
		if ('1' <= c && c <= '9') {
			s->step = ST_1;
			return RES_CONTINUE;
		}
		return scan_fail(s, c, "in numeric literal");
	case ST_1:
		if ('0' <= c && c <= '9')
			return RES_CONTINUE;
		return scan_zero(s, c);
	case ST_0:
		return scan_zero(s, c);
	case ST_DOT:
		if ('0' <= c && c <= '9') {
			s->step = ST_DOT0;
			return RES_CONTINUE;
		}
		return scan_fail(s, c, "after decimal point in numeric literal");
	case ST_DOT0:
		if ('0' <= c && c <= '9')
			return RES_CONTINUE;
		if (c == 'e' || c == 'E') {
			s->step = ST_E;
			return RES_CONTINUE;
		}
		return scan_end_value(s, c);
	case ST_E:
		if (c == '+' || c == '-') {
			s->step = ST_E_SIGN;
			return RES_CONTINUE;
		}
		return scan_e_sign(s, c);
	case ST_E_SIGN:
		return scan_e_sign(s, c);
	case ST_E0:
		if ('0' <= c && c <= '9')
			return RES_CONTINUE;
		return scan_end_value(s, c);
	case ST_LITERAL:
		if (c != (uint8_t)s->lit[s->lit_at])
			return scan_fail(s, c, NULL); /* the literal's words: scan_message */
		if (++s->lit_at == s->lit_len)
			s->step = ST_END_VALUE;
		return RES_CONTINUE;
	}
	return RES_ERROR;
}

/* quote_char_to appends quoteChar(c), encoding/json's quoting of a byte in
 * its messages: the byte as the rune of its value, quoted, between single
 * quotes. */
static void quote_char_to(buf *w, uint8_t c)
{
	if (c == '\'') {
		buf_lit(w, "'\\''");
		return;
	}
	if (c == '"') {
		buf_lit(w, "'\"'");
		return;
	}
	char r[2];
	uint32_t n = 1;
	if (c < 0x80) {
		r[0] = (char)c;
	} else { /* string(rune(c)): U+0080 to U+00FF in UTF-8 */
		r[0] = (char)(0xC0 | c >> 6);
		r[1] = (char)(0x80 | (c & 0x3F));
		n = 2;
	}
	str q = quote((str){r, n});
	buf_byte(w, '\'');
	buf_bytes(w, q.p + 1, q.n - 2);
	buf_byte(w, '\'');
}

/* scan_message is the failed scanner's error and where: "invalid
 * character 'x' looking for beginning of value (at byte 3)". */
static str scan_message(const scanner *s, uint32_t at)
{
	buf w = {0};
	buf_lit(&w, "invalid character ");
	quote_char_to(&w, s->bad);
	buf_byte(&w, ' ');
	if (s->context != NULL) {
		buf_lit(&w, s->context);
	} else {
		buf_lit(&w, "in literal ");
		buf_lit(&w, s->lit);
		buf_lit(&w, " (expecting ");
		quote_char_to(&w, (uint8_t)s->lit[s->lit_at]);
		buf_byte(&w, ')');
	}
	buf_lit(&w, " (at byte ");
	buf_int(&w, at);
	buf_byte(&w, ')');
	return buf_done(&w);
}

/* scan_value is scanValue: it scans the JSON value that starts at
 * data[start] (after any white space) as json.Decoder.Decode does, and
 * returns true and where it ends in *end, or false and the error's
 * message: encoding/json's SyntaxError and its offset, or its "unexpected
 * EOF" and the engine's words for an empty line. */
static bool scan_value(const uint8_t *data, uint32_t n, uint32_t start, uint32_t *end, str *msg)
{
	scanner s = {.step = ST_BEGIN_VALUE};
	for (uint32_t i = start; i < n; i++) {
		if (s.step == ST_IN_STRING) { /* most of a line: skip what cannot end the string */
			while (i < n && data[i] >= 0x20 && data[i] != '"' && data[i] != '\\')
				i++;
			if (i == n)
				break;
		}
		switch (scan_next(&s, data[i])) {
		case RES_END:
			*end = i;
			return true;
		case RES_END_COMPOSITE:
			if (s.depth == 0) {
				*end = i + 1;
				return true;
			}
			break;
		case RES_ERROR:
			*msg = scan_message(&s, i + 1);
			return false;
		}
	}
	if (scan_next(&s, ' ') == RES_END) {
		*end = n;
		return true;
	}
	for (uint32_t i = start; i < n; i++) {
		if (!is_space(data[i])) {
			*msg = STR("unexpected EOF");
			return false;
		}
	}
	*msg = STR("empty input; want a JSON object");
	return false;
}

/* trailing says whether anything but white space follows the value that
 * ends at end, and the offset the engine reports for it (*at): what
 * json.Decoder.InputOffset says after a Token that did not end the
 * input. */
static bool trailing(const uint8_t *data, uint32_t n, uint32_t end, uint32_t *at)
{
	uint32_t p = end;
	while (p < n && is_space(data[p]))
		p++;
	if (p == n)
		return false;
	switch (data[p]) {
	case '[': case '{': /* a delimiter Token returns */
		*at = p + 1;
		return true;
	case ']': case '}': case ':': case ',': /* a Token error at the byte */
		*at = p;
		return true;
	}
	/* Token decodes a value here: the offset is after it, or at it if it
	 * does not decode. */
	uint32_t e;
	str msg;
	*at = scan_value(data, n, p, &e, &msg) ? e : p;
	return true;
}

/* ---- the builder ------------------------------------------------------- */

/* An open array or object of the builder: its items so far are
 * stack[base:], and an object's next key is key. */
typedef struct bframe {
	bool object;
	uint32_t base;
	str key;
} bframe;

/* builder reads a value that scan_value has found well formed, as
 * encoding/json's decoding into an any with UseNumber does. */
typedef struct builder {
	const uint8_t *data;
	uint32_t n, i;
	bframe *frames;
	uint32_t depth;
	jfield *stack; /* the items of the open arrays and objects */
	uint32_t top;
	str dup;    /* the top-level object's first key given twice, when twice */
	bool twice;
	bool spent; /* the arena ran out */
} builder;

static void b_space(builder *b)
{
	while (b->i < b->n && is_space(b->data[b->i]))
		b->i++;
}

static bool is_number_byte(uint8_t c)
{
	return ('0' <= c && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

/* hex4 reads the four hex digits of a \u escape, which the scanner has
 * checked. */
static uint32_t hex4(const uint8_t *s)
{
	uint32_t r = 0;
	for (int k = 0; k < 4; k++) {
		uint8_t c = s[k];
		if (c <= '9')
			c -= '0';
		else if (c >= 'a')
			c -= 'a' - 10;
		else
			c -= 'A' - 10;
		r = r << 4 | c;
	}
	return r;
}

static bool is_surrogate(uint32_t r) { return 0xD800 <= r && r < 0xE000; }

/* append_rune is utf8.AppendRune for a rune that is not a surrogate. */
static uint32_t append_rune(char *out, uint32_t r)
{
	if (r < 0x80) {
		out[0] = (char)r;
		return 1;
	}
	if (r < 0x800) {
		out[0] = (char)(0xC0 | r >> 6);
		out[1] = (char)(0x80 | (r & 0x3F));
		return 2;
	}
	if (r < 0x10000) {
		out[0] = (char)(0xE0 | r >> 12);
		out[1] = (char)(0x80 | (r >> 6 & 0x3F));
		out[2] = (char)(0x80 | (r & 0x3F));
		return 3;
	}
	out[0] = (char)(0xF0 | r >> 18);
	out[1] = (char)(0x80 | (r >> 12 & 0x3F));
	out[2] = (char)(0x80 | (r >> 6 & 0x3F));
	out[3] = (char)(0x80 | (r & 0x3F));
	return 4;
}

/* b_str is builder.str: a string literal as encoding/json unquotes it,
 * a lone or broken surrogate escape U+FFFD. A string without escapes is
 * the line's bytes themselves; the line outlives the call's values. */
static str b_str(builder *b)
{
	const uint8_t *d = b->data;
	uint32_t start = ++b->i; /* " */
	while (d[b->i] != '"' && d[b->i] != '\\')
		b->i++;
	if (d[b->i] == '"') {
		b->i++;
		return (str){(const char *)d + start, b->i - 1 - start};
	}
	/* An escape: the unquoted string is no longer than the literal's
	 * rest (\uXXXX, 6 bytes, is at most 3; a pair, 12, is 4). */
	uint32_t end = b->i;
	while (d[end] != '"')
		end += d[end] == '\\' ? 2 : 1;
	char *out = arena_alloc(end - start + 1);
	if (out == NULL) {
		b->spent = true;
		b->i = end + 1;
		return (str){0};
	}
	uint32_t o = b->i - start;
	memcpy(out, d + start, o);
	for (;;) {
		uint8_t c = d[b->i];
		if (c == '"') {
			b->i++;
			return (str){out, o};
		}
		if (c != '\\') {
			out[o++] = (char)c;
			b->i++;
			continue;
		}
		uint8_t esc = d[b->i + 1];
		b->i += 2;
		switch (esc) {
		case 'b': out[o++] = '\b'; break;
		case 'f': out[o++] = '\f'; break;
		case 'n': out[o++] = '\n'; break;
		case 'r': out[o++] = '\r'; break;
		case 't': out[o++] = '\t'; break;
		case 'u': {
			uint32_t r = hex4(d + b->i);
			b->i += 4;
			if (is_surrogate(r)) {
				if (d[b->i] == '\\' && d[b->i + 1] == 'u') {
					/* utf16.DecodeRune: a high then a low surrogate */
					uint32_t r2 = hex4(d + b->i + 2);
					if (0xD800 <= r && r < 0xDC00 && 0xDC00 <= r2 && r2 < 0xE000) {
						b->i += 6;
						r = 0x10000 + ((r - 0xD800) << 10 | (r2 - 0xDC00));
					}
				}
				if (is_surrogate(r))
					r = 0xFFFD;
			}
			o += append_rune(out + o, r);
			break;
		}
		default: /* " \ / */
			out[o++] = (char)esc;
		}
	}
}

/* b_scalar reads a string, a literal or a number. */
static value b_scalar(builder *b)
{
	const uint8_t *d = b->data;
	switch (d[b->i]) {
	case '"':
		return v_string(b_str(b));
	case 't':
		b->i += 4;
		return v_bool(true);
	case 'f':
		b->i += 5;
		return v_bool(false);
	case 'n':
		b->i += 4;
		return v_null();
	}
	uint32_t start = b->i;
	bool small = true;
	uint64_t n = 0;
	while (b->i < b->n && is_number_byte(d[b->i])) {
		uint8_t c = d[b->i];
		small = small && '0' <= c && c <= '9' && b->i - start < 9;
		n = n * 10 + (uint64_t)(c - '0');
		b->i++;
	}
	if (small && n < 256) {
		/* 0 to 255 as an int is what the number's text reads as
		 * everywhere (int_of, as_double, go_type_name). */
		return v_int((int64_t)n);
	}
	return (value){.kind = V_JNUM, .s = {(const char *)d + start, b->i - start}};
}

/* An object's field, with its place among the fields read: sorting
 * keeps equal keys in the order read. */
typedef struct entry {
	jfield f;
	uint32_t at;
} entry;

static bool entry_less(const entry *x, const entry *y) { return str_cmp(x->f.key, y->f.key) < 0; }

/* sort_entries sorts by key, equal keys in the order read: insertion for
 * runs of a few, then merging through tmp (n entries' room), bottom up. */
static void sort_entries(entry *e, entry *tmp, uint32_t n)
{
	const uint32_t run = 12;
	for (uint32_t lo = 0; lo < n; lo += run) {
		uint32_t hi = lo + run < n ? lo + run : n;
		for (uint32_t i = lo + 1; i < hi; i++) {
			for (uint32_t j = i; j > lo && entry_less(&e[j], &e[j - 1]); j--) {
				entry t = e[j];
				e[j] = e[j - 1];
				e[j - 1] = t;
			}
		}
	}
	for (uint32_t width = run; width < n; width *= 2) {
		for (uint32_t lo = 0; lo + width < n; lo += 2 * width) {
			uint32_t m = lo + width, hi = lo + 2 * width < n ? lo + 2 * width : n;
			memcpy(tmp, e + lo, (m - lo) * sizeof *e);
			uint32_t i = 0, j = m, k = lo;
			while (i < m - lo && j < hi) {
				if (entry_less(&e[j], &tmp[i]))
					e[k++] = e[j++];
				else
					e[k++] = tmp[i++];
			}
			while (i < m - lo)
				e[k++] = tmp[i++];
		}
	}
}

/* make_object is makeObject: the fields of an object, in the order read,
 * an object: sorted, the last value of each key kept. *twice is the key
 * whose second occurrence comes first, the one encoding/json's reading
 * into a map meets first as already there (*dup when there is one). */
static jobj *make_object(builder *b, const jfield *read, uint32_t n, str *twice, bool *dup)
{
	jobj *o = arena_alloc(sizeof *o);
	entry *e = arena_alloc((size_t)n * sizeof *e + 1);
	entry *tmp = arena_alloc((size_t)n * sizeof *e + 1);
	jfield *f = arena_alloc((size_t)n * sizeof *f + 1);
	if (o == NULL || e == NULL || tmp == NULL || f == NULL) {
		b->spent = true;
		return NULL;
	}
	for (uint32_t i = 0; i < n; i++)
		e[i] = (entry){read[i], i};
	sort_entries(e, tmp, n);
	uint32_t second = n;
	*dup = false;
	for (uint32_t i = 1; i < n; i++) {
		if (str_eq(e[i - 1].f.key, e[i].f.key) && e[i].at < second) {
			second = e[i].at;
			*twice = e[i].f.key;
			*dup = true;
		}
	}
	uint32_t k = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (i + 1 < n && str_eq(e[i + 1].f.key, e[i].f.key))
			continue;
		f[k++] = e[i].f;
	}
	o->n = k;
	o->f = f;
	return o;
}

/* b_close makes the innermost open array or object a value. */
static value b_close(builder *b)
{
	bframe *fr = &b->frames[--b->depth];
	const jfield *items = b->stack + fr->base;
	uint32_t n = b->top - fr->base;
	b->top = fr->base;
	if (fr->object) {
		str twice = {0};
		bool dup = false;
		jobj *o = make_object(b, items, n, &twice, &dup);
		if (o == NULL)
			return v_null();
		if (dup && b->depth == 0) {
			b->dup = twice;
			b->twice = true;
		}
		return (value){.kind = V_JOBJ, .o = o};
	}
	list *l = arena_alloc(sizeof *l);
	value *v = arena_alloc((size_t)n * sizeof *v + 1);
	if (l == NULL || v == NULL) {
		b->spent = true;
		return v_null();
	}
	for (uint32_t i = 0; i < n; i++)
		v[i] = items[i].val;
	l->n = n;
	l->v = v;
	return (value){.kind = V_LIST, .l = l};
}

/* b_key reads an object's key and its colon, and what follows them up to
 * the value. */
static void b_key(builder *b)
{
	b->frames[b->depth - 1].key = b_str(b);
	b_space(b);
	b->i++; /* : */
	b_space(b);
}

/* b_value is builder.value: the value at b->i, its arrays and objects
 * read with the explicit stack. */
static value b_value(builder *b)
{
	for (;;) {
		b_space(b);
		uint8_t c = b->data[b->i];
		value v;
		if (c == '{' || c == '[') {
			b->i++;
			b->frames[b->depth++] = (bframe){.object = c == '{', .base = b->top};
			b_space(b);
			if (b->data[b->i] != (c == '{' ? '}' : ']')) {
				if (c == '{')
					b_key(b);
				continue;
			}
			b->i++;
			v = b_close(b);
		} else {
			v = b_scalar(b);
		}
		/* v is done: it is an item of the innermost open array or
		 * object, which may close with it, and so on outwards. */
		for (;;) {
			if (b->depth == 0)
				return v;
			bframe *fr = &b->frames[b->depth - 1];
			b->stack[b->top++] = (jfield){fr->key, v};
			b_space(b);
			if (b->data[b->i] == ',') {
				b->i++;
				b_space(b);
				if (fr->object)
					b_key(b);
				break;
			}
			b->i++; /* ] or } */
			v = b_close(b);
		}
	}
}

/* read_object: readObject. */
bool read_object(const uint8_t *data, uint32_t n, jobj **out, perr **err)
{
	uint32_t end;
	str msg;
	if (!scan_value(data, n, 0, &end, &msg)) {
		*err = perr_new(CODE_JSON, msg);
		return false;
	}
	uint32_t at;
	if (trailing(data, n, end, &at)) {
		fmt_arg a[] = {fa_d(at)};
		*err = perr_new(CODE_JSON, fmt("unexpected data after the JSON object (at byte %d)", a, 1));
		return false;
	}
	/* A line of n bytes nests at most n/2 deep and holds at most n/2+1
	 * values: the stacks' room, once. */
	uint32_t depth = n / 2 + 1 < MAX_NESTING ? n / 2 + 1 : MAX_NESTING;
	builder b = {.data = data, .n = n};
	b.frames = arena_alloc((size_t)depth * sizeof *b.frames);
	b.stack = arena_alloc(((size_t)n / 2 + 1) * sizeof *b.stack);
	if (b.frames == NULL || b.stack == NULL)
		goto spent;
	b_space(&b);
	bool object = b.data[b.i] == '{';
	value v = b_value(&b);
	if (b.spent)
		goto spent;
	if (!object) {
		buf w = {0};
		buf_lit(&w, "input is ");
		buf_lit(&w, go_type_name(v));
		buf_lit(&w, "; want a JSON object");
		*err = perr_new(CODE_JSON, buf_done(&w));
		return false;
	}
	if (b.twice) {
		fmt_arg a[] = {fa_s(b.dup)};
		*err = perr_new(CODE_JSON, fmt("input has %q twice", a, 1));
		return false;
	}
	*out = v.o;
	return true;
spent:
	/* Not Go's: a line within MAX_LINE_LEN never spends the arena. */
	*err = perr_new(CODE_TOO_LONG, STR("input is too large to read"));
	return false;
}
