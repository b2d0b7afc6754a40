/*
 * The decision module in C: package plan's evaluator (the Go files of plan/), ported
 * line for line, compiled by clang to a WebAssembly reactor with no
 * runtime to start. It answers the bytes package plan answers, which are
 * the engine's (cel-go's); the Go tests compare the three.
 *
 * Each .c file ports the Go files its header comment names. Names follow
 * the Go ones (readObject -> read_object). Nothing here is thread-safe:
 * an instance is single-threaded (ABI.md).
 *
 * Memory: a plan and what it holds are malloc'd once, at load, and freed
 * never (a released handle's plan is freed whole by plan_free). Everything
 * a call makes (the input's values, evaluation's values, messages) comes
 * from the call arena, which module.c resets at the start of each call:
 * nothing a call allocates outlives it but the answer's bytes in out_buf.
 */
#ifndef DLROUTE_DECISION_H
#define DLROUTE_DECISION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- bytes ------------------------------------------------------------ */

/* str is a byte string that is not NUL-terminated. */
typedef struct str {
	const char *p;
	uint32_t n;
} str;

#define STR(lit) ((str){(lit), (uint32_t)(sizeof(lit) - 1)})
static inline bool str_eq(str a, str b) { return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0); }
static inline bool str_eq_lit(str a, const char *lit) { size_t n = strlen(lit); return a.n == n && memcmp(a.p, lit, n) == 0; }
/* str_cmp orders as Go's string comparison: bytewise. */
int str_cmp(str a, str b);

/* buf is a growable byte buffer in the arena (buf_* in arena.c). */
typedef struct buf {
	char *b;
	uint32_t n, cap;
} buf;
void buf_byte(buf *w, char c);
void buf_bytes(buf *w, const char *p, uint32_t n);
void buf_lit(buf *w, const char *lit);
void buf_str(buf *w, str s);
void buf_int(buf *w, int64_t v);   /* strconv.AppendInt(b, v, 10) */
void buf_uint(buf *w, uint64_t v); /* strconv.AppendUint(b, v, 10) */
str buf_done(buf *w);              /* the bytes written, as a str */

/* ---- the call arena (arena.c) ----------------------------------------- */

/* arena_alloc returns n bytes, 8-aligned, zeroed, valid until
 * arena_reset. Past ARENA_LIMIT bytes in one call it returns NULL; every
 * caller that can see NULL turns it into an error (eval: a cost_limit,
 * as the steps bound the same work) rather than trapping. */
#define ARENA_LIMIT (256u << 20)
void *arena_alloc(size_t n);
void arena_reset(void);
str arena_str(const char *p, uint32_t n); /* a copy in the arena */

/* ---- values (value.c) -------------------------------------------------- */

/* The run-time values: package plan's `any`. V_JNUM and V_JOBJ are what
 * the JSON reader gives before check and cel_value convert them
 * (jsonNumber and object); an input default may be a V_JOBJ too. */
enum vkind {
	V_NULL = 0,
	V_BOOL,
	V_INT,
	V_UINT,
	V_DOUBLE,
	V_STRING,
	V_LIST,
	V_MAP,   /* a CEL map: *Map, its entries in order */
	V_ERROR, /* *evalError: a failed call carried as a value */
	V_JNUM,  /* jsonNumber: a JSON number's text (in .s) */
	V_JOBJ,  /* object: a JSON object, fields sorted by key, each key once */
};

typedef struct value value;
typedef struct list list;
typedef struct map map;
typedef struct jobj jobj;
typedef struct evalerr evalerr;

struct value {
	uint8_t kind; /* enum vkind */
	union {
		bool b;
		int64_t i;
		uint64_t u;
		double d;
		str s; /* V_STRING, V_JNUM */
		list *l;
		map *m;
		jobj *o;
		evalerr *e;
	};
};

struct list {
	uint32_t n;
	value *v;
};
struct map {
	uint32_t n;
	value *k, *v;
};
typedef struct jfield {
	str key;
	value val;
} jfield;
struct jobj {
	uint32_t n;
	jfield *f;
};
struct evalerr {
	str msg;
	bool cost; /* the step budget ran out: cost_limit */
};

static inline value v_null(void) { return (value){.kind = V_NULL}; }
static inline value v_bool(bool b) { return (value){.kind = V_BOOL, .b = b}; }
static inline value v_int(int64_t i) { return (value){.kind = V_INT, .i = i}; }
static inline value v_uint(uint64_t u) { return (value){.kind = V_UINT, .u = u}; }
static inline value v_double(double d) { return (value){.kind = V_DOUBLE, .d = d}; }
static inline value v_string(str s) { return (value){.kind = V_STRING, .s = s}; }

/* value.go */
value v_error(str msg);                 /* errorf's result, message already formatted */
value v_no_overload(void);              /* noOverload: "no such overload" */
value v_no_overload_for(uint8_t func);  /* "no such overload: " + Func.String() */
bool v_is_number(value v);
const char *v_type_name(value v);       /* typeName: "null_type", "int", ... */
bool v_equal(value a, value b);         /* equal: CEL's == */
/* compare_numbers: -1, 0, 1 across int, uint, double; false when either
 * is not a number or a NaN is involved (compareNumbers). */
bool v_compare_numbers(value a, value b, int *c);
bool map_find(const map *m, value k, value *out);
bool jobj_get(const jobj *o, str key, value *out); /* object.get: binary search */

/* ---- errors (errors.c) ------------------------------------------------- */

/* The codes, as the engine spells them (plan.Code). */
#define CODE_JSON "json_syntax"
#define CODE_UNKNOWN_FIELD "unknown_field"
#define CODE_MISSING_FIELD "missing_field"
#define CODE_WRONG_TYPE "wrong_type"
#define CODE_TOO_LONG "too_long"
#define CODE_INVALID_UTF8 "invalid_utf8"
#define CODE_EVAL "eval_error"
#define CODE_COST_LIMIT "cost_limit"
#define CODE_NO_MATCH "no_rule_matched"
#define CODE_BAD_OUTCOME "bad_outcome"
#define CODE_BAD_PLAN "bad_plan"

typedef struct position {
	str file;
	int64_t line, column;
} position;

/* perr is plan.Error: the engine's *Error, field for field. */
typedef struct perr {
	const char *code; /* one of CODE_* */
	str message;
	bool has_pos;
	position pos;
	str source; /* "" when absent */
	str hint;   /* "" when absent */
} perr;

bool code_is_input(const char *code);   /* Code.Input */
perr *perr_new(const char *code, str message);
str perr_text(const perr *e);           /* (*Error).Error(): "file:line:col: message\n | src\n | ..^" */
void write_error_json(buf *w, const perr *e); /* the error object's JSON, json.Marshal's bytes (HTML escaped) */

/* format.c: sprintf for the verbs package plan's messages use: %s of
 * str (pass a str*), %d of int64_t, %q of str* (Go's strconv.Quote),
 * %v of a value* (appendArg's %v). A tiny, explicit variant: each
 * argument is a fmt_arg. */
typedef struct fmt_arg {
	char kind; /* 's' str, 'd' int64, 'v' value */
	str s;
	int64_t i;
	value v;
} fmt_arg;
str fmt(const char *format, const fmt_arg *args, int nargs);
static inline fmt_arg fa_s(str s) { return (fmt_arg){.kind = 's', .s = s}; }
static inline fmt_arg fa_d(int64_t i) { return (fmt_arg){.kind = 'd', .i = i}; }
static inline fmt_arg fa_v(value v) { return (fmt_arg){.kind = 'v', .v = v}; }
/* quote appends strconv.Quote(s); quote_to is its buffered form. */
str quote(str s);
void quote_to(buf *w, str s);
/* append_float writes f as encoding/json does (appendFloat); false and
 * *bad set for an infinity or NaN ("json: unsupported value: +Inf"). */
bool append_float(buf *w, double f, str *bad);
/* format_float_g writes strconv.FormatFloat(f, 'g', -1, 64). */
void format_float_g(buf *w, double f);
/* utf8_decode_rune is utf8.DecodeRuneInString(s[:n]): the rune and its
 * *size, or 0xFFFD and size 1 for a byte that starts no valid UTF-8
 * (and size 1 for n == 0). */
uint32_t utf8_decode_rune(const char *s, uint32_t n, uint32_t *size);

/* ---- the plan (decode.c) ----------------------------------------------- */

enum kind { K_STRING = 1, K_INT, K_UINT, K_DOUBLE, K_BOOL, K_DYN, K_LIST, K_MAP };

typedef struct type type;
struct type {
	uint8_t kind; /* enum kind */
	type *elem;   /* list element, map value */
	bool nullable;
	str text; /* as written, for messages */
};

typedef struct input {
	str name;
	type *type;
	bool required;
	value def; /* when not required: a JSON value (V_NULL, V_BOOL, V_INT, V_UINT, V_DOUBLE, V_STRING, V_LIST, V_JOBJ) */
} input;

typedef struct device_type {
	str name;
	int64_t code;
} device_type;

typedef struct pvalue {
	str name;
	int32_t expr, import; /* one of them >= 0, the other -1 */
	position pos;
} pvalue;

typedef struct rule {
	str id;
	position pos;
	int32_t when;
	str raise; /* "" for a device */
	int32_t message, type, device_id, copy, capsule, flags; /* index exprs; -1 absent */
} rule;

typedef struct expr {
	int32_t root;
	position pos;
	str source;
} expr;

enum op { OP_CONST = 1, OP_SLOT, OP_CALL, OP_AND, OP_OR, OP_COND, OP_EQ, OP_NE, OP_INDEX, OP_SELECT, OP_LIST, OP_MAP, OP_FOLD, OP_END };
enum func {
	F_NOT = 1, F_NOT_STRICTLY_FALSE, F_ADD, F_MULTIPLY, F_LESS, F_LESS_EQUALS, F_GREATER, F_GREATER_EQUALS,
	F_IN, F_SIZE, F_INT, F_STRING, F_DYN, F_CONTAINS, F_STARTS_WITH, F_ENDS_WITH, F_INDEX_OF, F_SPLIT, F_END
};
const char *func_name(uint8_t f); /* Func.String: "_+_", ..., "unknown" */

typedef struct node {
	uint8_t op, func;
	uint32_t nargs;
	int32_t *args;
	value cnst; /* OP_CONST: the value; OP_SELECT: the field name (a V_STRING) */
	int32_t slot, slot2;
	int64_t line, column;
} node;

typedef struct plan plan;
struct plan {
	str ref;
	uint64_t step_limit;
	uint32_t n_inputs, n_device_types, n_values, n_rules, n_exprs, n_nodes, n_imports;
	input *inputs;
	device_type *device_types;
	pvalue *values;
	rule *rules;
	expr *exprs;
	node *nodes;
	plan **imports;
	int32_t locals;
};

#define MAX_DEPTH 64 /* plan.MaxDepth: check decode.go for the value */
/* plan.MaxExprDepth: how deeply an expression tree may nest (its
 * text too, for the message). */
#define MAX_EXPR_DEPTH 1000
#define MAX_EXPR_DEPTH_TEXT "1000"

/* plan_decode reads one plan's bytes (plan.Decode); NULL and *err (a
 * bad_plan perr, in the arena) for bytes that are not a plan. The plan is
 * malloc'd and owns copies of every string it needs. */
plan *plan_decode(const uint8_t *data, uint32_t n, perr **err);
void plan_free(plan *p);
/* set_find finds version ref in a set of plans (plan.DecodeSet): 1 with
 * the plan's bytes in *data,*n; 0 when the set lacks it (then *hint is
 * the list of versions it has, the no_ruleset hint); -1 and *err for
 * bytes that are not a set. */
int set_find(const uint8_t *set, uint32_t set_n, str ref, const uint8_t **data, uint32_t *n, str *hint, perr **err);

/* ---- input (jsonline.c, input.c) -------------------------------------- */

#define MAX_STRING_LEN 4096
#define MAX_LIST_LEN 64
#define MAX_LINE_LEN (4u << 20) /* every host's line limit */

/* read_object: readObject without its plan arguments (they were Go's
 * allocation savings): the whole of data as one JSON object. Its strings
 * and numbers without escapes point into data, which must outlive them
 * (the call's input buffer does). */
bool read_object(const uint8_t *data, uint32_t n, jobj **out, perr **err);
/* decode_input: decodeInput, the UTF-8 check, read_object and check. */
bool decode_input(const plan *p, const uint8_t *data, uint32_t n, jobj **out, perr **err);
/* decode_input leaves in *out the object it read even when check refuses
 * it (NULL when it read none): module.c asks the host for a
 * platform_version the object leaves out and checks it again. */
/* check_input: check (Plan.check) of an object decode_input read, after
 * the caller changed it. */
perr *check_input(const plan *p, const jobj *in);
/* utf8_invalid_in: where s stops being valid UTF-8, or s.n. */
uint32_t utf8_invalid_in(str s);
/* numbers_as_floats rewrites every number of o, at any depth, as
 * json.Marshal writes the float64 json.Unmarshal makes of it (the
 * compiler module's guest decodes a line again that way once the host
 * has answered); false for a number beyond float64, which Unmarshal
 * refuses. */
bool numbers_as_floats(jobj *o);
/* cel_value: Type.celValue of a value check accepted. */
value cel_value(const type *t, value v);
/* parse_int: parseInt (atof.go), strconv.ParseInt(s, 10, 64): an
 * optional sign and decimal digits, nothing else, within int64 (input.c;
 * funcs.c's int(string) uses it too). */
bool parse_int(str s, int64_t *out);
/* go_type_name: goTypeName, a value's kind in messages ("an int", "a
 * list", ...): input.c, for jsonline.c's "input is ...; want a JSON
 * object". */
const char *go_type_name(value v);

/* ---- evaluation (eval.c, funcs.c) ------------------------------------- */

typedef struct decision {
	str device_type;
	int64_t device_type_code, device_id;
	bool copy;
	str capsule;
	uint64_t flags;
	str error_type, error_message; /* error_type "" for a device */
	str rule, ruleset;
} decision;

typedef struct tracer tracer;

typedef struct frame {
	const plan *p;
	const jobj *in;
	value *slots;
	bool *done;
	uint64_t *steps; /* shared with the imports' evaluations */
	uint64_t count;
	uint64_t limit;
	perr *fatal;
	evalerr *spent;
	tracer *trace; /* NULL unless explaining */
} frame;

/* frame_new: newFrame (steps NULL: the frame's own count); NULL when the
 * arena is spent, which frame_decide(NULL) answers with cost_limit. */
frame *frame_new(const plan *p, const jobj *in, uint64_t *steps, uint64_t limit, tracer *trace);
bool frame_decide(frame *f, decision *d, perr **err);
value frame_slot(frame *f, int32_t s);
value func_call(frame *f, const node *n, value *args); /* funcs.go */

/* answer.c: Decision.AppendJSON, the engine's ResolveJSON bytes. */
void write_decision_json(buf *w, const decision *d);
/* quote_json: appendQuoted: a JSON string, HTML escaped when html. */
void quote_json(buf *w, str s, bool html);

/* ---- explain (explain.c) ---------------------------------------------- */

#define EXPLAIN_STEP_FACTOR 4 /* plan.ExplainStepFactor: check explain.go */

/* tracer hooks eval.c calls when f->trace is set. */
void trace_rule(tracer *t, const rule *r, bool matched, const perr *err);
void trace_value(tracer *t, int32_t i, value v, const perr *err);
/* trace_import: the explanation of an import's decision, for value i
 * (importDecision's explaining branch): returns its decision and error. */
bool trace_import(frame *f, int32_t i, const plan *imp, decision *d, perr **err);

/* explain_json: Plan.AppendExplain's bytes for a checked input. false and
 * *err where the plan could not decide or a value cannot be written. */
bool explain_json(const plan *p, const jobj *in, buf *w, perr **err);

#endif
