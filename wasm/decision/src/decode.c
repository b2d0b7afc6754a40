/*
 * Reading plans: plan/decode.go, plan/varint.go, the reading side of
 * plan/set.go and plan/codec.go's tags, and Func.String of plan/plan.go.
 * The messages and the order of the checks are Go's, so that bad bytes
 * get the error the Go evaluator gives them.
 *
 * A decoded plan, its imports and everything they hold live in chunks
 * malloc'd for that plan (a pool), so that plan_free frees them whole.
 */
#include <stdlib.h>

#include "decision.h"

#define MAGIC "DLPLAN"
#define FORMAT_VERSION 2
#define SET_MAGIC "DLPLANSET"
#define SET_FORMAT_VERSION 1

/* codec.go's value tags. */
enum { TAG_NULL, TAG_FALSE, TAG_TRUE, TAG_INT, TAG_UINT, TAG_DOUBLE, TAG_STRING, TAG_LIST, TAG_MAP, TAG_OBJECT };

/* ---- the pool of a plan ------------------------------------------------ */

typedef struct pool pool;
struct pool {
	pool *next;
	size_t cap, used;
	uint64_t data[];
};

/* owned is what plan_decode mallocs for a plan: the plan first, so that
 * plan_free finds the pool from the plan. */
typedef struct owned {
	plan p;
	pool *mem;
} owned;

#define POOL_CHUNK (16u << 10)

static void *pool_alloc(pool **mem, size_t n) {
	size_t need = (n + 7) & ~(size_t)7;
	pool *c = *mem;
	if (need < n) {
		return NULL;
	}
	if (c == NULL || c->cap - c->used < need) {
		size_t cap = need > POOL_CHUNK ? need : POOL_CHUNK;
		if (cap > SIZE_MAX - sizeof(pool) || (c = malloc(sizeof(pool) + cap)) == NULL) {
			return NULL;
		}
		c->next = *mem;
		c->cap = cap;
		c->used = 0;
		*mem = c;
	}
	char *p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, n);
	return p;
}

void plan_free(plan *p) {
	if (p == NULL) {
		return;
	}
	owned *o = (owned *)p;
	for (pool *c = o->mem; c != NULL;) {
		pool *next = c->next;
		free(c);
		c = next;
	}
	free(o);
}

/* ---- varints: varint.go ------------------------------------------------ */

/* uvarint is binary.Uvarint: the value and the bytes read; 0 when b ends
 * first, < 0 when the value overflows 64 bits. */
static int uvarint(const uint8_t *b, uint32_t n, uint64_t *v) {
	uint64_t x = 0;
	unsigned s = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t c = b[i];
		if (i == 10) {
			return -(int)(i + 1);
		}
		if (c < 0x80) {
			if (i == 9 && c > 1) {
				return -(int)(i + 1);
			}
			*v = x | (uint64_t)c << s;
			return (int)(i + 1);
		}
		x |= (uint64_t)(c & 0x7f) << s;
		s += 7;
	}
	return 0;
}

/* ---- reader: decode.go's ----------------------------------------------- */

typedef struct reader {
	const uint8_t *b; /* the bytes left */
	uint32_t n;
	str *table;
	uint32_t n_table;
	perr *err; /* the first failure */
	pool **mem;
} reader;

/* failure starts the message of the first failure, "not a valid plan:
 * ..." (badPlan), or gives NULL when the reader failed before. Either
 * way the reader reads nothing more (reader.fail). */
static buf *failure(reader *r, buf *w) {
	r->b = NULL;
	r->n = 0;
	if (r->err != NULL) {
		return NULL;
	}
	*w = (buf){0};
	buf_lit(w, "not a valid plan: ");
	return w;
}

static void fail_done(reader *r, buf *w) { r->err = perr_new(CODE_BAD_PLAN, buf_done(w)); }

static void fail_lit(reader *r, const char *msg) {
	buf w;
	if (failure(r, &w)) {
		buf_lit(&w, msg);
		fail_done(r, &w);
	}
}

/* fail_parts fails with a + s + b + the number (none, 'u' unsigned, 'd'
 * signed) + c: "%s %d out of range" and its kin. */
static void fail_parts(reader *r, const char *a, str s, const char *b, char kind, uint64_t v, const char *c) {
	buf w;
	if (failure(r, &w)) {
		buf_lit(&w, a);
		buf_str(&w, s);
		buf_lit(&w, b);
		if (kind == 'd') {
			buf_int(&w, (int64_t)v);
		} else if (kind == 'u') {
			buf_uint(&w, v);
		}
		buf_lit(&w, c);
		fail_done(r, &w);
	}
}

/* alloc is a zeroed array of n elements in the plan's pool; NULL for none,
 * and a failure where memory runs out (the Go evaluator would stop with
 * an out-of-memory panic). */
static void *alloc(reader *r, uint64_t n, size_t size) {
	if (n == 0) {
		return NULL;
	}
	void *p = n > SIZE_MAX / size ? NULL : pool_alloc(r->mem, (size_t)n * size);
	if (p == NULL) {
		fail_lit(r, "too large for memory");
	}
	return p;
}

static uint64_t r_uint(reader *r) {
	uint64_t v = 0;
	int n = uvarint(r->b, r->n, &v);
	if (n <= 0) {
		fail_lit(r, "truncated");
		return 0;
	}
	r->b += n;
	r->n -= (uint32_t)n;
	return v;
}

static int64_t r_int(reader *r) {
	uint64_t u = r_uint(r);
	int64_t v = (int64_t)(u >> 1);
	return u & 1 ? ~v : v;
}

/* r_count: reader.count, a length, which cannot be more than the bytes
 * left. */
static uint32_t r_count(reader *r) {
	uint64_t v = r_uint(r);
	uint32_t left = r->n;
	if (v > left) {
		buf w;
		if (failure(r, &w)) {
			buf_lit(&w, "a count of ");
			buf_uint(&w, v);
			buf_lit(&w, " with ");
			buf_uint(&w, left);
			buf_lit(&w, " bytes left");
			fail_done(r, &w);
		}
		return 0;
	}
	return (uint32_t)v;
}

/* r_index: reader.index, an index below n. */
static uint32_t r_index(reader *r, uint64_t n, const char *what) {
	uint64_t v = r_uint(r);
	if (v >= n) {
		fail_parts(r, what, STR(""), " ", 'u', v, " out of range");
		return 0;
	}
	return (uint32_t)v;
}

static int32_t r_ref(reader *r, uint64_t n, const char *what) {
	int64_t v = r_int(r);
	if (v < -1 || v >= (int64_t)n) {
		fail_parts(r, what, STR(""), " ", 'd', (uint64_t)v, " out of range");
		return -1;
	}
	return (int32_t)v;
}

static uint8_t r_byte(reader *r) {
	if (r->n == 0) {
		fail_lit(r, "truncated");
		return 0;
	}
	r->n--;
	return *r->b++;
}

static str r_str(reader *r) {
	uint32_t i = r_index(r, r->n_table, "string");
	if (r->err != NULL) {
		return (str){"", 0};
	}
	return r->table[i];
}

static position r_pos(reader *r) {
	position p;
	p.file = r_str(r);
	p.line = (int64_t)r_uint(r);
	p.column = (int64_t)r_uint(r);
	return p;
}

static void fail_depth(reader *r, const char *what) {
	fail_parts(r, what, STR(""), " deeper than ", 'd', MAX_DEPTH, "");
}

static type *r_type(reader *r, int depth) {
	type *t = alloc(r, 1, sizeof *t);
	if (t == NULL) {
		return NULL;
	}
	if (depth > MAX_DEPTH) {
		fail_depth(r, "a type nests");
		return t;
	}
	t->kind = r_byte(r);
	t->nullable = r_byte(r) == 1;
	t->text = r_str(r);
	if (t->kind == K_LIST || t->kind == K_MAP) {
		t->elem = r_type(r, depth + 1);
	} else if (t->kind < K_STRING || t->kind > K_MAP) {
		fail_parts(r, "unknown type kind ", STR(""), "", 'u', t->kind, "");
	}
	return t;
}

static value r_value(reader *r, int depth) {
	if (depth > MAX_DEPTH) {
		fail_depth(r, "a value nests");
		return v_null();
	}
	uint8_t tag = r_byte(r);
	switch (tag) {
	case TAG_NULL:
		return v_null();
	case TAG_FALSE:
		return v_bool(false);
	case TAG_TRUE:
		return v_bool(true);
	case TAG_INT:
		return v_int(r_int(r));
	case TAG_UINT:
		return v_uint(r_uint(r));
	case TAG_DOUBLE: {
		if (r->n < 8) {
			fail_lit(r, "truncated");
			return v_null();
		}
		uint64_t bits = 0;
		for (int i = 7; i >= 0; i--) {
			bits = bits << 8 | r->b[i];
		}
		r->b += 8;
		r->n -= 8;
		double f;
		memcpy(&f, &bits, sizeof f);
		return v_double(f);
	}
	case TAG_STRING:
		return v_string(r_str(r));
	case TAG_LIST: {
		uint32_t n = r_count(r);
		list *l = alloc(r, 1, sizeof *l);
		value *v = alloc(r, n, sizeof *v);
		if (l == NULL || (n > 0 && v == NULL)) {
			return v_null();
		}
		l->n = n;
		l->v = v;
		for (uint32_t i = 0; i < n; i++) {
			v[i] = r_value(r, depth + 1);
		}
		return (value){.kind = V_LIST, .l = l};
	}
	case TAG_MAP: {
		uint32_t n = r_count(r);
		map *m = alloc(r, 1, sizeof *m);
		value *k = alloc(r, n, sizeof *k), *v = alloc(r, n, sizeof *v);
		if (m == NULL || (n > 0 && (k == NULL || v == NULL))) {
			return v_null();
		}
		m->n = n;
		m->k = k;
		m->v = v;
		for (uint32_t i = 0; i < n; i++) {
			k[i] = r_value(r, depth + 1);
			v[i] = r_value(r, depth + 1);
		}
		return (value){.kind = V_MAP, .m = m};
	}
	case TAG_OBJECT: { /* its keys sorted and each once, as MarshalBinary writes them */
		uint32_t n = r_count(r);
		jobj *o = alloc(r, 1, sizeof *o);
		jfield *f = alloc(r, n, sizeof *f);
		if (o == NULL || (n > 0 && f == NULL)) {
			return v_null();
		}
		o->n = n;
		o->f = f;
		for (uint32_t i = 0; i < n; i++) {
			f[i].key = r_str(r);
			f[i].val = r_value(r, depth + 1);
		}
		return (value){.kind = V_JOBJ, .o = o};
	}
	}
	fail_parts(r, "unknown value tag ", STR(""), "", 'u', tag, "");
	return v_null();
}

/* node_valid: Node.valid, a node's arity. */
static bool node_valid(const node *n) {
	uint32_t a = n->nargs;
	switch (n->op) {
	case OP_CONST:
	case OP_SLOT:
		return a == 0;
	case OP_AND:
	case OP_OR:
		return a >= 2;
	case OP_COND:
		return a == 3;
	case OP_EQ:
	case OP_NE:
	case OP_INDEX:
		return a == 2;
	case OP_SELECT:
		return a == 1 && n->cnst.kind == V_STRING;
	case OP_LIST:
		return true;
	case OP_MAP:
		return a % 2 == 0;
	case OP_FOLD:
		return a == 5;
	case OP_CALL:
		switch (n->func) {
		case F_ADD: case F_MULTIPLY: case F_LESS: case F_LESS_EQUALS: case F_GREATER: case F_GREATER_EQUALS:
		case F_IN: case F_CONTAINS: case F_STARTS_WITH: case F_ENDS_WITH: case F_INDEX_OF: case F_SPLIT:
			return a == 2;
		case F_NOT: case F_NOT_STRICTLY_FALSE: case F_SIZE: case F_INT: case F_STRING: case F_DYN:
			return a == 1;
		}
	}
	return false;
}

/* circular_value: Plan.circularValue, the index of a value whose
 * expression reads itself, directly or through other values; -1 for
 * none, -2 where memory ran out. The engine builds no such plan, but a
 * forged one would recurse until the evaluator's stack ran out. */
static int64_t circular_value(const plan *p) {
	uint32_t n = p->n_values;
	if (n == 0) {
		return -1;
	}
	size_t args = 1;
	for (uint32_t k = 0; k < p->n_nodes; k++) {
		args += p->nodes[k].nargs;
	}
	/* The values each value's expression reads, in the order Go finds
	 * them, each once (a second read of one changes nothing below):
	 * reads[first[i]:first[i+1]]. */
	uint32_t *seen = calloc(p->n_nodes + 1, sizeof *seen), *stack = malloc(args * sizeof *stack);
	uint32_t *mark = calloc(n, sizeof *mark), *first = malloc(((size_t)n + 1) * sizeof *first);
	uint32_t *reads = NULL;
	size_t n_reads = 0, cap_reads = 0;
	uint8_t *state = calloc(n, 1);
	struct step {
		uint32_t value, next;
	} *path = malloc((size_t)n * sizeof *path);
	int64_t found = -2;
	if (seen == NULL || stack == NULL || mark == NULL || first == NULL || state == NULL || path == NULL) {
		goto done;
	}
	for (uint32_t i = 0; i < n; i++) {
		first[i] = (uint32_t)n_reads;
		const pvalue *v = &p->values[i];
		if (v->expr < 0) {
			continue;
		}
		size_t sp = 0;
		stack[sp++] = (uint32_t)p->exprs[v->expr].root;
		while (sp > 0) {
			uint32_t k = stack[--sp];
			if (seen[k] == i + 1) {
				continue;
			}
			seen[k] = i + 1;
			const node *nd = &p->nodes[k];
			int64_t s = (int64_t)nd->slot - p->n_inputs;
			if (nd->op == OP_SLOT && s >= 0 && s < n && mark[s] != i + 1) {
				mark[s] = i + 1;
				if (n_reads == cap_reads) {
					size_t c = cap_reads == 0 ? 64 : cap_reads * 2;
					uint32_t *more = c > UINT32_MAX ? NULL : realloc(reads, c * sizeof *reads);
					if (more == NULL) {
						goto done;
					}
					reads = more;
					cap_reads = c;
				}
				reads[n_reads++] = (uint32_t)s;
			}
			for (uint32_t a = 0; a < nd->nargs; a++) {
				stack[sp++] = (uint32_t)nd->args[a];
			}
		}
	}
	first[n] = (uint32_t)n_reads;
	/* A depth-first walk without recursion: 1 marks a value on the
	 * current path, 2 one whose reads are all done. */
	found = -1;
	for (uint32_t start = 0; start < n && found < 0; start++) {
		if (state[start] != 0) {
			continue;
		}
		state[start] = 1;
		size_t depth = 0;
		path[depth++] = (struct step){start, 0};
		while (depth > 0) {
			struct step *top = &path[depth - 1];
			if (top->next == first[top->value + 1] - first[top->value]) {
				state[top->value] = 2;
				depth--;
				continue;
			}
			uint32_t next = reads[first[top->value] + top->next++];
			if (state[next] == 1) {
				found = next;
				break;
			}
			if (state[next] == 0) {
				state[next] = 1;
				path[depth++] = (struct step){next, 0};
			}
		}
	}
done:
	free(seen);
	free(stack);
	free(mark);
	free(first);
	free(reads);
	free(state);
	free(path);
	return found;
}

/* r_plan: reader.plan, one plan and its imports, into p. */
static void r_plan(reader *r, plan *p, int depth) {
	if (depth > MAX_DEPTH) {
		fail_depth(r, "imports nest");
		return;
	}
	p->ref = r_str(r);
	p->step_limit = r_uint(r);
	p->locals = (int32_t)r_count(r);
	uint32_t values = r_count(r);

	p->n_inputs = r_count(r);
	if ((p->inputs = alloc(r, p->n_inputs, sizeof *p->inputs)) == NULL) {
		p->n_inputs = 0;
	}
	for (uint32_t i = 0; i < p->n_inputs; i++) {
		input *in = &p->inputs[i];
		in->name = r_str(r);
		in->type = r_type(r, 0);
		if (!(in->required = r_byte(r) == 1)) {
			in->def = r_value(r, 0);
		}
	}

	p->n_device_types = r_count(r);
	if ((p->device_types = alloc(r, p->n_device_types, sizeof *p->device_types)) == NULL) {
		p->n_device_types = 0;
	}
	for (uint32_t i = 0; i < p->n_device_types; i++) {
		p->device_types[i].name = r_str(r);
		p->device_types[i].code = r_int(r);
	}

	p->n_exprs = r_count(r);
	if ((p->exprs = alloc(r, p->n_exprs, sizeof *p->exprs)) == NULL) {
		p->n_exprs = 0;
	}
	/* The roots, unchecked until the nodes are read. */
	uint64_t *roots = p->n_exprs == 0 ? NULL : arena_alloc((size_t)p->n_exprs * sizeof *roots);
	if (p->n_exprs > 0 && roots == NULL) {
		fail_lit(r, "too large for memory");
		p->n_exprs = 0;
	}
	for (uint32_t i = 0; i < p->n_exprs; i++) {
		roots[i] = r_uint(r);
		p->exprs[i].pos = r_pos(r);
		p->exprs[i].source = r_str(r);
	}

	p->n_nodes = r_count(r);
	if ((p->nodes = alloc(r, p->n_nodes, sizeof *p->nodes)) == NULL) {
		p->n_nodes = 0;
	}
	uint64_t slots = (uint64_t)p->n_inputs + values + (uint32_t)p->locals;
	/* Children come first: a node's depth is known from its arguments'. */
	uint16_t *nest = calloc((size_t)p->n_nodes + 1, sizeof *nest);
	if (nest == NULL) {
		fail_lit(r, "too large for memory");
	}
	for (uint32_t i = 0; i < p->n_nodes && nest != NULL; i++) {
		node *n = &p->nodes[i];
		n->op = r_byte(r);
		n->func = r_byte(r);
		n->nargs = r_count(r);
		if ((n->args = alloc(r, n->nargs, sizeof *n->args)) == NULL) {
			n->nargs = 0;
		}
		for (uint32_t k = 0; k < n->nargs; k++) {
			n->args[k] = (int32_t)r_index(r, i, "argument"); /* children come first */
		}
		switch (n->op) {
		case OP_CONST:
		case OP_SELECT:
			n->cnst = r_value(r, 0);
			break;
		case OP_SLOT:
			n->slot = (int32_t)r_index(r, slots, "slot");
			break;
		case OP_FOLD:
			n->slot = (int32_t)r_index(r, slots, "slot");
			n->slot2 = (int32_t)r_index(r, slots, "slot");
			break;
		}
		n->line = (int64_t)r_uint(r);
		n->column = (int64_t)r_uint(r);
		if (r->err == NULL && !node_valid(n)) {
			buf w;
			failure(r, &w);
			buf_lit(&w, "node ");
			buf_uint(&w, i);
			buf_lit(&w, ": operation ");
			buf_uint(&w, n->op);
			buf_lit(&w, " with ");
			buf_uint(&w, n->nargs);
			buf_lit(&w, " arguments");
			fail_done(r, &w);
		}
		for (uint32_t k = 0; k < n->nargs; k++) {
			uint32_t a = (uint32_t)n->args[k];
			if (a < i && nest[a] + 1 > nest[i])
				nest[i] = (uint16_t)(nest[a] + 1);
		}
		if (r->err == NULL && nest[i] >= MAX_EXPR_DEPTH) { /* nest counts the levels below node i */
			fail_parts(r, "node ", STR(""), "", 'u', i, " nests deeper than " MAX_EXPR_DEPTH_TEXT);
		}
	}
	free(nest);
	for (uint32_t i = 0; i < p->n_exprs; i++) {
		/* Go reads the root as an int, so that a root past 2^63 would
		 * pass its check as a negative index; here it fails it. */
		if (roots[i] >= p->n_nodes) {
			fail_parts(r, "expression ", STR(""), "", 'u', i, ": root out of range");
		}
		p->exprs[i].root = (int32_t)roots[i];
	}

	uint32_t n = r_count(r);
	if (n != values && r->err == NULL) {
		buf w;
		failure(r, &w);
		buf_uint(&w, n);
		buf_lit(&w, " values, ");
		buf_uint(&w, values);
		buf_lit(&w, " declared");
		fail_done(r, &w);
	}
	p->n_values = values;
	if ((p->values = alloc(r, values, sizeof *p->values)) == NULL) {
		p->n_values = 0;
	}
	for (uint32_t i = 0; i < p->n_values; i++) {
		pvalue *v = &p->values[i];
		v->name = r_str(r);
		v->expr = r_ref(r, p->n_exprs, "expression");
		int64_t imp = r_int(r);
		/* An import out of int32's range fails the check below as it
		 * does in Go, as INT32_MIN. */
		v->import = imp < INT32_MIN || imp > INT32_MAX ? INT32_MIN : (int32_t)imp;
		v->pos = r_pos(r);
	}

	p->n_rules = r_count(r);
	if ((p->rules = alloc(r, p->n_rules, sizeof *p->rules)) == NULL) {
		p->n_rules = 0;
	}
	for (uint32_t i = 0; i < p->n_rules; i++) {
		rule *rl = &p->rules[i];
		rl->id = r_str(r);
		rl->pos = r_pos(r);
		rl->raise = r_str(r);
		int32_t *refs[] = {&rl->when, &rl->message, &rl->type, &rl->device_id, &rl->copy, &rl->capsule, &rl->flags};
		for (size_t k = 0; k < sizeof refs / sizeof refs[0]; k++) {
			*refs[k] = r_ref(r, p->n_exprs, "expression");
		}
		if (r->err == NULL && (rl->when < 0 || (rl->raise.n > 0 && rl->message < 0) ||
		                       (rl->raise.n == 0 && (rl->type < 0 || rl->device_id < 0)))) {
			fail_parts(r, "rule ", rl->id, "", 0, 0, " lacks an expression");
		}
	}

	p->n_imports = r_count(r);
	if ((p->imports = alloc(r, p->n_imports, sizeof *p->imports)) == NULL) {
		p->n_imports = 0;
	}
	for (uint32_t i = 0; i < p->n_imports; i++) {
		if ((p->imports[i] = alloc(r, 1, sizeof(plan))) == NULL) {
			break;
		}
		r_plan(r, p->imports[i], depth + 1);
	}
	for (uint32_t i = 0; i < p->n_values; i++) {
		const pvalue *v = &p->values[i];
		if (r->err == NULL &&
		    (v->import < -1 || (int64_t)v->import >= (int64_t)p->n_imports || (v->import < 0) == (v->expr < 0))) {
			fail_parts(r, "value ", v->name, "", 0, 0, " is neither an expression nor an import");
		}
	}
	if (r->err == NULL) {
		int64_t c = circular_value(p);
		if (c == -2) {
			fail_lit(r, "too large for memory");
		} else if (c >= 0) {
			fail_parts(r, "value ", p->values[c].name, "", 0, 0, " reads itself");
		}
	}
}

static bool has_prefix(const uint8_t *data, uint32_t n, const char *prefix) {
	size_t k = strlen(prefix);
	return n >= k && memcmp(data, prefix, k) == 0;
}

/* version_error: the error of a plan or set of another format version,
 * which a rebuild, not a fix, answers. */
static perr *version_error(const char *what, int64_t v, int64_t want, const char *hint) {
	buf w = {0};
	buf_lit(&w, what);
	buf_lit(&w, " format version ");
	buf_int(&w, v);
	buf_lit(&w, "; this evaluator reads version ");
	buf_int(&w, want);
	perr *e = perr_new(CODE_BAD_PLAN, buf_done(&w));
	e->hint = (str){hint, (uint32_t)strlen(hint)};
	return e;
}

/* plan_decode: Decode. */
plan *plan_decode(const uint8_t *data, uint32_t n, perr **err) {
	if (!has_prefix(data, n, MAGIC)) {
		reader r = {0};
		fail_lit(&r, "does not start with \"" MAGIC "\"");
		*err = r.err;
		return NULL;
	}
	owned *o = calloc(1, sizeof *o);
	if (o == NULL) {
		reader r = {0};
		fail_lit(&r, "too large for memory");
		*err = r.err;
		return NULL;
	}
	reader r = {.b = data + strlen(MAGIC), .n = n - (uint32_t)strlen(MAGIC), .mem = &o->mem};
	uint64_t v = r_uint(&r);
	if (r.err == NULL && v != FORMAT_VERSION) {
		*err = version_error("plan", (int64_t)v, FORMAT_VERSION, "build the plan again from its rules with this version of dlroute");
		plan_free(&o->p);
		return NULL;
	}
	/* The table's strings point into one copy of its bytes. */
	uint32_t count = r_count(&r);
	const uint8_t *start = r.b;
	r.table = count == 0 ? NULL : malloc((size_t)count * sizeof *r.table);
	if (count > 0 && r.table == NULL) {
		fail_lit(&r, "too large for memory");
	}
	for (uint32_t i = 0; i < count && r.err == NULL; i++) {
		uint32_t l = r_count(&r);
		if (r.err != NULL) {
			break;
		}
		r.table[r.n_table++] = (str){(const char *)r.b, l};
		r.b += l;
		r.n -= l;
	}
	if (r.err == NULL && r.b > start) {
		char *copy = alloc(&r, (uint64_t)(r.b - start), 1);
		for (uint32_t i = 0; copy != NULL && i < r.n_table; i++) {
			r.table[i].p = copy + ((const uint8_t *)r.table[i].p - start);
		}
		if (copy != NULL) {
			memcpy(copy, start, (size_t)(r.b - start));
		}
	}
	r_plan(&r, &o->p, 0);
	if (r.err == NULL && r.n != 0) {
		fail_parts(&r, "", STR(""), "", 'u', r.n, " bytes after the plan");
	}
	free(r.table);
	if (r.err != NULL) {
		*err = r.err;
		plan_free(&o->p);
		return NULL;
	}
	return &o->p;
}

/* set_find: DecodeSet, then the entry of ref. The whole set is read
 * first, as DecodeSet does, so that bytes that are not a set are a
 * load error whichever entry was asked for. */
int set_find(const uint8_t *set, uint32_t set_n, str ref, const uint8_t **data, uint32_t *n, str *hint, perr **err) {
	reader r = {0};
	if (!has_prefix(set, set_n, SET_MAGIC)) {
		fail_lit(&r, "a set of plans does not start with " SET_MAGIC);
		*err = r.err;
		return -1;
	}
	const uint8_t *body = set + strlen(SET_MAGIC);
	uint32_t body_n = set_n - (uint32_t)strlen(SET_MAGIC);
	r = (reader){.b = body, .n = body_n};
	uint64_t v = r_uint(&r);
	if (r.err == NULL && v != SET_FORMAT_VERSION) {
		*err = version_error("plan set", (int64_t)v, SET_FORMAT_VERSION, "build the plans again from their rules with this version of dlroute");
		return -1;
	}
	uint32_t entries = r_count(&r);
	const uint8_t *first = r.b;
	uint32_t first_n = r.n;
	for (uint32_t i = 0; i < entries && r.err == NULL; i++) {
		uint32_t l = r_count(&r);
		if (r.err != NULL) {
			break;
		}
		r.b += l;
		r.n -= l;
		l = r_count(&r);
		if (r.err != NULL) {
			break;
		}
		r.b += l;
		r.n -= l;
	}
	if (r.err == NULL && r.n != 0) {
		fail_lit(&r, "bytes after the last plan of the set");
	}
	if (r.err != NULL) {
		*err = r.err;
		return -1;
	}
	/* The set holds together: read it again for ref. */
	r = (reader){.b = first, .n = first_n};
	buf w = {0};
	buf_lit(&w, "the set has plans of: ");
	for (uint32_t i = 0; i < entries; i++) {
		uint32_t l = r_count(&r);
		str name = {(const char *)r.b, l};
		r.b += l;
		r.n -= l;
		l = r_count(&r);
		if (str_eq(name, ref)) {
			*data = r.b;
			*n = l;
			return 1;
		}
		r.b += l;
		r.n -= l;
		if (i > 0) {
			buf_lit(&w, ", ");
		}
		buf_str(&w, name);
	}
	*hint = buf_done(&w);
	return 0;
}

/* func_name: Func.String, the function's CEL name. */
const char *func_name(uint8_t f) {
	static const char *const names[F_END] = {
		[F_NOT] = "!_", [F_NOT_STRICTLY_FALSE] = "@not_strictly_false", [F_ADD] = "_+_", [F_MULTIPLY] = "_*_",
		[F_LESS] = "_<_", [F_LESS_EQUALS] = "_<=_", [F_GREATER] = "_>_", [F_GREATER_EQUALS] = "_>=_",
		[F_IN] = "@in", [F_SIZE] = "size", [F_INT] = "int", [F_STRING] = "string", [F_DYN] = "dyn",
		[F_CONTAINS] = "contains", [F_STARTS_WITH] = "startsWith", [F_ENDS_WITH] = "endsWith",
		[F_INDEX_OF] = "indexOf", [F_SPLIT] = "split",
	};
	if (f > 0 && f < F_END) {
		return names[f];
	}
	return "unknown";
}
