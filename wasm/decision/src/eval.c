/*
 * eval.c ports plan/eval.go: a frame (one evaluation of a plan for one
 * checked input), the rules tried in order, the outcome's checks, and
 * eval over every operation as cel-go's interpreter evaluates it.
 *
 * Every node evaluated counts one step against the frame's limit, the
 * imports' steps in the importer's count; past the limit the frame is
 * spent and its expression fails with cost_limit and cel-go's message.
 * A call whose arena is spent fails the same way (v_error's cost error,
 * which eval turns into the frame's spent budget), never a trap.
 */
#include "decision.h"

/* The outcome fields the engine checks (capsuleUnversioned,
 * capsuleVersioned, deviceTypesFile). */
#define CAPSULE_UNVERSIONED "dltensor"
#define CAPSULE_VERSIONED "dltensor_versioned"
#define DEVICE_TYPES_FILE "device_types.yaml"

static const char *const flag_names[] = {
	"DLPACK_FLAG_BITMASK_READ_ONLY",
	"DLPACK_FLAG_BITMASK_IS_COPIED",
	"DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED",
};
#define N_FLAG_NAMES 3

/* SPENT_MESSAGE is cel-go's message for an expression stopped at its
 * cost limit, which the step budget stands in for (spentMessage). */
#define SPENT_MESSAGE "operation cancelled: actual cost limit exceeded"

/* spent_error is a frame's spent budget. Never written. */
static evalerr spent_error = {{SPENT_MESSAGE, sizeof(SPENT_MESSAGE) - 1}, true};

/* oom_perr is the error of an evaluation whose arena could not hold its
 * own error: cost_limit, as the step budget fails. Never written. */
static perr oom_perr = {CODE_COST_LIMIT, {SPENT_MESSAGE, sizeof(SPENT_MESSAGE) - 1}, false, {{0}, 0, 0}, {0}, {0}};

/* NOINLINE_EARLY keeps a function out of eval's frame (see NOINLINE). */
#define NOINLINE_EARLY __attribute__((noinline))

static str cs(const char *s) { return (str){s, (uint32_t)strlen(s)}; }

static value eval(frame *f, int32_t n);
static bool eval_expr(frame *f, int32_t x, value *out, perr **err);

/* frame_new: newFrame and initFrame. It binds a checked input's values,
 * or their defaults; values are left to be computed when read. It counts
 * its steps in *steps, or in its own count where steps is NULL. NULL
 * when the arena is spent: frame_decide(NULL) answers cost_limit. */
frame *frame_new(const plan *p, const jobj *in, uint64_t *steps, uint64_t limit, tracer *trace)
{
	frame *f = arena_alloc(sizeof *f);
	uint64_t n = (uint64_t)p->n_inputs + p->n_values + (uint64_t)p->locals;
	if (f == NULL || n * sizeof(value) > ARENA_LIMIT)
		return NULL;
	f->slots = arena_alloc((size_t)n * sizeof(value));
	f->done = arena_alloc(p->n_values * sizeof(bool));
	if ((f->slots == NULL && n > 0) || (f->done == NULL && p->n_values > 0))
		return NULL;
	f->p = p;
	f->in = in;
	f->steps = steps;
	f->limit = limit;
	f->trace = trace;
	if (steps == NULL)
		f->steps = &f->count;
	for (uint32_t i = 0; i < p->n_inputs; i++) {
		const input *decl = &p->inputs[i];
		value v;
		if (in == NULL || !jobj_get(in, decl->name, &v))
			v = decl->def;
		f->slots[i] = cel_value(decl->type, v);
	}
	return f;
}

/* device_name: Plan.deviceName. */
static bool device_name(const plan *p, int64_t code, str *name)
{
	for (uint32_t i = 0; i < p->n_device_types; i++) {
		if (p->device_types[i].code == code) {
			*name = p->device_types[i].name;
			return true;
		}
	}
	return false;
}

/* expr_error: Plan.exprError, an error at the start of expression x. */
static perr *expr_error(const plan *p, int32_t x, const char *code, str msg)
{
	if (msg.p == NULL)
		return &oom_perr;
	perr *e = perr_new(code, msg);
	if (e == NULL)
		return &oom_perr;
	e->has_pos = true;
	e->pos = p->exprs[x].pos;
	e->source = p->exprs[x].source;
	return e;
}

/* eval_kind: evalKind, an expression evaluated and its run-time type
 * checked. */
static bool eval_kind(frame *f, int32_t x, const char *want, const char *desc, value *out, perr **err)
{
	value v;
	if (!eval_expr(f, x, &v, err))
		return false;
	const char *name = v_type_name(v);
	if (strcmp(name, want) != 0) {
		fmt_arg a[] = {fa_s(cs(name)), fa_v(v), fa_s(cs(desc))};
		*err = expr_error(f->p, x, CODE_BAD_OUTCOME, fmt("evaluated to %s (%v); want %s", a, 3));
		return false;
	}
	*out = v;
	return true;
}

/* flags_string: flagsString, the flags' names joined by |. */
static str flags_string(uint64_t flags)
{
	buf w = {0};
	while (flags != 0) {
		int bit = __builtin_ctzll(flags);
		if (w.n > 0)
			buf_byte(&w, '|');
		if (bit < N_FLAG_NAMES) {
			buf_lit(&w, flag_names[bit]);
		} else {
			buf_lit(&w, "bit ");
			buf_int(&w, bit);
		}
		flags &= ~(UINT64_C(1) << bit);
	}
	return buf_done(&w);
}

/* export_fields: exportFields, the optional outcome fields: copy,
 * capsule and flags, checked as the engine checks them. */
static perr *export_fields(frame *f, const rule *r, decision *d)
{
	const plan *p = f->p;
	value v;
	perr *err;
	if (r->copy >= 0) {
		if (!eval_kind(f, r->copy, "bool", "a bool", &v, &err))
			return err;
		d->copy = v.b;
	}
	if (r->capsule >= 0) {
		if (!eval_kind(f, r->capsule, "string", "a string", &v, &err))
			return err;
		d->capsule = v.s;
		if (!str_eq_lit(d->capsule, CAPSULE_UNVERSIONED) && !str_eq_lit(d->capsule, CAPSULE_VERSIONED)) {
			fmt_arg a[] = {fa_s(r->id), fa_s(d->capsule), fa_s(STR(CAPSULE_UNVERSIONED)), fa_s(STR(CAPSULE_VERSIONED))};
			return expr_error(p, r->capsule, CODE_BAD_OUTCOME, fmt("rule %s: capsule %q is not %s or %s", a, 4));
		}
	}
	if (r->flags >= 0) {
		if (!eval_expr(f, r->flags, &v, &err))
			return err;
		if (v.kind != V_LIST) {
			fmt_arg a[] = {fa_s(cs(v_type_name(v)))};
			return expr_error(p, r->flags, CODE_BAD_OUTCOME, fmt("evaluated to %s; want a list of flags", a, 1));
		}
		for (uint32_t i = 0; i < v.l->n; i++) {
			value elem = v.l->v[i];
			int64_t bit = elem.i;
			if (elem.kind != V_INT || bit <= 0 || (bit & (bit - 1)) != 0 || __builtin_ctzll((uint64_t)bit) >= N_FLAG_NAMES) {
				fmt_arg a[] = {fa_s(r->id), fa_v(elem)};
				return expr_error(p, r->flags, CODE_BAD_OUTCOME, fmt("rule %s: %v is not a DLPACK_FLAG_BITMASK_* flag", a, 2));
			}
			d->flags |= (uint64_t)bit;
		}
		if (d->flags != 0 && !str_eq_lit(d->capsule, CAPSULE_VERSIONED)) {
			str names = flags_string(d->flags);
			if (names.p == NULL)
				return &oom_perr;
			fmt_arg a[] = {fa_s(r->id), fa_s(names), fa_s(STR(CAPSULE_VERSIONED))};
			return expr_error(p, r->flags, CODE_BAD_OUTCOME,
				fmt("rule %s: flags %s need a %s capsule; an unversioned one has no flags", a, 3));
		}
	}
	return NULL;
}

/* frame_decide: frame.decide, the rules run in order. true and *d for
 * the first rule that holds, false and *err otherwise. A NULL frame
 * (frame_new's spent arena) fails with cost_limit. */
bool frame_decide(frame *f, decision *d, perr **err)
{
	memset(d, 0, sizeof *d);
	if (f == NULL) {
		*err = &oom_perr;
		return false;
	}
	const plan *p = f->p;
	for (uint32_t i = 0; i < p->n_rules; i++) {
		const rule *r = &p->rules[i];
		value ok = v_null();
		perr *e = NULL;
		eval_kind(f, r->when, "bool", "a bool", &ok, &e);
		bool matched = ok.kind == V_BOOL && ok.b;
		if (f->trace != NULL)
			trace_rule(f->trace, r, matched, e);
		if (e != NULL) {
			*err = e;
			return false;
		}
		if (!matched)
			continue;
		decision out = {0};
		out.rule = r->id;
		out.ruleset = p->ref;
		value v;
		if (r->raise.n > 0) {
			if (!eval_kind(f, r->message, "string", "a string", &v, err))
				return false;
			out.error_type = r->raise;
			out.error_message = v.s;
			*d = out;
			return true;
		}
		if (!eval_kind(f, r->type, "int", "a device type code", &v, err))
			return false;
		out.device_type_code = v.i;
		if (!device_name(p, out.device_type_code, &out.device_type)) {
			fmt_arg a[] = {fa_s(r->id), fa_d(out.device_type_code), fa_s(STR(DEVICE_TYPES_FILE))};
			*err = expr_error(p, r->type, CODE_BAD_OUTCOME, fmt("rule %s: device type code %d is not in %s", a, 3));
			return false;
		}
		if (!eval_kind(f, r->device_id, "int", "an int", &v, err))
			return false;
		out.device_id = v.i;
		if ((*err = export_fields(f, r, &out)) != NULL)
			return false;
		*d = out;
		return true;
	}
	fmt_arg a[] = {fa_s(p->ref)};
	str msg = fmt("no rule of %s matched", a, 1);
	perr *e = msg.p == NULL ? NULL : perr_new(CODE_NO_MATCH, msg);
	if (e == NULL) {
		*err = &oom_perr;
		return false;
	}
	e->hint = STR("end the rules with a catch-all rule (when: true)");
	*err = e;
	return false;
}

/* eval_expr: evalExpr, a top-level expression evaluated: an error value
 * it ends with is an error at its start, and a value that failed inside
 * it, or a budget spent, is that failure. */
static bool eval_expr(frame *f, int32_t x, value *out, perr **err)
{
	value v = eval(f, f->p->exprs[x].root);
	if (f->fatal != NULL) {
		*err = f->fatal;
		return false;
	}
	if (f->spent != NULL) {
		*err = expr_error(f->p, x, CODE_COST_LIMIT, f->spent->msg);
		return false;
	}
	if (v.kind == V_ERROR) {
		*err = expr_error(f->p, x, CODE_EVAL, v.e->msg);
		return false;
	}
	*out = v;
	return true;
}

static bool is_error(value v) { return v.kind == V_ERROR; }

/* maybe_no_overload: maybeNoOverload. */
static value maybe_no_overload(value v) { return is_error(v) ? v : v_no_overload(); }

/* logical is && and ||: the first operand equal to the short-circuit
 * value decides; otherwise the first error, or a non-bool's "no such
 * overload", is the result. */
static NOINLINE_EARLY value logical(frame *f, const node *nd)
{
	bool stop = nd->op == OP_OR;
	value err = v_null();
	bool have = false;
	for (uint32_t i = 0; i < nd->nargs; i++) {
		value v = eval(f, nd->args[i]);
		bool ok = v.kind == V_BOOL;
		if (ok && v.b == stop)
			return v_bool(stop);
		if (!ok && !have) {
			err = maybe_no_overload(v);
			have = true;
		}
	}
	if (have)
		return err;
	return v_bool(!stop);
}

/* import_decision: importDecision, the input decided with an imported
 * plan, its decision given as the engine's rules see one. Explaining,
 * the import's decision is explained too (trace_import), as the engine
 * does. */
static NOINLINE_EARLY bool import_decision(frame *f, int32_t i, const pvalue *val, value *out, perr **err)
{
	/* The import reads its own inputs from the same object: they are
	 * the importer's too, checked with it. */
	const plan *imp = f->p->imports[val->import];
	decision d = {0};
	perr *e = NULL;
	if (f->trace != NULL) {
		trace_import(f, i, imp, &d, &e);
	} else {
		/* The import's steps are the importer's: its StepLimit counts
		 * them (the engine adds an import's cost bound to its
		 * importer's), and the import's own limit would stop it early
		 * when the importer had already spent steps before reading it. */
		frame *g = frame_new(imp, f->in, f->steps, f->limit, NULL);
		frame_decide(g, &d, &e);
	}
	if (e != NULL) {
		str text = perr_text(e);
		fmt_arg a[] = {fa_s(val->name), fa_s(imp->ref), fa_s(text)};
		str msg = fmt("import %s (%s): %s", a, 3);
		perr *c = arena_alloc(sizeof *c);
		if (text.p == NULL || msg.p == NULL || c == NULL) {
			*err = &oom_perr;
			return false;
		}
		*c = *e;
		c->message = msg;
		*err = c;
		return false;
	}
	map *m = arena_alloc(sizeof *m);
	value *kv = arena_alloc(12 * sizeof(value));
	if (m == NULL || kv == NULL) {
		*err = &oom_perr;
		return false;
	}
	m->n = 6;
	m->k = kv;
	m->v = kv + 6;
	static const char *const keys[6] = {"device_type", "device_id", "copy", "error", "rule", "ruleset"};
	for (int k = 0; k < 6; k++)
		kv[k] = v_string(cs(keys[k]));
	value typ = v_null(), id = v_null(), exc = v_null();
	if (d.error_type.n > 0) {
		map *x = arena_alloc(sizeof *x);
		value *xv = arena_alloc(4 * sizeof(value));
		if (x == NULL || xv == NULL) {
			*err = &oom_perr;
			return false;
		}
		x->n = 2;
		x->k = xv;
		x->v = xv + 2;
		xv[0] = v_string(STR("type"));
		xv[1] = v_string(STR("message"));
		xv[2] = v_string(d.error_type);
		xv[3] = v_string(d.error_message);
		exc = (value){.kind = V_MAP, .m = x};
	} else {
		typ = v_int(d.device_type_code);
		id = v_int(d.device_id);
	}
	m->v[0] = typ;
	m->v[1] = id;
	m->v[2] = v_bool(d.copy);
	m->v[3] = exc;
	m->v[4] = v_string(d.rule);
	m->v[5] = v_string(d.ruleset);
	*out = (value){.kind = V_MAP, .m = m};
	return true;
}

/* value_failed is the error a failed value reads as where it is read. */
static NOINLINE_EARLY value value_failed(const pvalue *val)
{
	fmt_arg a[] = {fa_s(val->name)};
	return v_error(fmt("value %s failed", a, 1));
}

/* frame_slot: frame.slot, an input, a comprehension variable, or a
 * value, computed the first time it is read. */
value frame_slot(frame *f, int32_t s)
{
	const plan *p = f->p;
	int64_t i = (int64_t)s - p->n_inputs;
	if (i < 0 || i >= p->n_values || f->done[i])
		return f->slots[s];
	const pvalue *val = &p->values[i];
	value out = v_null();
	perr *err = NULL;
	if (val->import >= 0)
		import_decision(f, (int32_t)i, val, &out, &err);
	else
		eval_expr(f, val->expr, &out, &err);
	if (f->trace != NULL)
		trace_value(f->trace, (int32_t)i, out, err);
	if (err != NULL) {
		if (f->fatal == NULL)
			f->fatal = err;
		return value_failed(val);
	}
	f->slots[s] = out;
	f->done[i] = true;
	return out;
}

/* go_value_type: goValueType, the Go type cel-go names in an iteration
 * error. */
static const char *go_value_type(value v)
{
	switch (v.kind) {
	case V_NULL:
		return "types.Null";
	case V_BOOL:
		return "types.Bool";
	case V_INT:
		return "types.Int";
	case V_UINT:
		return "types.Uint";
	case V_DOUBLE:
		return "types.Double";
	case V_STRING:
		return "types.String";
	}
	return "unknown";
}

/* fold evaluates a comprehension: over a list's elements or a map's
 * keys, while the condition holds. */
static NOINLINE_EARLY value fold(frame *f, const node *nd)
{
	value r = eval(f, nd->args[0]);
	if (is_error(r))
		return r;
	const value *items = NULL;
	uint32_t n = 0;
	switch (r.kind) {
	case V_LIST:
		items = r.l->v;
		n = r.l->n;
		break;
	case V_MAP:
		items = r.m->k;
		n = r.m->n;
		break;
	case V_STRING:
		if (r.s.n == 0) /* cel-go skips the loop over anything empty */
			break;
		/* fall through */
	default: {
		fmt_arg a[] = {fa_s(cs(go_value_type(r)))};
		return v_error(fmt("got '%s', expected iterable type", a, 1));
	}
	}
	f->slots[nd->slot2] = eval(f, nd->args[1]);
	for (uint32_t i = 0; i < n; i++) {
		f->slots[nd->slot] = items[i];
		value c = eval(f, nd->args[2]);
		if (c.kind != V_BOOL || !c.b)
			break;
		f->slots[nd->slot2] = eval(f, nd->args[3]);
	}
	return eval(f, nd->args[4]);
}

/* 2^63 as a double, the bounds of an int64 a double converts to. */
#define TWO63 9223372036854775808.0

static value errorv(const char *format, value arg)
{
	fmt_arg a[] = {fa_v(arg)};
	return v_error(fmt(format, a, 1));
}

/* index is obj[idx] and obj.field. A key of no key type is refused
 * first, as cel-go refuses to make a qualifier of it, naming the Go type
 * cel-go holds it in: that of a list or a map from an input or a
 * literal (a list or map computed otherwise is named the same here,
 * where cel-go's type may differ). */
static NOINLINE_EARLY value index_value(value obj, value idx)
{
	switch (idx.kind) {
	case V_NULL:
		return v_error(STR("invalid qualifier type: types.Null"));
	case V_LIST:
		return v_error(STR("invalid qualifier type: *types.sliceList[cel.dev/cel-go/common/types/ref.Val]"));
	case V_MAP:
		return v_error(STR("invalid qualifier type: *types.nativeMap[cel.dev/cel-go/common/types/ref.Val,cel.dev/cel-go/common/types/ref.Val]"));
	}
	if (obj.kind == V_MAP) {
		value v;
		if (map_find(obj.m, idx, &v))
			return v;
		return errorv("no such key: %v", idx);
	}
	if (obj.kind != V_LIST)
		return errorv("no such key: %v", idx);
	int64_t i;
	switch (idx.kind) {
	case V_INT:
		i = idx.i;
		break;
	case V_UINT:
		if (idx.u > UINT64_C(1) << 62)
			return errorv("index out of bounds: %v", idx);
		i = (int64_t)idx.u;
		break;
	case V_DOUBLE:
		/* Go's float64(int64(k)) != k: a double out of int64's range
		 * (or NaN) converts to math.MinInt64, unequal to it. */
		if (!(idx.d >= -TWO63 && idx.d < TWO63) || idx.d != (double)(int64_t)idx.d)
			return errorv("unsupported index value %v in list", idx);
		i = (int64_t)idx.d;
		break;
	default: {
		fmt_arg a[] = {fa_s(cs(v_type_name(idx)))};
		return v_error(fmt("unsupported index type '%s' in list", a, 1));
	}
	}
	if (i < 0 || i >= (int64_t)obj.l->n)
		return errorv("index out of bounds: %v", idx);
	return obj.l->v[i];
}

/* call: frame.call, a function's arguments evaluated left to right, the
 * first error among them the result (all but the loop condition of all
 * and exists, which takes an error as true), then func_call. */
static NOINLINE_EARLY value call(frame *f, const node *nd)
{
	value args[3];
	for (uint32_t i = 0; i < nd->nargs; i++) {
		value v = eval(f, nd->args[i]);
		if (is_error(v) && nd->func != F_NOT_STRICTLY_FALSE)
			return v;
		args[i] = v;
	}
	return func_call(f, nd, args);
}

/* The operations with locals, each apart from eval (NOINLINE), so that
 * eval's frame, one per level of a plan's nesting, holds no local of
 * theirs in the C stack of linear memory. */
#define NOINLINE __attribute__((noinline))

static NOINLINE value op_cond(frame *f, const node *nd)
{
	value c = eval(f, nd->args[0]);
	if (c.kind != V_BOOL)
		return maybe_no_overload(c);
	return eval(f, nd->args[c.b ? 1 : 2]);
}

static NOINLINE value op_eq(frame *f, const node *nd)
{
	value a = eval(f, nd->args[0]);
	if (is_error(a))
		return a;
	value b = eval(f, nd->args[1]);
	if (is_error(b))
		return b;
	return v_bool(v_equal(a, b) == (nd->op == OP_EQ));
}

static NOINLINE value op_index(frame *f, const node *nd)
{
	value obj = eval(f, nd->args[0]);
	if (is_error(obj))
		return obj;
	if (nd->op == OP_SELECT)
		return index_value(obj, nd->cnst);
	value idx = eval(f, nd->args[1]);
	if (is_error(idx))
		return idx;
	return index_value(obj, idx);
}

static NOINLINE value op_list(frame *f, const node *nd)
{
	list *l = arena_alloc(sizeof *l);
	value *out = arena_alloc(nd->nargs * sizeof(value));
	if (l == NULL || (out == NULL && nd->nargs > 0))
		return v_error((str){0});
	for (uint32_t i = 0; i < nd->nargs; i++) {
		value v = eval(f, nd->args[i]);
		if (is_error(v))
			return v;
		out[i] = v;
	}
	l->n = nd->nargs;
	l->v = out;
	return (value){.kind = V_LIST, .l = l};
}

static NOINLINE value op_map(frame *f, const node *nd)
{
	uint32_t pairs = nd->nargs / 2;
	map *m = arena_alloc(sizeof *m);
	value *kv = arena_alloc(2 * pairs * sizeof(value));
	if (m == NULL || (kv == NULL && pairs > 0))
		return v_error((str){0});
	m->k = kv;
	m->v = kv + pairs;
	for (uint32_t i = 0; i < pairs; i++) {
		value k = eval(f, nd->args[2 * i]);
		if (is_error(k))
			return k;
		value v = eval(f, nd->args[2 * i + 1]);
		if (is_error(v))
			return v;
		m->k[i] = k;
		m->v[i] = v;
		m->n = i + 1;
	}
	return (value){.kind = V_MAP, .m = m};
}

static NOINLINE value op_unknown(const node *nd)
{
	fmt_arg a[] = {fa_d(nd->op)};
	return v_error(fmt("unknown operation %d", a, 1));
}

/* eval_node is eval's operation, its step counted. */
static inline value eval_node(frame *f, const node *nd)
{
	switch (nd->op) {
	case OP_CONST:
		return nd->cnst;
	case OP_SLOT:
		return frame_slot(f, nd->slot);
	case OP_AND:
	case OP_OR:
		return logical(f, nd);
	case OP_COND:
		return op_cond(f, nd);
	case OP_EQ:
	case OP_NE:
		return op_eq(f, nd);
	case OP_INDEX:
	case OP_SELECT:
		return op_index(f, nd);
	case OP_LIST:
		return op_list(f, nd);
	case OP_MAP:
		return op_map(f, nd);
	case OP_FOLD:
		return fold(f, nd);
	case OP_CALL:
		return call(f, nd);
	}
	return op_unknown(nd);
}

/* eval evaluates one node as cel-go's interpreter does: arguments left
 * to right, an error argument ends a call, && and || absorb an error when
 * the other side decides. Each node is a step; past the limit the frame
 * is spent. A cost error (the arena spent) spends the frame too. */
static value eval(frame *f, int32_t n)
{
	if (f->spent != NULL)
		return (value){.kind = V_ERROR, .e = f->spent};
	if (++*f->steps > f->limit) {
		f->spent = &spent_error;
		return (value){.kind = V_ERROR, .e = f->spent};
	}
	value v = eval_node(f, &f->p->nodes[n]);
	if (v.kind == V_ERROR && v.e->cost && f->spent == NULL)
		f->spent = v.e;
	return v;
}
