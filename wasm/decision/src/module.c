/*
 * The module's exports, ported from its Go build (since removed). ABI.md beside the
 * sources documents every export and status (ABI version 2). This file
 * and arena.c own the module's only mutable state: the handles' plans
 * and the host's buffers.
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
 * module's (wasm/ABI.md): a host of that one refuses this one. */
#define ABI_VERSION 2

/* The statuses, the compiler module's numbers (internal/contract.Status). */
enum {
	STATUS_OK = 0,
	STATUS_INPUT_ERROR = 1,
	STATUS_EVAL_ERROR = 2,
	STATUS_LOAD_ERROR = 3,
	STATUS_NO_RULESET = 4,
	STATUS_BAD_HANDLE = 5,
	STATUS_TOO_SMALL = 7,
};

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
	if (in_len > MAX_LINE_LEN) {
		err = perr_new(CODE_TOO_LONG, STR("line is longer than 4194304 bytes"));
		return put_error(out, out_cap, err, STATUS_INPUT_ERROR);
	}
	jobj *obj = NULL;
	buf w = {0};
	if (!decode_input(p, in, in_len, &obj, &err)) {
		goto failed;
	}
	if (explain) {
		/* explain_json bounds its steps at EXPLAIN_STEP_FACTOR times the
		 * plan's limit, as AppendExplain does. */
		if (!explain_json(p, obj, &w, &err)) {
			goto failed;
		}
	} else {
		decision d = {0};
		frame *f = frame_new(p, obj, NULL, p->step_limit, NULL);
		if (f == NULL) {
			err = perr_new(CODE_COST_LIMIT, STR("operation cancelled: actual cost limit exceeded"));
			goto failed;
		}
		if (!frame_decide(f, &d, &err)) {
			goto failed;
		}
		write_decision_json(&w, &d);
	}
	return put(out, out_cap, buf_done(&w), STATUS_OK);
failed:
	return put_error(out, out_cap, err, code_is_input(err->code) ? STATUS_INPUT_ERROR : STATUS_EVAL_ERROR);
}

EXPORT("dlroute_decide")
uint64_t dlroute_decide(uint32_t h, const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap) {
	return answer_line(h, in, in_len, out, out_cap, false);
}

EXPORT("dlroute_explain")
uint64_t dlroute_explain(uint32_t h, const uint8_t *in, uint32_t in_len, uint8_t *out, uint32_t out_cap) {
	return answer_line(h, in, in_len, out, out_cap, true);
}

EXPORT("dlroute_release") void dlroute_release(uint32_t h) {
	plan *p = handle(h);
	if (p != NULL) {
		plans[h - 1] = NULL;
		plan_free(p);
	}
}
