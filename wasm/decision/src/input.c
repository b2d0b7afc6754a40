/*
 * input.c ports plan/input.go (the checks of an input against the
 * declared inputs, with the engine's messages, and the conversion to
 * run-time values) and what package plan needs of plan/atof.go: parseInt
 * and parseDouble, strconv's ParseInt(s, 10, 64) and ParseFloat(s, 64).
 *
 * check and celValue recurse in Go over a dyn value's nesting, which the
 * reader bounds only at maxNesting: here both walk it with an explicit
 * stack, as a WebAssembly stack is small.
 */
#include "decision.h"

#include <math.h>
#include <stdlib.h>

/* ---- numbers (atof.go) ------------------------------------------------- */

/* parse_int: parseInt. */
bool parse_int(str s, int64_t *out)
{
	bool neg = false;
	uint32_t i = 0;
	if (s.n > 0 && (s.p[0] == '-' || s.p[0] == '+')) {
		neg = s.p[0] == '-';
		i = 1;
	}
	if (i == s.n)
		return false;
	uint64_t n = 0;
	for (; i < s.n; i++) {
		uint8_t c = (uint8_t)(s.p[i] - '0');
		if (c > 9 || n > (UINT64_C(1) << 63) / 10)
			return false;
		n = n * 10 + c;
		if (n > UINT64_C(1) << 63)
			return false;
	}
	if (neg) {
		*out = (int64_t)(0 - n); /* -(1<<63) is itself */
		return true;
	}
	if (n == UINT64_C(1) << 63)
		return false;
	*out = (int64_t)n;
	return true;
}

/* parse_double is parseDouble: strconv.ParseFloat(s, 64) for a JSON
 * number's text, which the scanner has checked: the nearest double,
 * halves to even (strtod's, correctly rounded in musl as in strconv);
 * false for a number beyond the largest double (ParseFloat's range
 * error). An underflow is no error: ParseFloat gives 0 or the subnormal
 * as strtod does. */
static bool parse_double(str s, double *out)
{
	char small[64];
	char *z = s.n < sizeof small ? small : arena_alloc((size_t)s.n + 1);
	if (z == NULL)
		return false;
	memcpy(z, s.p, s.n);
	z[s.n] = 0;
	*out = strtod(z, NULL);
	return !isinf(*out);
}

/* ---- values ------------------------------------------------------------- */

/* int_of is intOf: v as an int64, and whether it is an integer that
 * fits. A JSON number is an int when its text is, or when it is a double
 * without a fraction below 2^53 (1.0, 1e0), as a double is. */
static bool int_of(value v, int64_t *out)
{
	switch (v.kind) {
	case V_INT:
		*out = v.i;
		return true;
	case V_UINT:
		*out = (int64_t)v.u;
		return v.u <= INT64_MAX;
	case V_DOUBLE:
		if (v.d == trunc(v.d) && fabs(v.d) < 0x1p53) {
			*out = (int64_t)v.d;
			return true;
		}
		return false;
	case V_JNUM: {
		double f;
		if (parse_int(v.s, out))
			return true;
		if (parse_double(v.s, &f))
			return int_of(v_double(f), out);
		return false;
	}
	}
	return false;
}

/* as_double is asDouble. */
static bool as_double(value v, double *out)
{
	switch (v.kind) {
	case V_DOUBLE:
		*out = v.d;
		return true;
	case V_JNUM:
		return parse_double(v.s, out);
	}
	int64_t i;
	if (int_of(v, &i)) {
		*out = (double)i;
		return true;
	}
	return false;
}

/* go_type_name: goTypeName. */
const char *go_type_name(value v)
{
	int64_t i;
	if (int_of(v, &i))
		return "an int";
	switch (v.kind) {
	case V_NULL:
		return "null";
	case V_STRING:
		return "a string";
	case V_BOOL:
		return "a bool";
	case V_DOUBLE:
	case V_JNUM: {
		double f;
		if (as_double(v, &f) && f == trunc(f))
			return "a number too large for an int";
		return "a number with a fraction";
	}
	case V_LIST:
		return "a list";
	case V_JOBJ:
		return "an object";
	}
	return "a value of another Go type";
}

/* utf8_invalid_at is where data stops being valid UTF-8 as utf8.Valid
 * reads it (no surrogates, nothing past U+10FFFF, no overlong forms), or
 * n (invalidUTF8At). */
static uint32_t utf8_invalid_at(const uint8_t *d, uint32_t n)
{
	uint32_t i = 0;
	while (i < n) {
		uint8_t c = d[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		uint32_t size;
		uint8_t lo = 0x80, hi = 0xBF; /* the second byte's range */
		if (c >= 0xC2 && c <= 0xDF) {
			size = 2;
		} else if (c >= 0xE0 && c <= 0xEF) {
			size = 3;
			if (c == 0xE0)
				lo = 0xA0;
			else if (c == 0xED)
				hi = 0x9F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			size = 4;
			if (c == 0xF0)
				lo = 0x90;
			else if (c == 0xF4)
				hi = 0x8F;
		} else {
			return i;
		}
		if (n - i < size || d[i + 1] < lo || d[i + 1] > hi)
			return i;
		for (uint32_t k = 2; k < size; k++) {
			if (d[i + k] < 0x80 || d[i + k] > 0xBF)
				return i;
		}
		i += size;
	}
	return n;
}

/* ---- types -------------------------------------------------------------- */

/* typeerr is typeError: what check finds, a message that follows the
 * input's name, and its code. */
typedef struct typeerr {
	const char *code;
	str msg;
} typeerr;

static typeerr *type_err(const char *code, str msg)
{
	typeerr *e = arena_alloc(sizeof *e);
	if (e == NULL) { /* the arena is spent: the message is lost, not the refusal */
		static const typeerr spent = {CODE_WRONG_TYPE, {"is too large to check", 21}};
		return (typeerr *)&spent;
	}
	e->code = code;
	e->msg = msg;
	return e;
}

/* describe is Type.describe: the type in messages, "int or null" for
 * "int?". */
static str describe(const type *t)
{
	str s = t->text;
	if (!t->nullable)
		return s;
	if (s.n > 0 && s.p[s.n - 1] == '?')
		s.n--;
	buf w = {0};
	buf_str(&w, s);
	buf_lit(&w, " or null");
	return buf_done(&w);
}

#define STR_INIT(lit) {(lit), (uint32_t)(sizeof(lit) - 1)}

static const type dyn_type = {K_DYN, NULL, false, STR_INIT("dyn")};
/* dynTypes, by kind. */
static const type dyn_string = {K_STRING, NULL, false, STR_INIT("dyn")};
static const type dyn_int = {K_INT, NULL, false, STR_INIT("dyn")};
static const type dyn_double = {K_DOUBLE, NULL, false, STR_INIT("dyn")};
static const type dyn_bool = {K_BOOL, NULL, false, STR_INIT("dyn")};
static const type dyn_list = {K_LIST, (type *)&dyn_type, false, STR_INIT("dyn")};
static const type dyn_map = {K_MAP, (type *)&dyn_type, false, STR_INIT("dyn")};
static const type dyn_unknown = {K_STRING, NULL, false, STR_INIT("a JSON value")};

/* dyn_of is dynOf: the type a dyn value checks and converts as. */
static const type *dyn_of(value v)
{
	switch (v.kind) {
	case V_STRING:
		return &dyn_string;
	case V_BOOL:
		return &dyn_bool;
	case V_LIST:
		return &dyn_list;
	case V_JOBJ:
		return &dyn_map;
	}
	int64_t i;
	double f;
	if (int_of(v, &i))
		return &dyn_int;
	if (as_double(v, &f))
		return &dyn_double;
	return &dyn_unknown;
}

static typeerr *wrong_type(const type *t, value v)
{
	str want = describe(t);
	buf w = {0};
	buf_lit(&w, "is ");
	buf_lit(&w, go_type_name(v));
	buf_lit(&w, "; want ");
	buf_str(&w, want);
	return type_err(CODE_WRONG_TYPE, buf_done(&w));
}

static typeerr *too_long(uint32_t n)
{
	fmt_arg a[] = {fa_d(n), fa_d(MAX_STRING_LEN)};
	return type_err(CODE_TOO_LONG, fmt("is %d bytes long; the limit is %d", a, 2));
}

/* check_scalar is Type.checkScalar. */
static typeerr *check_scalar(const type *t, value v)
{
	if (v.kind == V_NULL) {
		if (t->nullable || t->kind == K_DYN)
			return NULL;
		buf w = {0};
		buf_lit(&w, "is null; want ");
		buf_str(&w, describe(t));
		return type_err(CODE_WRONG_TYPE, buf_done(&w));
	}
	int64_t i;
	double f;
	switch (t->kind) {
	case K_STRING:
		if (v.kind == V_STRING)
			return v.s.n > MAX_STRING_LEN ? too_long(v.s.n) : NULL;
		break;
	case K_INT:
		if (int_of(v, &i))
			return NULL;
		break;
	case K_UINT:
		if (int_of(v, &i) && i >= 0)
			return NULL;
		break;
	case K_DOUBLE:
		if (as_double(v, &f))
			return NULL;
		break;
	case K_BOOL:
		if (v.kind == V_BOOL)
			return NULL;
		break;
	}
	return wrong_type(t, v);
}

/* check_string is checkString. */
static typeerr *check_string(str s)
{
	if (s.n > MAX_STRING_LEN)
		return too_long(s.n);
	if (utf8_invalid_at((const uint8_t *)s.p, s.n) != s.n)
		return type_err(CODE_INVALID_UTF8, STR("is not valid UTF-8"));
	return NULL;
}

/* An array or object check_composite is in: the type it checks as, the
 * value, and the item it is at (next is the one after it). */
typedef struct cframe {
	const type *t;
	value v;
	uint32_t next;
} cframe;

/* check_node is one value's own part of Type.checkComposite: NULL and
 * *open for a list or object whose items are still to check, NULL for a
 * value that passes, or the error. A dyn value is checked as dynOf's type
 * (*t is set to it). */
static typeerr *check_node(const type **t, value v, bool *open)
{
	*open = false;
	if ((*t)->kind == K_DYN) {
		if (v.kind == V_NULL)
			return NULL;
		*t = dyn_of(v);
	}
	const type *ty = *t;
	switch (ty->kind) {
	case K_LIST:
		if (v.kind != V_LIST)
			return wrong_type(ty, v);
		if (v.l->n > MAX_LIST_LEN) {
			fmt_arg a[] = {fa_d(v.l->n), fa_d(MAX_LIST_LEN)};
			return type_err(CODE_WRONG_TYPE, fmt("has %d items; the limit is %d", a, 2));
		}
		*open = true;
		return NULL;
	case K_MAP:
		if (v.kind != V_JOBJ)
			return wrong_type(ty, v);
		if (v.o->n > MAX_LIST_LEN) {
			fmt_arg a[] = {fa_d(v.o->n), fa_d(MAX_LIST_LEN)};
			return type_err(CODE_WRONG_TYPE, fmt("has %d keys; the limit is %d", a, 2));
		}
		*open = true;
		return NULL;
	case K_STRING:
		if (v.kind == V_STRING) {
			typeerr *e = check_string(v.s);
			if (e != NULL)
				return e;
		}
		return check_scalar(ty, v);
	}
	return check_scalar(ty, v);
}

/* wrap_path is typeError.wrap from each open list and object outwards:
 * "item 0 key \"a\" " before the innermost error's message. */
static typeerr *wrap_path(const cframe *st, uint32_t depth, typeerr *e)
{
	buf w = {0};
	for (uint32_t k = 0; k < depth; k++) {
		uint32_t at = st[k].next - 1;
		if (st[k].t->kind == K_LIST) {
			fmt_arg a[] = {fa_d(at)};
			buf_str(&w, fmt("item %d", a, 1));
		} else {
			fmt_arg a[] = {fa_s(st[k].v.o->f[at].key)};
			buf_str(&w, fmt("key %q", a, 1));
		}
		buf_byte(&w, ' ');
	}
	buf_str(&w, e->msg);
	return type_err(e->code, buf_done(&w));
}

/* check_composite is Type.checkComposite, depth first with an explicit
 * stack: the first error in Go's order, wrapped as Go wraps it. */
static typeerr *check_composite(const type *t, value v)
{
	bool open;
	typeerr *e = check_node(&t, v, &open);
	if (e != NULL || !open)
		return e;
	uint32_t cap = 16, depth = 0;
	cframe *st = arena_alloc(cap * sizeof *st);
	if (st == NULL)
		return type_err(CODE_WRONG_TYPE, STR("is too large to check"));
	st[depth++] = (cframe){t, v, 0};
	while (depth > 0) {
		cframe *f = &st[depth - 1];
		bool is_list = f->t->kind == K_LIST;
		uint32_t n = is_list ? f->v.l->n : f->v.o->n;
		if (f->next == n) {
			depth--;
			continue;
		}
		uint32_t at = f->next++;
		value item;
		if (is_list) {
			item = f->v.l->v[at];
		} else {
			e = check_string(f->v.o->f[at].key);
			if (e != NULL)
				return wrap_path(st, depth, e);
			item = f->v.o->f[at].val;
		}
		const type *it = f->t->elem;
		e = check_node(&it, item, &open);
		if (e != NULL)
			return wrap_path(st, depth, e);
		if (!open)
			continue;
		if (depth == cap) {
			cframe *grown = arena_alloc(2 * cap * sizeof *st);
			if (grown == NULL)
				return type_err(CODE_WRONG_TYPE, STR("is too large to check"));
			memcpy(grown, st, cap * sizeof *st);
			st = grown;
			cap *= 2;
		}
		st[depth++] = (cframe){it, item, 0};
	}
	return NULL;
}

/* check_type is Type.check, the engine's valueType.check without the
 * memo key. */
static typeerr *check_type(const type *t, value v)
{
	if (v.kind != V_NULL && (t->kind == K_LIST || t->kind == K_MAP || t->kind == K_DYN))
		return check_composite(t, v);
	return check_scalar(t, v);
}

/* ---- the plan's inputs --------------------------------------------------- */

static bool declares(const plan *p, str name)
{
	for (uint32_t i = 0; i < p->n_inputs; i++) {
		if (str_eq(p->inputs[i].name, name))
			return true;
	}
	return false;
}

/* unknown_field is unknownField: the first field of in, by name, that is
 * not a declared input, or NULL. */
static perr *unknown_field(const plan *p, const jobj *in)
{
	uint32_t i = 0;
	while (i < in->n && declares(p, in->f[i].key))
		i++;
	if (i == in->n)
		return NULL;
	fmt_arg a[] = {fa_s(in->f[i].key)};
	perr *e = perr_new(CODE_UNKNOWN_FIELD, fmt("unknown input %q", a, 1));
	buf w = {0};
	buf_lit(&w, "the inputs of ");
	buf_str(&w, p->ref);
	buf_lit(&w, " are: ");
	for (uint32_t k = 0; k < p->n_inputs; k++) {
		if (k > 0)
			buf_lit(&w, ", ");
		buf_str(&w, p->inputs[k].name);
	}
	e->hint = buf_done(&w);
	return e;
}

/* check is Plan.check: an input against the declared inputs, as the
 * engine does: a missing required input, a value of the wrong type, a
 * field not declared, a string that is too long or not UTF-8. */
static perr *check(const plan *p, const jobj *in)
{
	uint32_t found = 0;
	for (uint32_t i = 0; i < p->n_inputs; i++) {
		const input *decl = &p->inputs[i];
		value v;
		if (jobj_get(in, decl->name, &v)) {
			found++;
		} else if (decl->required) {
			perr *e = unknown_field(p, in);
			if (e != NULL)
				return e;
			str want = describe(decl->type);
			fmt_arg a[] = {fa_s(decl->name), fa_s(want)};
			return perr_new(CODE_MISSING_FIELD, fmt("input %s is missing; want %s", a, 2));
		} else {
			v = decl->def;
		}
		typeerr *te = check_type(decl->type, v);
		if (te != NULL) {
			fmt_arg a[] = {fa_s(decl->name), fa_s(te->msg)};
			return perr_new(te->code, fmt("input %s %s", a, 2));
		}
	}
	if (found != in->n)
		return unknown_field(p, in);
	/* No string input needs a UTF-8 check of its own: decode_input
	 * checked the whole line, and the reader makes only valid UTF-8 of
	 * valid UTF-8 (a broken surrogate escape becomes U+FFFD). */
	return NULL;
}

/* decode_input: decodeInput. */
bool decode_input(const plan *p, const uint8_t *data, uint32_t n, jobj **out, perr **err)
{
	uint32_t bad = utf8_invalid_at(data, n);
	if (bad != n) {
		fmt_arg a[] = {fa_d(bad)};
		*err = perr_new(CODE_INVALID_UTF8, fmt("input is not valid UTF-8 (at byte %d)", a, 1));
		return false;
	}
	jobj *obj;
	if (!read_object(data, n, &obj, err))
		return false;
	*out = obj;
	perr *e = check(p, obj);
	if (e != NULL) {
		*err = e;
		return false;
	}
	return true;
}

perr *check_input(const plan *p, const jobj *in) { return check(p, in); }

uint32_t utf8_invalid_in(str s) { return utf8_invalid_at((const uint8_t *)s.p, s.n); }

/* as_go_float is a JSON value as json.Marshal writes what json.Unmarshal
 * made of it: every number a float64 (numbers_as_floats). */
static bool as_go_float(value *v)
{
	switch (v->kind) {
	case V_JNUM: {
		double d;
		if (!parse_double(v->s, &d))
			return false;
		buf w = {0};
		str bad;
		append_float(&w, d, &bad); /* d is finite */
		v->s = buf_done(&w);
		return true;
	}
	case V_LIST:
		for (uint32_t i = 0; i < v->l->n; i++) {
			if (!as_go_float(&v->l->v[i]))
				return false;
		}
		return true;
	case V_JOBJ:
		return numbers_as_floats(v->o);
	}
	return true;
}

bool numbers_as_floats(jobj *o)
{
	for (uint32_t i = 0; i < o->n; i++) {
		if (!as_go_float(&o->f[i].val))
			return false;
	}
	return true;
}

/* ---- conversion ---------------------------------------------------------- */

/* cel_node is Type.celValue for a value that is not a list or map of
 * its type: *open for one, whose items are still to convert. A dyn value
 * converts as dynOf's type (*t is set to it). */
static value cel_node(const type **t, value v, bool *open)
{
	*open = false;
	if (v.kind == V_NULL)
		return v;
	if ((*t)->kind == K_DYN)
		*t = dyn_of(v);
	int64_t i = 0;
	double f = 0;
	switch ((*t)->kind) {
	case K_STRING:
	case K_BOOL:
		return v;
	case K_INT:
		if (v.kind == V_INT)
			return v;
		int_of(v, &i);
		return v_int(i);
	case K_UINT:
		int_of(v, &i);
		return v_uint((uint64_t)i);
	case K_DOUBLE:
		if (v.kind == V_DOUBLE)
			return v;
		as_double(v, &f);
		return v_double(f);
	}
	*open = true; /* K_LIST, K_MAP */
	return v;
}

/* A list or map cel_value is converting: its type, the value read, where
 * the converted items go, and the next item. */
typedef struct vframe {
	const type *t;
	value from;
	value *to;
	uint32_t next;
} vframe;

/* cel_open makes the converted list or map of v, its items to come, and
 * returns where they go (NULL when the arena is spent). */
static value *cel_open(const type *t, value v, value *out)
{
	if (t->kind == K_LIST) {
		list *l = arena_alloc(sizeof *l);
		value *items = arena_alloc((size_t)v.l->n * sizeof *items + 1);
		if (l == NULL || items == NULL)
			return NULL;
		l->n = v.l->n;
		l->v = items;
		*out = (value){.kind = V_LIST, .l = l};
		return items;
	}
	map *m = arena_alloc(sizeof *m);
	value *keys = arena_alloc((size_t)v.o->n * sizeof *keys + 1);
	value *vals = arena_alloc((size_t)v.o->n * sizeof *vals + 1);
	if (m == NULL || keys == NULL || vals == NULL)
		return NULL;
	for (uint32_t i = 0; i < v.o->n; i++)
		keys[i] = v_string(v.o->f[i].key);
	m->n = v.o->n;
	m->k = keys;
	m->v = vals;
	*out = (value){.kind = V_MAP, .m = m};
	return vals;
}

/* cel_value: Type.celValue, depth first with an explicit stack. A value
 * check accepted needs at most its own size again; should the arena
 * still run out, the value is an error, which evaluation reports. */
value cel_value(const type *t, value v)
{
	bool open;
	value out = cel_node(&t, v, &open);
	if (!open)
		return out;
	uint32_t cap = 16, depth = 0;
	vframe *st = arena_alloc(cap * sizeof *st);
	value *to = st == NULL ? NULL : cel_open(t, v, &out);
	if (to == NULL)
		return v_error(STR("input is too large to convert"));
	st[depth++] = (vframe){t, v, to, 0};
	while (depth > 0) {
		vframe *f = &st[depth - 1];
		bool is_list = f->t->kind == K_LIST;
		uint32_t n = is_list ? f->from.l->n : f->from.o->n;
		if (f->next == n) {
			depth--;
			continue;
		}
		uint32_t at = f->next++;
		value item = is_list ? f->from.l->v[at] : f->from.o->f[at].val;
		const type *it = f->t->elem;
		value *dst = &f->to[at]; /* in the arena: it stays where st grows */
		*dst = cel_node(&it, item, &open);
		if (!open)
			continue;
		if (depth == cap) {
			vframe *grown = arena_alloc(2 * cap * sizeof *st);
			if (grown == NULL)
				return v_error(STR("input is too large to convert"));
			memcpy(grown, st, cap * sizeof *st);
			st = grown;
			cap *= 2;
		}
		value *items = cel_open(it, item, dst);
		if (items == NULL)
			return v_error(STR("input is too large to convert"));
		st[depth++] = (vframe){it, item, items, 0};
	}
	return out;
}
