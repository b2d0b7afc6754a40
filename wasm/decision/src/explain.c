/*
 * explain.c ports plan/explain.go: the tracer eval.c calls while
 * explaining (trace_rule, trace_value, trace_import), the explanation
 * (explain: the two frames), and its JSON, byte for byte what
 * engine.RuleSet.ExplainJSON returns (explain_json).
 */
#include "decision.h"

/* SPENT_MESSAGE is cel-go's message for an evaluation stopped at its
 * cost limit: an explanation the arena cannot hold fails with it, as
 * evaluation does (value.c), since the steps bound the same work. */
#define SPENT_MESSAGE "operation cancelled: actual cost limit exceeded"

/* rule_step is ruleStep: a rule tried, and whether it matched. */
typedef struct rule_step {
	const rule *rule;
	bool matched;
	str err; /* its condition failed to evaluate */
} rule_step;

typedef struct explanation explanation;

/* value_step is valueStep: a named value's first evaluation. */
typedef struct value_step {
	bool traced, failed;
	value val; /* when not failed */
	str err;   /* the failure's message */
	bool used; /* the decision read it */
	explanation *imp;
} value_step;

/* explanation is what engine.Explanation holds: the decision (zero
 * where it failed) and its trace. */
struct explanation {
	const plan *p;
	decision decision;
	rule_step *rules;
	uint32_t n_rules;
	value_step *values; /* by value index */
};

/* tracer records an evaluation for an explanation, as the engine's
 * does. */
struct tracer {
	rule_step *rules;
	uint32_t n_rules, cap_rules;
	value_step *values;
	bool spent; /* the arena could not hold a step */
};

/* trace_rule ports tracer.rule: rule r was tried; err where its
 * condition failed. */
void trace_rule(tracer *t, const rule *r, bool matched, const perr *err)
{
	if (t->n_rules == t->cap_rules) {
		uint32_t cap = t->cap_rules ? 2 * t->cap_rules : 8;
		rule_step *rules = arena_alloc((size_t)cap * sizeof *rules);
		if (rules == NULL) {
			t->spent = true;
			return;
		}
		if (t->n_rules > 0)
			memcpy(rules, t->rules, t->n_rules * sizeof *rules);
		t->rules = rules;
		t->cap_rules = cap;
	}
	rule_step *step = &t->rules[t->n_rules++];
	step->rule = r;
	step->matched = matched && err == NULL;
	if (err != NULL)
		step->err = err->message;
}

/* trace_value ports tracer.value: it records the first evaluation of
 * value i, v or the failure err. */
void trace_value(tracer *t, int32_t i, value v, const perr *err)
{
	value_step *step = &t->values[i];
	if (step->traced)
		return;
	step->traced = true;
	if (err != NULL) {
		step->failed = true;
		step->err = err->message;
	} else {
		step->val = v;
	}
}

static perr *explain(const plan *p, const jobj *in, uint64_t *steps, uint64_t limit, explanation **out);

/* trace_import is importDecision's explaining branch: it explains the
 * import's decision, keeps the explanation with value i, and gives the
 * decision (zero where it failed) and the failure. */
bool trace_import(frame *f, int32_t i, const plan *imp, decision *d, perr **err)
{
	explanation *x = NULL;
	*err = explain(imp, f->in, f->steps, f->limit, &x);
	*d = x != NULL ? x->decision : (decision){0};
	f->trace->values[i].imp = x;
	return *err == NULL;
}

static perr *spent(void) { return perr_new(CODE_COST_LIMIT, STR(SPENT_MESSAGE)); }

/* explain decides a checked input as the engine's RuleSet.Explain does:
 * the rules in order, recording each rule tried and each value computed;
 * then, in a second frame that starts from the values computed, every
 * value the decision did not read. The trace is whole even when the
 * decision fails. *out is NULL only where the arena could not hold it. */
static perr *explain(const plan *p, const jobj *in, uint64_t *steps, uint64_t limit, explanation **out)
{
	*out = NULL;
	tracer *t = arena_alloc(sizeof *t);
	explanation *x = arena_alloc(sizeof *x);
	/* values: one more than the plan's, so that a plan of none gets
	 * memory too */
	if (t == NULL || x == NULL || (t->values = arena_alloc(((size_t)p->n_values + 1) * sizeof *t->values)) == NULL)
		return spent();
	frame *first = frame_new(p, in, steps, limit, t);
	if (first == NULL)
		return spent();
	decision d;
	perr *err = NULL;
	bool ok = frame_decide(first, &d, &err);
	if (t->spent)
		return spent();
	x->p = p;
	x->rules = t->rules;
	x->n_rules = t->n_rules;
	x->values = t->values;
	if (ok)
		x->decision = d;
	*out = x;
	for (uint32_t i = 0; i < p->n_values; i++)
		t->values[i].used = t->values[i].traced;
	frame *rest = frame_new(p, in, steps, limit, t);
	if (rest == NULL)
		return spent();
	for (uint32_t i = 0; i < p->n_values; i++) {
		if (first->done[i]) {
			uint32_t s = p->n_inputs + i;
			rest->slots[s] = first->slots[s];
			rest->done[i] = true;
		}
	}
	for (uint32_t i = 0; i < p->n_values; i++) {
		if (!t->values[i].traced) {
			rest->fatal = NULL;
			frame_slot(rest, (int32_t)(p->n_inputs + i));
		}
	}
	return ok ? NULL : err;
}

/* ---- the JSON ---------------------------------------------------------- */

/* jwriter is jsonWriter: the bytes, and bad, encoding/json's message
 * for a value it cannot write, which fails the whole explanation. */
typedef struct jwriter {
	buf *w;
	str bad;
	bool spent; /* the arena could not hold a map's sorted entries */
} jwriter;

static void write_bool(buf *w, bool v) { buf_lit(w, v ? "true" : "false"); }

/* write_position ports jsonWriter.position. */
static void write_position(buf *w, const position *p)
{
	buf_lit(w, ",\"position\":{\"file\":");
	quote_json(w, p->file, false);
	buf_lit(w, ",\"line\":");
	buf_int(w, p->line);
	buf_lit(w, ",\"column\":");
	buf_int(w, p->column);
	buf_byte(w, '}');
}

/* keyed is a map's entry as the engine's nativeValue holds it: a Go map
 * of its keys as fmt.Sprint writes them. */
typedef struct keyed {
	str key;
	value val;
} keyed;

static void write_value(jwriter *jw, value v, bool sprint);

/* sorted_entries ports sortedEntries: m's entries by key as
 * encoding/json and fmt order a Go map's, the last of keys written
 * alike kept, as a Go map keeps it. An insertion sort: maps are a rule
 * set's tables and inputs, small. NULL where the arena is spent. */
static keyed *sorted_entries(const map *m, uint32_t *n)
{
	keyed *out = arena_alloc((size_t)m->n * sizeof *out);
	*n = 0;
	if (out == NULL && m->n > 0)
		return NULL;
	for (uint32_t i = 0; i < m->n; i++) {
		buf kb = {0};
		jwriter kw = {&kb, {0}, false};
		write_value(&kw, m->k[i], true);
		str key = buf_done(&kb);
		uint32_t j = 0;
		while (j < *n && str_cmp(out[j].key, key) < 0)
			j++;
		if (j < *n && str_eq(out[j].key, key)) {
			out[j].val = m->v[i];
			continue;
		}
		memmove(out + j + 1, out + j, (*n - j) * sizeof *out);
		out[j] = (keyed){key, m->v[i]};
		(*n)++;
	}
	return out;
}

/* write_scalar writes a value that holds no other value, as
 * write_value does. */
static void write_scalar(jwriter *jw, value v, bool sprint)
{
	buf *w = jw->w;
	switch (v.kind) {
	case V_NULL:
		buf_lit(w, sprint ? "<nil>" : "null");
		return;
	case V_BOOL:
		write_bool(w, v.b);
		return;
	case V_DOUBLE:
		if (sprint) {
			format_float_g(w, v.d);
		} else {
			str bad;
			/* The first value encoding/json cannot write fails it. */
			if (!append_float(w, v.d, &bad) && jw->bad.n == 0)
				jw->bad = bad;
		}
		return;
	case V_STRING:
		if (sprint)
			buf_str(w, v.s);
		else
			quote_json(w, v.s, false);
		return;
	}
	/* int64, uint64: formatValue's */
	fmt_arg a = fa_v(v);
	buf_str(w, fmt("%v", &a, 1));
}

/* wframe is a list or map write_value has opened: its elements (a
 * map's sorted entries), how many, and the next to write. */
typedef struct wframe {
	value v;
	keyed *e;
	uint32_t n, i;
} wframe;

/* write_value ports jsonWriter.value: v as encoding/json writes the
 * engine's nativeValue of it, or, with sprint, as fmt.Sprint does (a
 * map's keys): a list as [a b], a map as map[k:v]. Go recurses per
 * level; here the open lists and maps are a stack in the arena, because
 * an input may nest as deep as encoding/json reads (10,000 levels) and
 * the module's stack is fixed (wasm/decision/RATIONALE.md, "Why does the
 * C port's input reader walk nesting with explicit stacks?"). Where the
 * arena cannot hold the stack, jw->spent is set and the writing stops. */
static void write_value(jwriter *jw, value v, bool sprint)
{
	buf *w = jw->w;
	char sep = sprint ? ' ' : ',';
	wframe *stack = NULL;
	uint32_t depth = 0, cap = 0;
	for (;;) {
		if (v.kind == V_LIST || v.kind == V_MAP) {
			if (depth == cap) {
				uint32_t grown = cap ? 2 * cap : 16;
				wframe *more = arena_alloc((size_t)grown * sizeof *more);
				if (more == NULL) {
					jw->spent = true;
					return;
				}
				if (depth > 0)
					memcpy(more, stack, (size_t)depth * sizeof *more);
				stack = more;
				cap = grown;
			}
			wframe *f = &stack[depth++];
			*f = (wframe){.v = v};
			if (v.kind == V_LIST) {
				buf_byte(w, '[');
				f->n = v.l->n;
			} else {
				buf_lit(w, sprint ? "map[" : "{");
				f->e = sorted_entries(v.m, &f->n);
				if (f->e == NULL && v.m->n > 0)
					jw->spent = true;
			}
		} else {
			write_scalar(jw, v, sprint);
		}
		/* The next value to write: the next element of the innermost
		 * open list or map, closing those that are done. */
		for (;;) {
			if (depth == 0)
				return;
			wframe *f = &stack[depth - 1];
			if (f->i < f->n) {
				if (f->i > 0)
					buf_byte(w, sep);
				if (f->v.kind == V_LIST) {
					v = f->v.l->v[f->i];
				} else {
					if (sprint)
						buf_str(w, f->e[f->i].key);
					else
						quote_json(w, f->e[f->i].key, false);
					buf_byte(w, ':');
					v = f->e[f->i].val;
				}
				f->i++;
				break;
			}
			if (f->v.kind == V_LIST)
				buf_byte(w, ']');
			else
				buf_byte(w, sprint ? ']' : '}');
			depth--;
		}
	}
}

/* write_explanation ports jsonWriter.explanation: x as
 * engine.Explanation.MarshalJSON writes it, without HTML escaping. */
static void write_explanation(jwriter *jw, const explanation *x)
{
	buf *w = jw->w;
	buf_lit(w, "{\"decision\":");
	write_decision_json(w, &x->decision);
	buf_lit(w, ",\"trace\":{\"rules\":");
	if (x->n_rules == 0)
		buf_lit(w, "null"); /* the engine's nil slice */
	for (uint32_t i = 0; i < x->n_rules; i++) {
		const rule_step *r = &x->rules[i];
		buf_lit(w, i == 0 ? "[{\"rule\":" : ",{\"rule\":");
		quote_json(w, r->rule->id, false);
		buf_lit(w, ",\"matched\":");
		write_bool(w, r->matched);
		if (r->err.n != 0) {
			buf_lit(w, ",\"error\":");
			quote_json(w, r->err, false);
		}
		write_position(w, &r->rule->pos);
		buf_byte(w, '}');
	}
	if (x->n_rules > 0)
		buf_byte(w, ']');
	buf_lit(w, ",\"values\":[");
	for (uint32_t i = 0; i < x->p->n_values; i++) {
		const value_step *v = &x->values[i];
		if (i > 0)
			buf_byte(w, ',');
		if (!v->traced) { /* never: every value is computed; the engine's zero step */
			buf_lit(w, "{\"name\":\"\",\"value\":null,\"used\":false}");
			continue;
		}
		const pvalue *decl = &x->p->values[i];
		buf_lit(w, "{\"name\":");
		quote_json(w, decl->name, false);
		buf_lit(w, ",\"value\":");
		write_value(jw, v->val, false);
		if (v->err.n != 0) {
			buf_lit(w, ",\"error\":");
			quote_json(w, v->err, false);
		}
		buf_lit(w, ",\"used\":");
		write_bool(w, v->used);
		write_position(w, &decl->pos);
		if (v->imp != NULL) {
			buf_lit(w, ",\"import\":");
			write_explanation(jw, v->imp);
			if (jw->bad.n != 0) {
				buf b = {0};
				buf_lit(&b, "json: error calling MarshalJSON for type *engine.Explanation: ");
				buf_str(&b, jw->bad);
				jw->bad = buf_done(&b);
			}
		}
		if (jw->bad.n != 0)
			return;
		buf_byte(w, '}');
	}
	buf_lit(w, "]}}");
}

/* explain_json ports Plan.AppendExplain after decodeInput: it explains
 * the checked input in under EXPLAIN_STEP_FACTOR times the plan's step
 * limit and appends the explanation's JSON to w. On an error (Decide's,
 * or eval_error for a value JSON cannot write: an infinite or NaN
 * double, with the engine's message) w is as it was. */
bool explain_json(const plan *p, const jobj *in, buf *w, perr **err)
{
	uint64_t limit = p->step_limit * EXPLAIN_STEP_FACTOR;
	if (limit / EXPLAIN_STEP_FACTOR != p->step_limit)
		limit = UINT64_MAX;
	uint64_t steps = 0;
	explanation *x;
	if ((*err = explain(p, in, &steps, limit, &x)) != NULL)
		return false;
	uint32_t start = w->n;
	jwriter jw = {w, {0}, false};
	write_explanation(&jw, x);
	if (jw.spent) {
		w->n = start;
		*err = spent();
		return false;
	}
	if (jw.bad.n != 0) {
		/* The engine's encoding/json fails on the value; so does this. */
		w->n = start;
		*err = perr_new(CODE_EVAL, jw.bad);
		return false;
	}
	return true;
}
