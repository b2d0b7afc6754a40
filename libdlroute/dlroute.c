// The C side of libdlroute: every entry of dlroute.h checks what it can
// without Go (a forked process, NULL out-parameters, NULL inputs with a
// length) and then calls its Go half in main.go (dlroute_go_*).

#include <string.h>
#include <unistd.h>

#include "dlroute.h"
#include "_cgo_export.h"

#define DLROUTE_VERSION_STRING "0.1.0"

// loaded_pid is the process that loaded the library: the only one whose
// Go runtime is alive.
static pid_t loaded_pid;

__attribute__((constructor)) static void dlroute_loaded(void) { loaded_pid = getpid(); }

static const char forked_message[] =
    "{\"code\":\"forked\",\"message\":\"libdlroute was loaded before this process forked, and its Go runtime does not "
    "survive fork\",\"hint\":\"load dlroute in the child instead: with Python's multiprocessing, use the 'spawn' or "
    "'forkserver' start method (torch DataLoader: multiprocessing_context='spawn')\"}";

static const char bad_out_message[] =
    "{\"code\":\"bad_argument\",\"message\":\"out is NULL and out_cap is not 0\"}";

static const char bad_input_message[] =
    "{\"code\":\"bad_argument\",\"message\":\"an input pointer is NULL and its length is not 0\"}";

static const char bad_param_message[] =
    "{\"code\":\"bad_argument\",\"message\":\"a result out-parameter is NULL\"}";

// say writes a static message as the output, as the Go half does.
static int say(int status, const char *msg, size_t len, char *out, size_t out_cap, size_t *out_len) {
    *out_len = len;
    if (len > out_cap) {
        return DLROUTE_TOO_SMALL;
    }
    memcpy(out, msg, len);
    return status;
}

// CHECK_OUT returns early for a forked process and for an output that
// cannot be written. out_len NULL: nothing can be said, only the status.
#define CHECK_OUT(out, out_cap, out_len)                                                                 \
    do {                                                                                               \
        if ((out_len) == NULL) {                                                                       \
            return getpid() != loaded_pid ? DLROUTE_FORKED : DLROUTE_BAD_ARGUMENT;                     \
        }                                                                                              \
        *(out_len) = 0;                                                                                \
        if ((out) == NULL && (out_cap) != 0) {                                                         \
            return DLROUTE_BAD_ARGUMENT;                                                               \
        }                                                                                              \
        if (getpid() != loaded_pid) {                                                                  \
            return say(DLROUTE_FORKED, forked_message, sizeof forked_message - 1, out, out_cap, out_len); \
        }                                                                                              \
    } while (0)

#define CHECK_IN(p, n)                                                                                      \
    do {                                                                                                  \
        if ((p) == NULL && (n) != 0) {                                                                    \
            return say(DLROUTE_BAD_ARGUMENT, bad_input_message, sizeof bad_input_message - 1, out, out_cap, out_len); \
        }                                                                                                 \
    } while (0)

#define CHECK_PARAM(p)                                                                                      \
    do {                                                                                                  \
        if ((p) == NULL) {                                                                                \
            return say(DLROUTE_BAD_ARGUMENT, bad_param_message, sizeof bad_param_message - 1, out, out_cap, out_len); \
        }                                                                                                 \
    } while (0)

uint32_t dlroute_abi_version(void) { return DLROUTE_ABI_VERSION; }

const char *dlroute_version(void) { return DLROUTE_VERSION_STRING; }

const char *dlroute_status_name(int status) {
    switch (status) {
    case DLROUTE_OK: return "ok";
    case DLROUTE_INPUT_ERROR: return "input_error";
    case DLROUTE_EVAL_ERROR: return "eval_error";
    case DLROUTE_LOAD_ERROR: return "load_error";
    case DLROUTE_NO_RULESET: return "no_ruleset";
    case DLROUTE_BAD_HANDLE: return "bad_handle";
    case DLROUTE_BAD_ARGUMENT: return "bad_argument";
    case DLROUTE_TOO_SMALL: return "too_small";
    case DLROUTE_FORKED: return "forked";
    case DLROUTE_INTERNAL: return "internal";
    case DLROUTE_TOO_MANY_OPEN: return "too_many_open";
    }
    return "unknown";
}

int dlroute_open(const char *path, size_t path_len, const char *key, size_t key_len,
                 uint64_t *rules, char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(path, path_len);
    CHECK_IN(key, key_len);
    CHECK_PARAM(rules);
    *rules = 0;
    return dlroute_go_open((char *)path, path_len, (char *)key, key_len, rules, out, out_cap, out_len);
}

int dlroute_close(uint64_t rules) {
    if (getpid() != loaded_pid) {
        return DLROUTE_FORKED;
    }
    return dlroute_go_close(rules);
}

int dlroute_rulesets(uint64_t rules, char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    return dlroute_go_rulesets(rules, out, out_cap, out_len);
}

int dlroute_ruleset(uint64_t rules, const char *ref, size_t ref_len, uint64_t *ruleset,
                    char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(ref, ref_len);
    CHECK_PARAM(ruleset);
    *ruleset = 0;
    return dlroute_go_ruleset(rules, (char *)ref, ref_len, ruleset, out, out_cap, out_len);
}

int dlroute_describe(uint64_t ruleset, char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    return dlroute_go_describe(ruleset, out, out_cap, out_len);
}

int dlroute_resolve_json(uint64_t ruleset, const char *line, size_t line_len,
                         char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(line, line_len);
    return dlroute_go_resolve_json(ruleset, (char *)line, line_len, out, out_cap, out_len);
}

int dlroute_explain_json(uint64_t ruleset, const char *line, size_t line_len,
                         char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(line, line_len);
    return dlroute_go_explain_json(ruleset, (char *)line, line_len, out, out_cap, out_len);
}

int dlroute_resolve(uint64_t ruleset, const uint8_t *in, size_t in_len,
                    uint8_t *out, size_t out_cap, size_t *out_len) {
    char *text_out = (char *)out; // the messages are text, the decision binary
    CHECK_OUT(text_out, out_cap, out_len);
    if (in == NULL && in_len != 0) {
        return say(DLROUTE_BAD_ARGUMENT, bad_input_message, sizeof bad_input_message - 1, text_out, out_cap, out_len);
    }
    return dlroute_go_resolve(ruleset, (char *)in, in_len, text_out, out_cap, out_len);
}

int dlroute_exchange_json(uint64_t ruleset, const char *line, size_t line_len, int32_t *step,
                          char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(line, line_len);
    CHECK_PARAM(step);
    *step = DLROUTE_STEP_RAISE;
    return dlroute_go_exchange_json(ruleset, (char *)line, line_len, step, out, out_cap, out_len);
}

int dlroute_interop_json(uint64_t rules, const char *request, size_t request_len,
                         char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(request, request_len);
    return dlroute_go_interop_json(rules, (char *)request, request_len, out, out_cap, out_len);
}

int dlroute_interop_matrix_json(uint64_t rules, const char *request, size_t request_len,
                                char *out, size_t out_cap, size_t *out_len) {
    CHECK_OUT(out, out_cap, out_len);
    CHECK_IN(request, request_len);
    return dlroute_go_interop_matrix_json(rules, (char *)request, request_len, out, out_cap, out_len);
}
