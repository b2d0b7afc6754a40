/*
 * funcs.c ports plan/funcs.go (the functions a call node applies, with
 * cel-go's messages), plan/strs.go (the string helpers of package
 * strings that plans use).
 */
#include "decision.h"

#include <math.h>

/* The errors of overflows (errIntOverflow, errUintOverflow). Never
 * written. */
static evalerr err_int_overflow = {{"integer overflow", 16}, false};
static evalerr err_uint_overflow = {{"unsigned integer overflow", 25}, false};

static value int_overflow(void) { return (value){.kind = V_ERROR, .e = &err_int_overflow}; }
static value uint_overflow(void) { return (value){.kind = V_ERROR, .e = &err_uint_overflow}; }

/* spent is the error of an arena that cannot hold a result: v_error's
 * cost_limit error, which eval makes the frame's budget spent. */
static value spent(void) { return v_error((str){0}); }

/* ---- strs.go ---------------------------------------------------------- */

/* utf8_len is the length of the UTF-8 sequence utf8.DecodeRuneInString
 * reads at s: 1 for a byte that starts none. */
static uint32_t utf8_len(const char *s, uint32_t n)
{
	uint32_t size;
	utf8_decode_rune(s, n, &size);
	return size;
}

/* rune_count: utf8.RuneCountInString. */
static int64_t rune_count(const char *p, uint32_t n)
{
	int64_t count = 0;
	for (uint32_t i = 0; i < n; count++)
		i += utf8_len(p + i, n - i);
	return count;
}

static bool has_prefix(str s, str prefix) { return s.n >= prefix.n && memcmp(s.p, prefix.p, prefix.n) == 0; }

static bool has_suffix(str s, str suffix)
{
	return s.n >= suffix.n && memcmp(s.p + (s.n - suffix.n), suffix.p, suffix.n) == 0;
}

/* index_of: indexOf, strings.Index: the byte offset of the first t in
 * s, or -1. */
static int64_t index_of(str s, str t)
{
	for (uint32_t i = 0; (uint64_t)i + t.n <= s.n; i++) {
		if (memcmp(s.p + i, t.p, t.n) == 0)
			return i;
	}
	return -1;
}

/* split is strings.Split as a CEL list: s cut around every sep, or into
 * its UTF-8 sequences when sep is "" (an invalid byte alone). */
static value split(str s, str sep)
{
	uint32_t count = 0;
	if (sep.n == 0) {
		for (uint32_t i = 0; i < s.n; count++)
			i += utf8_len(s.p + i, s.n - i);
	} else {
		count = 1;
		for (str r = s;;) {
			int64_t i = index_of(r, sep);
			if (i < 0)
				break;
			count++;
			r.p += i + sep.n;
			r.n -= (uint32_t)i + sep.n;
		}
	}
	list *l = arena_alloc(sizeof *l);
	value *v = (uint64_t)count * sizeof *v > ARENA_LIMIT ? NULL : arena_alloc(count * sizeof *v);
	if (l == NULL || (v == NULL && count > 0))
		return spent();
	l->n = count;
	l->v = v;
	if (sep.n == 0) {
		for (uint32_t i = 0, k = 0; i < s.n; k++) {
			uint32_t n = utf8_len(s.p + i, s.n - i);
			v[k] = v_string((str){s.p + i, n});
			i += n;
		}
	} else {
		str r = s;
		for (uint32_t k = 0;; k++) {
			int64_t i = index_of(r, sep);
			if (i < 0) {
				v[k] = v_string(r);
				break;
			}
			v[k] = v_string((str){r.p, (uint32_t)i});
			r.p += i + sep.n;
			r.n -= (uint32_t)i + sep.n;
		}
	}
	return (value){.kind = V_LIST, .l = l};
}

/* ---- funcs.go --------------------------------------------------------- */

/* signature_error: signatureError, cel-go's "no such overload:
 * f(type, type)". */
static value signature_error(uint8_t fn, const value *args, uint32_t nargs)
{
	buf w = {0};
	buf_lit(&w, "no such overload: ");
	buf_lit(&w, func_name(fn));
	buf_byte(&w, '(');
	for (uint32_t i = 0; i < nargs; i++) {
		if (i > 0)
			buf_lit(&w, ", ");
		buf_lit(&w, v_type_name(args[i]));
	}
	buf_byte(&w, ')');
	str s = buf_done(&w);
	if (s.p == NULL)
		return spent();
	return v_error(s);
}

static value add(value a, value b)
{
	switch (a.kind) {
	case V_STRING: {
		if (b.kind != V_STRING)
			return v_no_overload();
		uint64_t n = (uint64_t)a.s.n + b.s.n;
		if (n == 0)
			return a;
		char *p = n > ARENA_LIMIT ? NULL : arena_alloc((size_t)n);
		if (p == NULL)
			return spent();
		if (a.s.n > 0)
			memcpy(p, a.s.p, a.s.n);
		if (b.s.n > 0)
			memcpy(p + a.s.n, b.s.p, b.s.n);
		return v_string((str){p, (uint32_t)n});
	}
	case V_LIST: {
		if (b.kind != V_LIST)
			return v_no_overload();
		uint64_t n = (uint64_t)a.l->n + b.l->n;
		list *l = arena_alloc(sizeof *l);
		value *v = n * sizeof(value) > ARENA_LIMIT ? NULL : arena_alloc((size_t)n * sizeof(value));
		if (l == NULL || (v == NULL && n > 0))
			return spent();
		if (a.l->n > 0)
			memcpy(v, a.l->v, a.l->n * sizeof(value));
		if (b.l->n > 0)
			memcpy(v + a.l->n, b.l->v, b.l->n * sizeof(value));
		l->n = (uint32_t)n;
		l->v = v;
		return (value){.kind = V_LIST, .l = l};
	}
	case V_INT: {
		if (b.kind != V_INT)
			return v_no_overload();
		int64_t s;
		if (__builtin_add_overflow(a.i, b.i, &s))
			return int_overflow();
		return v_int(s);
	}
	case V_UINT: {
		if (b.kind != V_UINT)
			return v_no_overload();
		uint64_t s = a.u + b.u;
		if (s < a.u)
			return uint_overflow();
		return v_uint(s);
	}
	case V_DOUBLE:
		if (b.kind != V_DOUBLE)
			return v_no_overload();
		return v_double(a.d + b.d);
	}
	return v_no_overload_for(F_ADD);
}

static value multiply(value a, value b)
{
	switch (a.kind) {
	case V_UINT: {
		if (b.kind != V_UINT)
			return v_no_overload();
		uint64_t p;
		if (__builtin_mul_overflow(a.u, b.u, &p))
			return uint_overflow();
		return v_uint(p);
	}
	case V_DOUBLE:
		if (b.kind != V_DOUBLE)
			return v_no_overload();
		return v_double(a.d * b.d);
	case V_STRING:
		return v_no_overload();
	case V_INT:
		break;
	default:
		return v_no_overload_for(F_MULTIPLY);
	}
	if (b.kind != V_INT)
		return v_no_overload();
	int64_t p;
	if (__builtin_mul_overflow(a.i, b.i, &p))
		return int_overflow();
	return v_int(p);
}

/* order is <, <=, > and >=: bools, strings, and numbers of any numeric
 * type with one another. */
static value order(uint8_t fn, value a, value b)
{
	int c;
	switch (a.kind) {
	case V_BOOL:
		if (b.kind != V_BOOL)
			return v_no_overload();
		c = a.b == b.b ? 0 : !a.b ? -1 : 1;
		break;
	case V_STRING:
		if (b.kind != V_STRING)
			return v_no_overload();
		c = str_cmp(a.s, b.s);
		break;
	case V_INT:
	case V_UINT:
	case V_DOUBLE:
		if (!v_compare_numbers(a, b, &c)) {
			if (v_is_number(b))
				return v_error(STR("NaN values cannot be ordered"));
			return v_no_overload();
		}
		break;
	default:
		return v_no_overload_for(fn);
	}
	switch (fn) {
	case F_LESS:
		return v_bool(c < 0);
	case F_LESS_EQUALS:
		return v_bool(c <= 0);
	case F_GREATER:
		return v_bool(c > 0);
	}
	return v_bool(c >= 0);
}

/* 2^63 as a double: math.MinInt64 and math.MaxInt64 as Go compares a
 * float64 with them. */
#define TWO63 9223372036854775808.0

static value to_int(value v)
{
	switch (v.kind) {
	case V_INT:
		return v;
	case V_UINT:
		if (v.u > INT64_MAX)
			return int_overflow();
		return v_int((int64_t)v.u);
	case V_DOUBLE:
		if (isinf(v.d) || isnan(v.d) || v.d <= -TWO63 || v.d >= TWO63)
			return int_overflow();
		return v_int((int64_t)v.d);
	case V_STRING: {
		int64_t n;
		if (parse_int(v.s, &n))
			return v_int(n);
		return v_error(STR("type conversion error from 'string' to 'int'"));
	}
	}
	return signature_error(F_INT, &v, 1);
}

static value to_string(value v)
{
	buf w = {0};
	switch (v.kind) {
	case V_STRING:
		return v;
	case V_INT:
		buf_int(&w, v.i);
		break;
	case V_UINT:
		buf_uint(&w, v.u);
		break;
	case V_DOUBLE:
		format_float_g(&w, v.d);
		break;
	case V_BOOL:
		return v_string(v.b ? STR("true") : STR("false"));
	default:
		return signature_error(F_STRING, &v, 1);
	}
	str s = buf_done(&w);
	if (s.p == NULL)
		return spent();
	return v_string(s);
}

/* string_func: stringFunc, the functions of two strings. */
static value string_func(uint8_t fn, str s, str t)
{
	switch (fn) {
	case F_CONTAINS:
		return v_bool(index_of(s, t) >= 0);
	case F_STARTS_WITH:
		return v_bool(has_prefix(s, t));
	case F_ENDS_WITH:
		return v_bool(has_suffix(s, t));
	case F_INDEX_OF: {
		int64_t i = index_of(s, t);
		if (i < 0)
			return v_int(-1);
		return v_int(rune_count(s.p, (uint32_t)i));
	}
	}
	return split(s, t);
}

/* func_call: apply, one function on its evaluated arguments (eval.c's
 * call evaluates them, as funcs.go's call does). Singleton operators
 * (!, +, *, the orderings, in, size) answer "no such overload" for
 * arguments of the wrong type, and "no such overload: <op>" where the
 * first argument has no such operation at all, unless it is a string,
 * which answers what it does not take with "no such overload" (a
 * receiver in cel-go); contains, startsWith and endsWith, one overload
 * each, answer "no such overload"; the other functions with typed
 * overloads answer "no such overload: <name>(<types>)", as cel-go's
 * dispatch does. A result the arena cannot hold is the cost_limit error
 * (eval then stops the frame). */
value func_call(frame *f, const node *n, value *args)
{
	(void)f;
	uint8_t fn = n->func;
	switch (fn) {
	case F_NOT:
		if (args[0].kind == V_BOOL)
			return v_bool(!args[0].b);
		return v_no_overload();
	case F_NOT_STRICTLY_FALSE:
		if (args[0].kind == V_BOOL)
			return args[0];
		return v_bool(true);
	case F_DYN:
		return args[0];
	case F_ADD:
		return add(args[0], args[1]);
	case F_MULTIPLY:
		return multiply(args[0], args[1]);
	case F_LESS:
	case F_LESS_EQUALS:
	case F_GREATER:
	case F_GREATER_EQUALS:
		return order(fn, args[0], args[1]);
	case F_IN:
		if (args[1].kind == V_LIST) {
			const list *c = args[1].l;
			for (uint32_t i = 0; i < c->n; i++) {
				if (v_equal(args[0], c->v[i]))
					return v_bool(true);
			}
			return v_bool(false);
		}
		if (args[1].kind == V_MAP) {
			value v;
			return v_bool(map_find(args[1].m, args[0], &v));
		}
		return v_no_overload();
	case F_SIZE:
		switch (args[0].kind) {
		case V_STRING:
			return v_int(rune_count(args[0].s.p, args[0].s.n));
		case V_LIST:
			return v_int(args[0].l->n);
		case V_MAP:
			return v_int(args[0].m->n);
		}
		return v_no_overload_for(F_SIZE);
	case F_INT:
		return to_int(args[0]);
	case F_STRING:
		return to_string(args[0]);
	case F_CONTAINS:
	case F_STARTS_WITH:
	case F_ENDS_WITH:
	case F_INDEX_OF:
	case F_SPLIT:
		if (args[0].kind == V_STRING && args[1].kind == V_STRING)
			return string_func(fn, args[0].s, args[1].s);
		if (fn == F_CONTAINS || fn == F_STARTS_WITH || fn == F_ENDS_WITH)
			return v_no_overload();
		break;
	}
	return signature_error(fn, args, n->nargs);
}
