/*
 * value.c ports plan/value.go (the run-time values: errors, types,
 * equality, numeric order, map look-up) and object.go's object.get.
 */
#include "decision.h"

#include <math.h>

/* spent_message is cel-go's message for an expression stopped at its
 * cost limit (eval.go's spentMessage). */
#define SPENT_MESSAGE "operation cancelled: actual cost limit exceeded"

/* oom_error is the error of a call whose arena is spent: the evaluation
 * fails as the step budget does (cost_limit), since the steps bound the
 * same work. It is never written. */
static evalerr oom_error = {{SPENT_MESSAGE, sizeof(SPENT_MESSAGE) - 1}, true};

/* v_error is errorf's result for a message already formatted. A message
 * or an error the arena could not hold (msg.p NULL: fmt's answer when
 * the arena is spent) is the cost_limit error. */
value v_error(str msg)
{
	if (msg.p == NULL && msg.n == 0)
		return (value){.kind = V_ERROR, .e = &oom_error};
	evalerr *e = arena_alloc(sizeof *e);
	if (e == NULL)
		return (value){.kind = V_ERROR, .e = &oom_error};
	e->msg = msg;
	return (value){.kind = V_ERROR, .e = e};
}

/* no_overload is noOverload, cel-go's error for arguments no overload
 * takes. It is never written. */
static evalerr no_overload = {{"no such overload", 16}, false};

/* v_no_overload: noOverload. */
value v_no_overload(void) { return (value){.kind = V_ERROR, .e = &no_overload}; }

/* v_no_overload_for: noOverloadFor, "no such overload: " + f.String(). */
value v_no_overload_for(uint8_t func)
{
	const char *name = func_name(func);
	size_t n = strlen(name);
	char *p = arena_alloc(18 + n);
	if (p == NULL)
		return v_error((str){0});
	memcpy(p, "no such overload: ", 18);
	memcpy(p + 18, name, n);
	return v_error((str){p, (uint32_t)(18 + n)});
}

/* v_is_number: isNumber. */
bool v_is_number(value v) { return v.kind == V_INT || v.kind == V_UINT || v.kind == V_DOUBLE; }

/* v_type_name: typeName, the CEL name of a value's type. */
const char *v_type_name(value v)
{
	switch (v.kind) {
	case V_NULL:
		return "null_type";
	case V_BOOL:
		return "bool";
	case V_INT:
		return "int";
	case V_UINT:
		return "uint";
	case V_DOUBLE:
		return "double";
	case V_STRING:
		return "string";
	case V_LIST:
		return "list";
	case V_MAP:
		return "map";
	}
	return "error";
}

static bool equal(const value *a, const value *b);

/* numbers_equal: equal for a number: by value across int, uint and
 * double. Apart from equal, so that equal's recursion over nested lists
 * keeps nothing in the C stack of linear memory. */
static __attribute__((noinline)) bool numbers_equal(const value *a, const value *b)
{
	int c;
	return v_compare_numbers(*a, *b, &c) && c == 0;
}

/* key_equal: keyEqual, a map key's equality: strings and bools by
 * value, numbers by value across int, uint and double. */
static bool key_equal(const value *a, const value *b)
{
	switch (a->kind) {
	case V_STRING:
		return b->kind == V_STRING && str_eq(a->s, b->s);
	case V_BOOL:
		return b->kind == V_BOOL && a->b == b->b;
	}
	return v_is_number(*a) && v_is_number(*b) && numbers_equal(a, b);
}

/* map_index is Map.find's index of key k, or -1. */
static int64_t map_index(const map *m, const value *k)
{
	for (uint32_t i = 0; i < m->n; i++) {
		if (key_equal(&m->k[i], k))
			return i;
	}
	return -1;
}

/* map_find: Map.find, a key looked up as CEL does: numeric keys by
 * value, across int, uint and double. */
bool map_find(const map *m, value k, value *out)
{
	int64_t i = map_index(m, &k);
	if (i < 0)
		return false;
	*out = m->v[i];
	return true;
}

/* equal is CEL's ==: numbers compare by value across int, uint and
 * double, values of different types are unequal, lists and maps compare
 * element by element. Its recursion is as deep as the values' nesting
 * (an input's may be 10000, the JSON reader's bound), so it takes
 * pointers and keeps no local in memory: each level costs no C stack. */
static bool equal(const value *a, const value *b)
{
	switch (a->kind) {
	case V_NULL:
		return b->kind == V_NULL;
	case V_BOOL:
		return b->kind == V_BOOL && a->b == b->b;
	case V_STRING:
		return b->kind == V_STRING && str_eq(a->s, b->s);
	case V_INT:
	case V_UINT:
	case V_DOUBLE:
		return numbers_equal(a, b);
	case V_LIST:
		if (b->kind != V_LIST || a->l->n != b->l->n)
			return false;
		for (uint32_t i = 0; i < a->l->n; i++) {
			if (!equal(&a->l->v[i], &b->l->v[i]))
				return false;
		}
		return true;
	case V_MAP:
		if (b->kind != V_MAP || a->m->n != b->m->n)
			return false;
		for (uint32_t i = 0; i < a->m->n; i++) {
			int64_t j = map_index(b->m, &a->m->k[i]);
			if (j < 0 || !equal(&a->m->v[i], &b->m->v[j]))
				return false;
		}
		return true;
	}
	return false;
}

/* v_equal: equal, CEL's ==. */
bool v_equal(value a, value b) { return equal(&a, &b); }

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b) ? 1 : 0)

/* 2^63 and 2^64 as doubles: math.MaxInt64 and math.MaxUint64 converted
 * to float64, as Go's comparisons with them do. */
#define TWO63 9223372036854775808.0
#define TWO64 18446744073709551616.0

/* compare_int_double: compareIntDouble. */
static bool compare_int_double(int64_t i, double d, int *c)
{
	if (isnan(d))
		return false;
	if (d < -TWO63)
		*c = 1;
	else if (d >= TWO63)
		*c = -1;
	else
		*c = CMP((double)i, d);
	return true;
}

/* compare_uint_double: compareUintDouble. */
static bool compare_uint_double(uint64_t u, double d, int *c)
{
	if (isnan(d))
		return false;
	if (d < 0)
		*c = 1;
	else if (d >= TWO64)
		*c = -1;
	else
		*c = CMP((double)u, d);
	return true;
}

/* v_compare_numbers: compareNumbers, two numbers of any numeric type
 * ordered; false when either is not a number or is NaN. */
bool v_compare_numbers(value a, value b, int *c)
{
	switch (a.kind) {
	case V_INT:
		switch (b.kind) {
		case V_INT:
			*c = CMP(a.i, b.i);
			return true;
		case V_UINT:
			*c = a.i < 0 ? -1 : CMP((uint64_t)a.i, b.u);
			return true;
		case V_DOUBLE:
			return compare_int_double(a.i, b.d, c);
		}
		break;
	case V_UINT:
		switch (b.kind) {
		case V_INT:
			*c = b.i < 0 ? 1 : CMP(a.u, (uint64_t)b.i);
			return true;
		case V_UINT:
			*c = CMP(a.u, b.u);
			return true;
		case V_DOUBLE:
			return compare_uint_double(a.u, b.d, c);
		}
		break;
	case V_DOUBLE:
		switch (b.kind) {
		case V_INT:
			if (!compare_int_double(b.i, a.d, c))
				return false;
			*c = -*c;
			return true;
		case V_UINT:
			if (!compare_uint_double(b.u, a.d, c))
				return false;
			*c = -*c;
			return true;
		case V_DOUBLE:
			if (isnan(a.d) || isnan(b.d))
				return false;
			*c = CMP(a.d, b.d);
			return true;
		}
		break;
	}
	return false;
}

/* jobj_get: object.get, the value of key by binary search. */
bool jobj_get(const jobj *o, str key, value *out)
{
	uint32_t lo = 0, hi = o->n;
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;
		if (str_cmp(o->f[m].key, key) < 0)
			lo = m + 1;
		else
			hi = m;
	}
	if (lo < o->n && str_eq(o->f[lo].key, key)) {
		*out = o->f[lo].val;
		return true;
	}
	return false;
}
