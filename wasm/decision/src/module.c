/*
 * The module's exports, ported from its Go build (since removed), and its
 * imports, the compiler module's host functions (wasm/main.go and
 * wasm/internal/guest ported). ABI.md beside the sources documents every
 * export, import and status (ABI version 3). This file and arena.c own
 * the module's only mutable state: the handles' plans and the host's
 * buffers.
 *
 * clang's reactor start (-mexec-model=reactor) gives the _initialize
 * export; nothing here needs starting, so it only runs libc's
 * constructors. Built natively (no __wasm__), the exports are plain
 * functions, for tests.
 */
#include <stdlib.h>

#include "decision.h"

#ifdef __wasm__
#define EXPORT(name) __attribute__((export_name(name)))
#else
#define EXPORT(name)
#endif

/* ABI_VERSION is this module's ABI version. Version 1 is the compiler
 * module's (wasm/ABI.md): a host of that one refuses this one. Version 2
 * imported nothing. */
#define ABI_VERSION 3

/* The statuses, the compiler module's numbers (internal/contract.Status). */
enum {
	STATUS_OK = 0,
	STATUS_INPUT_ERROR = 1,
	STATUS_EVAL_ERROR = 2,
	STATUS_LOAD_ERROR = 3,
	STATUS_NO_RULESET = 4,
	STATUS_BAD_HANDLE = 5,
	STATUS_TOO_SMALL = 7,
	STATUS_HOST_ERROR = 9,
};

/* The host statuses of the imports (internal/contract.HostOK, ...). */
enum {
	HOST_OK = 0,
	HOST_TOO_SMALL = 1,
	HOST_UNAVAILABLE = 2,
	HOST_FAULT = 3,
	HOST_FAILED = 4,
};

/* The imports, from the compiler module's host module (wasm/ABI.md,
 * "Imports"). Built natively, they are a host that reads no machine and
 * copies nothing. */
#ifdef __wasm__
#define IMPORT(name) __attribute__((import_module("dlroute_host"), import_name(name)))
IMPORT("platform_version")
uint32_t host_platform_version(int32_t device, uint8_t *buf, uint32_t buf_cap, uint32_t *len_out);
IMPORT("copy_to_host") uint32_t host_copy_to_host(uint32_t buffer, uint32_t *handle_out);
#else
static uint32_t host_platform_version(int32_t device, uint8_t *buf, uint32_t buf_cap, uint32_t *len_out) {
	(void)device, (void)buf, (void)buf_cap, (void)len_out;
	return HOST_UNAVAILABLE;
}
static uint32_t host_copy_to_host(uint32_t buffer, uint32_t *handle_out) {
	(void)buffer, (void)handle_out;
	return HOST_UNAVAILABLE;
}
#endif

/* plans are the handles' plans: handle h is plans[h-1], NULL once
 * released. Handles are never reused. */
static plan **plans;
static uint32_t n_plans, cap_plans;

/* pinned are the buffers dlroute_alloc gave: dlroute_free frees only
 * those, as the Go build ignored a pointer it did not give. A host
 * holds a few (an input and an output buffer), so a list searched in
 * order serves. */
static void **pinned;
static uint32_t n_pinned, cap_pinned;

/* grow makes room for one more element in *arr (of *cap, size each). */
static bool grow(void *arr, uint32_t n, uint32_t *cap, size_t size) {
	if (n < *cap) {
		return true;
	}
	uint32_t c = *cap == 0 ? 8 : *cap * 2;
	if (c <= *cap) {
		return false;
	}
	void *p = realloc(*(void **)arr, (size_t)c * size);
	if (p == NULL) {
		return false;
	}
	*(void **)arr = p;
	*cap = c;
	return true;
}

static uint64_t pack(uint32_t status, uint32_t v) { return (uint64_t)status << 32 | v; }

/* put copies data to the host's output buffer and packs the status with
 * its length, or says how large the buffer must be (write). */
static uint64_t put(uint8_t *out, uint32_t out_cap, str data, uint32_t status) {
	if (data.n > out_cap) {
		return pack(STATUS_TOO_SMALL, data.n);
	}
	if (data.n > 0) {
		memcpy(out, data.p, data.n);
	}
	return pack(status, data.n);
}

static uint64_t put_error(uint8_t *out, uint32_t out_cap, const perr *e, uint32_t status) {
	buf w = {0};
	write_error_json(&w, e);
	return put(out, out_cap, buf_done(&w), status);
}

/* put_error_list: a load_error's output, a JSON array of error objects
 * (errorList). */
static uint64_t put_error_list(uint8_t *out, uint32_t out_cap, const perr *e) {
	buf w = {0};
	buf_byte(&w, '[');
	write_error_json(&w, e);
	buf_byte(&w, ']');
	return put(out, out_cap, buf_done(&w), STATUS_LOAD_ERROR);
}

static plan *handle(uint32_t h) {
	if (h == 0 || h > n_plans) {
		return NULL;
	}
	return plans[h - 1];
}

EXPORT("dlroute_abi_version") uint32_t dlroute_abi_version(void) { return ABI_VERSION; }

EXPORT("dlroute_alloc") void *dlroute_alloc(uint32_t size) {
	if (size == 0) {
		size = 1;
	}
	if (!grow(&pinned, n_pinned, &cap_pinned, sizeof *pinned)) {
		return NULL;
	}
	void *p = malloc(size);
	if (p != NULL) {
		pinned[n_pinned++] = p;
	}
	return p;
}

EXPORT("dlroute_free") void dlroute_free(void *p) {
	for (uint32_t i = 0; i < n_pinned; i++) {
		if (pinned[i] == p) {
			pinned[i] = pinned[--n_pinned];
			free(p);
			return;
		}
	}
}

/* load_plan: loadPlan, the plan of data under a new handle. */
static uint64_t load_plan(const uint8_t *data, uint32_t n, uint8_t *out, uint32_t out_cap) {
	perr *err = NULL;
	plan *p = plan_decode(data, n, &err);
	if (p == NULL) {
		return put_error_list(out, out_cap, err);
	}
	if (n_plans == UINT32_MAX || !grow(&plans, n_plans, &cap_plans, sizeof *plans)) {
		/* No handle left to give: out of memory, as in the Go build. */
		__builtin_trap();
	}
	plans[n_plans++] = p;
	return pack(STATUS_OK, n_plans);
}

EXPORT("dlroute_load_plan")
uint64_t dlroute_load_plan(const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap) {
	arena_reset();
	/* plan_decode keeps no reference to its input's bytes, which the
	 * host may reuse. */
	return load_plan(in, in_len, out, out_cap);
}

/* quote_ref quotes a reference for a message, as %q would for the
 * printable ASCII a reference holds, escaping anything else byte by byte
 * (the Go build's quote). */
static void quote_ref(buf *w, str s) {
	static const char hex[] = "0123456789abcdef";
	buf_byte(w, '"');
	for (uint32_t i = 0; i < s.n; i++) {
		unsigned char c = (unsigned char)s.p[i];
		if (c == '"' || c == '\\') {
			buf_byte(w, '\\');
			buf_byte(w, (char)c);
		} else if (c < 0x20 || c >= 0x7f) {
			char esc[4] = {'\\', 'x', hex[c >> 4], hex[c & 0xf]};
			buf_bytes(w, esc, 4);
		} else {
			buf_byte(w, (char)c);
		}
	}
	buf_byte(w, '"');
}

EXPORT("dlroute_load_set")
uint64_t dlroute_load_set(const uint8_t *set, uint32_t set_len, const uint8_t *ref, uint32_t ref_len, uint8_t *out,
                          uint32_t out_cap) {
	arena_reset();
	str name = {(const char *)ref, ref_len};
	const uint8_t *data = NULL;
	uint32_t n = 0;
	str hint = {0};
	perr *err = NULL;
	switch (set_find(set, set_len, name, &data, &n, &hint, &err)) {
	case 1:
		return load_plan(data, n, out, out_cap);
	case 0: {
		buf w = {0};
		buf_lit(&w, "no plan of ");
		quote_ref(&w, name);
		buf_lit(&w, " in the set");
		perr *e = perr_new("no_ruleset", buf_done(&w));
		e->hint = hint;
		return put_error(out, out_cap, e, STATUS_NO_RULESET);
	}
	}
	return put_error_list(out, out_cap, err);
}

/* ---- asking the host (wasm/main.go's askHost, guest's askFor) ----------- */

#define PLATFORM_VERSION STR("platform_version")

enum { ASK_NO_ANSWER, ASK_OK, ASK_FAILED };

/* ask_host is askHost: platform_version for device, retried once with a
 * buffer of the length the host asked for (status 1). ASK_NO_ANSWER is a
 * host that reads no machine (status 2); ASK_FAILED sets *why. */
static int ask_host(int64_t device, str *version, str *why) {
	uint32_t cap = 256;
	uint8_t *b = arena_alloc(cap);
	for (int i = 0; i < 2; i++) {
		if (b == NULL || cap == 0) {
			__builtin_trap(); /* the Go build's make or &buf[0] */
		}
		uint32_t n = 0;
		uint32_t s = host_platform_version((int32_t)device, b, cap, &n);
		switch (s) {
		case HOST_OK:
			if (n > cap) {
				__builtin_trap(); /* the Go build's buf[:n] */
			}
			*version = (str){(const char *)b, n};
			return ASK_OK;
		case HOST_TOO_SMALL:
			cap = n;
			b = arena_alloc(n);
			continue;
		case HOST_UNAVAILABLE:
			return ASK_NO_ANSWER;
		case HOST_FAILED:
			*why = STR("the host could not read it");
			return ASK_FAILED;
		default: {
			fmt_arg a[] = {fa_d(s)};
			*why = fmt("platform_version returned status %d", a, 1);
			return ASK_FAILED;
		}
		}
	}
	*why = STR("platform_version kept growing");
	return ASK_FAILED;
}

/* device_of is askFor's device: the object's local_hardware_id, else 0.
 * from_line: the object as json.Unmarshal reads the line (a number is a
 * float64, truncated); else as the engine decoded it (a json.Number, 0
 * unless it is an int64). */
static int64_t device_of(const jobj *o, bool from_line) {
	value v;
	if (!jobj_get(o, STR("local_hardware_id"), &v)) {
		return 0;
	}
	if (v.kind == V_INT) { /* the reader's small ints */
		return v.i;
	}
	if (v.kind != V_JNUM) {
		return 0;
	}
	if (!from_line) {
		int64_t n;
		return parse_int(v.s, &n) ? n : 0;
	}
	char z[64];
	if (v.s.n >= sizeof z) {
		return 0; /* numbers_as_floats made it short; never longer */
	}
	memcpy(z, v.s.p, v.s.n);
	z[v.s.n] = 0;
	double d = strtod(z, NULL);
	/* Go's float-to-int conversion saturates on wasm. */
	if (d >= 9223372036854775807.0) {
		return INT64_MAX;
	}
	if (d <= -9223372036854775808.0) {
		return INT64_MIN;
	}
	return (int64_t)d;
}

/* ask_for is askFor: the host's platform_version for the object's
 * device; ASK_FAILED sets *err to the host_error's object. */
static int ask_for(const jobj *o, bool from_line, str *version, perr **err) {
	int64_t device = device_of(o, from_line);
	str why = {0};
	int r = ask_host(device, version, &why);
	if (r == ASK_FAILED) {
		fmt_arg a[] = {fa_d(device), fa_s(why)};
		*err = perr_new(CODE_MISSING_FIELD, fmt("input platform_version is missing and the host could not read device %d: %s", a, 2));
	}
	return r;
}

/* with_version is o with a platform_version field, kept in key order. */
static jobj *with_version(const jobj *o, str version) {
	jobj *w = arena_alloc(sizeof *w);
	jfield *f = arena_alloc(((size_t)o->n + 1) * sizeof *f);
	if (w == NULL || f == NULL) {
		__builtin_trap();
	}
	uint32_t i = 0;
	for (; i < o->n && str_cmp(o->f[i].key, PLATFORM_VERSION) < 0; i++) {
		f[i] = o->f[i];
	}
	f[i] = (jfield){PLATFORM_VERSION, v_string(version)};
	for (; i < o->n; i++) {
		f[i + 1] = o->f[i];
	}
	*w = (jobj){o->n + 1, f};
	return w;
}

/* valid_utf8 is version as json.Marshal writes it: each byte that starts
 * no valid UTF-8 becomes U+FFFD. */
static str valid_utf8(str s) {
	if (utf8_invalid_in(s) == s.n) {
		return s;
	}
	buf w = {0};
	for (uint32_t i = 0; i < s.n;) {
		uint32_t size;
		uint32_t r = utf8_decode_rune(s.p + i, s.n - i, &size);
		if (r == 0xFFFD && size == 1) {
			buf_lit(&w, "\xEF\xBF\xBD");
		} else {
			buf_bytes(&w, s.p + i, size);
		}
		i += size;
	}
	return buf_done(&w);
}

static bool declares_version(const plan *p) {
	for (uint32_t i = 0; i < p->n_inputs; i++) {
		if (str_eq(p->inputs[i].name, PLATFORM_VERSION)) {
			return true;
		}
	}
	return false;
}

static uint32_t status_of(const perr *e) { return code_is_input(e->code) ? STATUS_INPUT_ERROR : STATUS_EVAL_ERROR; }

/* read_line is the compiler module guest's decodeLine and, for a
 * decision (not explain), decide's asking: the checked object of a line.
 * A plan that declares platform_version and a line that leaves it out
 * ask the host for it: when the check misses a required field, before
 * checking again (decodeAsking); for a decision, when it is optional,
 * before deciding. A host that reads no machine leaves the line as it
 * is; one that fails is host_error. false sets *err and *status. */
static bool read_line(const plan *p, const uint8_t *in, uint32_t in_len, bool explain, jobj **obj, perr **err,
                      uint32_t *status) {
	value v;
	str version = {0};
	*status = STATUS_INPUT_ERROR;
	if (in_len > MAX_LINE_LEN) {
		*err = perr_new(CODE_TOO_LONG, STR("line is longer than 4194304 bytes"));
		return false;
	}
	jobj *o = NULL;
	if (decode_input(p, in, in_len, &o, err)) {
		*obj = o;
		if (explain || !declares_version(p) || jobj_get(o, PLATFORM_VERSION, &v)) {
			return true;
		}
		switch (ask_for(o, false, &version, err)) {
		case ASK_NO_ANSWER:
			return true;
		case ASK_FAILED:
			*status = STATUS_HOST_ERROR;
			return false;
		}
		/* RuleSet.Resolve checks the input again, and its strings' UTF-8. */
		*obj = with_version(o, version);
		if ((*err = check_input(p, *obj)) != NULL) {
			*status = status_of(*err);
			return false;
		}
		uint32_t bad = utf8_invalid_in(version);
		if (bad != version.n) {
			fmt_arg a[] = {fa_d(bad)};
			*err = perr_new(CODE_INVALID_UTF8, fmt("input platform_version is not valid UTF-8 (at byte %d)", a, 1));
			return false;
		}
		return true;
	}
	*status = status_of(*err);
	if (o == NULL || strcmp((*err)->code, CODE_MISSING_FIELD) != 0 || jobj_get(o, PLATFORM_VERSION, &v) ||
	    !declares_version(p) || !numbers_as_floats(o)) {
		return false;
	}
	/* decodeAsking: the line as json.Unmarshal reads it, with the host's
	 * version, as json.Marshal writes it, decoded again. */
	perr *missing = *err;
	switch (ask_for(o, true, &version, err)) {
	case ASK_NO_ANSWER:
		*err = missing;
		return false;
	case ASK_FAILED:
		*status = STATUS_HOST_ERROR;
		return false;
	}
	*obj = with_version(o, valid_utf8(version));
	if ((*err = check_input(p, *obj)) != NULL) {
		*status = status_of(*err);
		return false;
	}
	return true;
}

/* decide decides a checked object; false sets *err and *status. */
static bool decide(const plan *p, const jobj *obj, decision *d, perr **err, uint32_t *status) {
	frame *f = frame_new(p, obj, NULL, p->step_limit, NULL);
	if (f == NULL) {
		*err = perr_new(CODE_COST_LIMIT, STR("operation cancelled: actual cost limit exceeded"));
	} else if (frame_decide(f, d, err)) {
		return true;
	}
	*status = status_of(*err);
	return false;
}

/* answer_line: answerLine, one line answered with the plan of handle h:
 * the decision's JSON, or the explanation's, or the error object with
 * the status it calls for. */
static uint64_t answer_line(uint32_t h, const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap, bool explain) {
	arena_reset();
	const plan *p = handle(h);
	if (p == NULL) {
		return pack(STATUS_BAD_HANDLE, 0);
	}
	perr *err = NULL;
	uint32_t status;
	jobj *obj = NULL;
	buf w = {0};
	if (!read_line(p, in, in_len, explain, &obj, &err, &status)) {
		return put_error(out, out_cap, err, status);
	}
	if (explain) {
		/* explain_json bounds its steps at EXPLAIN_STEP_FACTOR times the
		 * plan's limit, as AppendExplain does. */
		if (!explain_json(p, obj, &w, &err)) {
			return put_error(out, out_cap, err, status_of(err));
		}
	} else {
		decision d = {0};
		if (!decide(p, obj, &d, &err, &status)) {
			return put_error(out, out_cap, err, status);
		}
		write_decision_json(&w, &d);
	}
	return put(out, out_cap, buf_done(&w), STATUS_OK);
}

EXPORT("dlroute_decide")
uint64_t dlroute_decide(uint32_t h, const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap) {
	return answer_line(h, in, in_len, out, out_cap, false);
}

EXPORT("dlroute_explain")
uint64_t dlroute_explain(uint32_t h, const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap) {
	return answer_line(h, in, in_len, out, out_cap, true);
}

/* ---- an exchange (the guest's Exchange) -------------------------------- */

/* copy_status_error is copyStatusError: the error of a copy_to_host
 * status other than ok. */
static perr *copy_status_error(uint32_t status) {
	if (status == HOST_UNAVAILABLE) {
		perr *e = perr_new("no_copier", STR("the decision copies the array into host memory, and the host has no copier"));
		e->hint = STR("give the host a copier (wasmhost.RunnerConfig.Host.Copier)");
		return e;
	}
	str cause;
	if (status == HOST_FAILED) {
		cause = STR("the host's copier failed (copy_to_host status 4)");
	} else if (status == HOST_FAULT) {
		cause = STR("the host could not write the copy's handle (copy_to_host status 3)");
	} else {
		fmt_arg a[] = {fa_d(status)};
		cause = fmt("copy_to_host returned status %d", a, 1);
	}
	fmt_arg a[] = {fa_s(cause)};
	perr *e = perr_new("copy_failed", fmt("copying the array into host memory failed: %s", a, 1));
	e->hint = STR("nothing was exported, and the array is as it was");
	return e;
}

/* max_copy_error_len is maxCopyErrorLen: the longest error object a copy
 * can end in. */
static uint32_t max_copy_error_len(void) {
	static const uint32_t statuses[] = {HOST_UNAVAILABLE, HOST_FAULT, HOST_FAILED, UINT32_MAX};
	uint32_t n = 0;
	for (size_t i = 0; i < sizeof statuses / sizeof *statuses; i++) {
		buf w = {0};
		write_error_json(&w, copy_status_error(statuses[i]));
		n = w.n > n ? w.n : n;
	}
	return n;
}

/* exchange_answer is {"decision":...,"buffer":...}. */
static str exchange_answer(str decision, str buffer) {
	buf w = {0};
	buf_lit(&w, "{\"decision\":");
	buf_str(&w, decision);
	buf_lit(&w, ",\"buffer\":");
	buf_str(&w, buffer);
	buf_byte(&w, '}');
	return buf_done(&w);
}

static str uint_text(uint64_t v) {
	buf w = {0};
	buf_uint(&w, v);
	return buf_done(&w);
}

/* dlroute_exchange decides a line as dlroute_decide does and carries the
 * decision out for the host's buffer: an exception exports nothing, an
 * export in place exports buffer, a copy into host memory is asked of
 * the host (copy_to_host) once the answer or its error is sure to fit,
 * so that a too_small call made no copy. A copy anywhere else, or one
 * that fails, is host_error (no_copier, copy_failed). */
EXPORT("dlroute_exchange")
uint64_t dlroute_exchange(uint32_t h, uint32_t buffer, const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap) {
	arena_reset();
	const plan *p = handle(h);
	if (p == NULL) {
		return pack(STATUS_BAD_HANDLE, 0);
	}
	perr *err = NULL;
	uint32_t status;
	jobj *obj = NULL;
	decision d = {0};
	if (!read_line(p, in, in_len, false, &obj, &err, &status) || !decide(p, obj, &d, &err, &status)) {
		return put_error(out, out_cap, err, status);
	}
	buf w = {0};
	write_decision_json(&w, &d);
	str decision = buf_done(&w);
	if (d.error_type.n > 0) {
		return put(out, out_cap, exchange_answer(decision, STR("null")), STATUS_OK);
	}
	if (!d.copy) {
		return put(out, out_cap, exchange_answer(decision, uint_text(buffer)), STATUS_OK);
	}
	if (d.device_type_code != 1 || d.device_id != 0) { /* StepOf: a copy only into (kDLCPU, 0) */
		fmt_arg a[] = {fa_s(d.rule), fa_s(d.device_type), fa_d(d.device_id)};
		perr *e = perr_new("no_copier", fmt("rule %s copies the array on (%s, %d), and this host copies only into host memory (kDLCPU, 0)", a, 3));
		e->hint = STR("there is no device copier here: without copy=True the array is exported in place, and with dl_device (kDLCPU, 0) it is copied into host memory");
		return put_error(out, out_cap, e, STATUS_HOST_ERROR);
	}
	uint32_t need = exchange_answer(decision, uint_text(UINT32_MAX)).n;
	uint32_t errs = max_copy_error_len();
	need = errs > need ? errs : need;
	if (need > out_cap) {
		return pack(STATUS_TOO_SMALL, need);
	}
	uint32_t copied = 0;
	uint32_t hs = host_copy_to_host(buffer, &copied);
	if (hs != HOST_OK) {
		return put_error(out, out_cap, copy_status_error(hs), STATUS_HOST_ERROR);
	}
	return put(out, out_cap, exchange_answer(decision, uint_text(copied)), STATUS_OK);
}

/* dlroute_copy_to_host asks the host to copy its buffer into host
 * memory: ok with the copy's handle, or host_error with the host's
 * status. */
EXPORT("dlroute_copy_to_host") uint64_t dlroute_copy_to_host(uint32_t buffer) {
	uint32_t copied = 0;
	uint32_t hs = host_copy_to_host(buffer, &copied);
	if (hs != HOST_OK) {
		return pack(STATUS_HOST_ERROR, hs);
	}
	return pack(STATUS_OK, copied);
}

EXPORT("dlroute_release") void dlroute_release(uint32_t h) {
	plan *p = handle(h);
	if (p != NULL) {
		plans[h - 1] = NULL;
		plan_free(p);
	}
}
