/*
 * dlroute.h: libdlroute, the dlroute rule engine as a C library.
 *
 * dlroute decides how an array crosses DLPack (which device type it
 * advertises, whether an exchange copies, or which exception it raises)
 * from versioned rule sets written in CEL, instead of code compiled into
 * an array library. This library is the same engine as the `dlroute`
 * command: `dlroute_resolve_json` answers a JSON line with exactly the
 * line `dlroute resolve --json` writes for it.
 *
 * Build: go build -buildmode=c-shared -o libdlroute.so ./libdlroute
 * (the Python package does this itself; see python/README.md).
 *
 * HANDLES. Rules and rule sets are named by 64-bit handles, never by
 * pointers. A handle is never 0 and never reused, so a handle that was
 * closed, made up or kept too long is DLROUTE_BAD_HANDLE, never a crash.
 *
 * BUFFERS. The caller owns every buffer. Inputs are (pointer, length)
 * pairs, read during the call only and not NUL-terminated (a NULL pointer
 * with length 0 is the empty string). A length over DLROUTE_MAX_INPUT_LEN
 * is refused before a byte is read, as the entry refuses a real input
 * that long (LIMITS, below), so a length that is wrong cannot make the
 * library read past the buffer; one within it is believed. Outputs are
 * written to `out`, which holds `out_cap` bytes; `*out_len` is set to the
 * output's length, which is not NUL-terminated. When the output does not
 * fit, nothing is written to `out`, `*out_len` is the length needed and
 * the status is DLROUTE_TOO_SMALL: call again with a larger buffer
 * (decisions are deterministic, so the second call gives the same
 * output). A 64 KiB buffer holds every output of the embedded rules but
 * an explanation of a long input and the whole interop matrix (about
 * 70 KB).
 *
 * MESSAGES. Every status but DLROUTE_OK says why in `out`, as JSON:
 *  - resolve_json, explain_json and exchange_json: the line that
 *    `dlroute resolve --json` writes, {"input_error":{...}} or
 *    {"eval_error":{...}}, with "line":1, "code", "message", and for an
 *    evaluation error the "position" in the rule file;
 *  - dlroute_open: a JSON array of error objects, each {"code",
 *    "message", "position":{"file","line","column"}, "source", "hint"};
 *  - interop_json and interop_matrix_json: one error object, whose
 *    message begins with the exchange and the call that failed;
 *  - every other status: one error object, or nothing (out_len 0) for
 *    DLROUTE_BAD_HANDLE.
 * Codes are stable (ERRORS.md lists them); match on them, not on
 * messages.
 *
 * THREADS. Every function may be called from any number of threads at
 * once, on the same handles. Closing rules while another thread uses one
 * of their rule sets makes that call DLROUTE_BAD_HANDLE or lets it finish;
 * it never reads freed memory.
 *
 * FORK. The library runs a Go runtime, which does not survive fork(2):
 * in a child of the process that loaded it, every function returns
 * DLROUTE_FORKED without running any of it. Load the library in the
 * child instead (Python: the "spawn" or "forkserver" start method).
 *
 * LIMITS. Every call is bounded, by these limits, all on always:
 *  - inputs: DLROUTE_MAX_INPUT_LEN (4 MiB) for each input of any entry,
 *    a JSON line, a binary input, a request, a path, a key or a ref (too
 *    long: the JSON-line entries answer the input_error line with code
 *    too_long, dlroute_resolve and the interop entries INPUT_ERROR,
 *    dlroute_open and dlroute_ruleset BAD_ARGUMENT, each code too_long);
 *    a string input 4,096 code points, a list 64 elements (the engine's
 *    MaxStringLen and MaxListLen);
 *  - work: each CEL expression within the engine's cost limit (100,000,
 *    estimated at load, and tracked while it runs where the estimate is
 *    higher);
 *  - time: DLROUTE_DEADLINE_MS (10 s) of evaluation per call, serve's
 *    request timeout; past it the call answers EVAL_ERROR (code
 *    canceled). Compiling rules (dlroute_open of a directory or bundle,
 *    the first dlroute_ruleset of an embedded version, the first interop
 *    call) is bounded by the rule files' limits instead (1 MiB a file)
 *    and by the patterns of matches a load compiles (250,000
 *    instructions in all, the engine's MaxLoadRegexInsts: a fraction of
 *    a second).
 *  - handles: DLROUTE_MAX_OPEN (64) rules open at once in a process;
 *    one more dlroute_open is DLROUTE_TOO_MANY_OPEN until one is closed.
 *    Each costs about 0.6 MB before it compiles a version, tens of MB
 *    with every version compiled; rule-set handles are released with
 *    their rules.
 * A decision of the embedded rules takes microseconds (tens where it is
 * not remembered), an interop cell milliseconds; the deadline is what a
 * caller can count on whatever the rules are.
 *
 * SIGNALS. The library installs no handler for SIGINT or SIGTERM; the
 * host's stay in force. A signal arriving during a call is the host's to
 * handle when it returns, which is within the limits above: Python's
 * KeyboardInterrupt and SIGALRM wait for it.
 */
#ifndef DLROUTE_H
#define DLROUTE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The ABI this header describes. Check dlroute_abi_version() against it
 * after loading the library: another number means other functions,
 * statuses or output forms. */
#define DLROUTE_ABI_VERSION 1

/* Limits of a call (LIMITS above). */
#define DLROUTE_MAX_INPUT_LEN 4194304 /* bytes in any one input: 4 MiB */
#define DLROUTE_MAX_OPEN 64           /* rules open at once in a process */
#define DLROUTE_DEADLINE_MS 10000     /* evaluation time of one call */

/* BEGIN generated by go generate ./internal/contract: do not edit */
/* Statuses. Their numbers are the WebAssembly module's (wasm/ABI.md); 8
 * is the module's alone. */
#define DLROUTE_OK 0             /* done; the output holds the result */
#define DLROUTE_INPUT_ERROR 1    /* the input is not valid for the rule set */
#define DLROUTE_EVAL_ERROR 2     /* the rules could not decide the input */
#define DLROUTE_LOAD_ERROR 3     /* the rules did not load */
#define DLROUTE_NO_RULESET 4     /* no rule set of that name or version */
#define DLROUTE_BAD_HANDLE 5     /* a handle that was not given, or was closed */
#define DLROUTE_BAD_ARGUMENT 6   /* a NULL pointer with a length, a NULL out-parameter, a malformed binary input */
#define DLROUTE_TOO_SMALL 7      /* out is too small; the length needed is returned */
#define DLROUTE_HOST_ERROR 9     /* the host could not carry out the decision (no_copier, copy_failed) */
#define DLROUTE_FORKED 10        /* called in a child of the process that loaded the library */
#define DLROUTE_INTERNAL 11      /* a fault inside the library (a bug): reported, not crashed on */
#define DLROUTE_TOO_MANY_OPEN 12 /* DLROUTE_MAX_OPEN rules are open (open): close some first */

/* Steps of an exchange (dlroute_exchange_json). */
#define DLROUTE_STEP_RAISE 0        /* the decision is an exception: raise it */
#define DLROUTE_STEP_IN_PLACE 1     /* export the producer's buffer as it is */
#define DLROUTE_STEP_COPY_TO_HOST 2 /* copy into host memory (kDLCPU, 0); export the copy */
/* END generated */

/* The library's ABI version: DLROUTE_ABI_VERSION of the header it was
 * built with. Never fails; safe before anything else, and after fork. */
uint32_t dlroute_abi_version(void);

/* The library's version, a static NUL-terminated string such as
 * "0.1.0". Never fails; the caller must not free it. */
const char *dlroute_version(void);

/* A status's name ("ok", "input_error", ...), a static NUL-terminated
 * string; "unknown" for a number that is no status. */
const char *dlroute_status_name(int status);

/* Opens rules and sets *rules to their handle.
 *  path, path_len: the embedded rules when path_len is 0; otherwise a
 *    rules directory (<name>/<version>/ folders) or a bundle file from
 *    `dlroute bundle build`, every digest checked.
 *  key, key_len: when key_len > 0, the bundle must be signed by this
 *    public key: the key text (name+hash+key) or a file holding it.
 * Rules given by path are compiled whole here, so every error in them is
 * reported at once; the embedded rules (proved to load by their tests) are
 * compiled a version at a time, as dlroute_ruleset asks for them. No
 * tests.yaml is run (use `dlroute test`). Statuses: OK; LOAD_ERROR (out: a
 * JSON array of errors, each with its position in the rule file);
 * TOO_MANY_OPEN (out: an error object, code too_many_open: close rules
 * first); BAD_ARGUMENT; TOO_SMALL. */
int dlroute_open(const char *path, size_t path_len, const char *key, size_t key_len,
                 uint64_t *rules, char *out, size_t out_cap, size_t *out_len);

/* Releases rules and every rule-set handle taken from them; both become
 * DLROUTE_BAD_HANDLE. Statuses: OK, BAD_HANDLE. */
int dlroute_close(uint64_t rules);

/* Writes the rule-set versions the rules hold as a JSON array of
 * {"ref":"jax@v3","name":"jax","version":"v3","default":true} ("default":
 * the version a bare name picks). Statuses: OK, BAD_HANDLE, TOO_SMALL. */
int dlroute_rulesets(uint64_t rules, char *out, size_t out_cap, size_t *out_len);

/* Sets *ruleset to the handle of a rule set of the rules: ref is a name
 * ("jax", the newest version), name@version ("jax@v2") or name==release
 * ("jax==0.10.2", the version whose manifest covers that release). The
 * same version gets the same handle while the rules are open; it is
 * released with them. With OK, out is empty (*out_len 0), except for a
 * release that no version was checked against (one newer than every
 * version's range, or a pre-release or development build such as
 * "1.13.0a0+gitunknown", read as its release): then the handle is the
 * version that answers it and out holds the warning, a JSON object
 * {"code":"unchecked_release","ref","release","build"?,"read_as"?,
 * "newer","ruleset","releases":{"first","last","checked":{release:
 * "run"|"source"}},"message","hint"}; a caller that wants a strict mode
 * refuses on it. TOO_SMALL for that warning still sets *ruleset.
 * Statuses: OK, NO_RULESET (out: an error object), BAD_HANDLE,
 * BAD_ARGUMENT, TOO_SMALL; LOAD_ERROR only if an embedded version failed
 * to compile, which their tests rule out. */
int dlroute_ruleset(uint64_t rules, const char *ref, size_t ref_len, uint64_t *ruleset,
                    char *out, size_t out_cap, size_t *out_len);

/* Writes what a caller of dlroute_resolve needs, as JSON:
 * {"ref","inputs":[{"name","type","default"?}...],"rules":[ids...],
 * "device_types":[{"name","code"}...]}. Statuses: OK, BAD_HANDLE,
 * TOO_SMALL. */
int dlroute_describe(uint64_t ruleset, char *out, size_t out_cap, size_t *out_len);

/* Decides one JSON input object, such as
 * {"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0},
 * and writes exactly the line `dlroute resolve --json` writes for it,
 * without the newline: the decision (OK), {"input_error":...}
 * (INPUT_ERROR) or {"eval_error":...} (EVAL_ERROR). Decisions are
 * remembered by the input's bytes. Other statuses: BAD_HANDLE,
 * BAD_ARGUMENT, TOO_SMALL. */
int dlroute_resolve_json(uint64_t ruleset, const char *line, size_t line_len,
                         char *out, size_t out_cap, size_t *out_len);

/* Decides one JSON input as dlroute_resolve_json does and writes the
 * explanation: {"decision":{...},"trace":{"rules":[...],"values":[...]}},
 * the rules tried and every value with its position. Statuses as
 * dlroute_resolve_json's. */
int dlroute_explain_json(uint64_t ruleset, const char *line, size_t line_len,
                         char *out, size_t out_cap, size_t *out_len);

/* Decides one binary input (wasm/ABI.md, "Binary input": one tagged field
 * per input, in the order dlroute_describe lists them) and writes the
 * binary decision ("Binary decision"). The fast entry: no JSON is read or
 * written for scalar inputs. Statuses: OK; INPUT_ERROR and EVAL_ERROR
 * (out: an error object, JSON); BAD_ARGUMENT (a malformed input; out: an
 * error object); BAD_HANDLE; TOO_SMALL. */
int dlroute_resolve(uint64_t ruleset, const uint8_t *in, size_t in_len,
                    uint8_t *out, size_t out_cap, size_t *out_len);

/* Decides one JSON input of an exchange rule set (`exchange`: the input
 * of x.__dlpack__(stream, max_version, dl_device, copy)) as
 * dlroute_resolve_json does, and sets *step to what carrying it out takes
 * (DLROUTE_STEP_*). A decision to copy anywhere but into host memory
 * cannot be carried out by a host: HOST_ERROR, out an error object with
 * the code no_copier (the rules decided; the host has no device copier).
 * Other statuses as dlroute_resolve_json's. */
int dlroute_exchange_json(uint64_t ruleset, const char *line, size_t line_len, int32_t *step,
                          char *out, size_t out_cap, size_t *out_len);

/* Which libraries exchange: one cell of `dlroute interop`. Decides
 * consumer's from_dlpack(x, **kwargs) for an array x of producer's, by
 * chaining both libraries' rule sets through the four calls of an
 * exchange (rules/README.md, "Libraries on both sides"): the consumer's
 * request, the producer's __dlpack_device__ (when the consumer calls it)
 * and __dlpack__ (again when the consumer tries again after a TypeError),
 * and the consumer's import of the capsule. The first exception is what
 * the user sees.
 *  rules: a handle from dlroute_open (not a rule set: both libraries'
 *    rule sets are taken from the rules).
 *  request, request_len: one JSON object,
 *    {"producer":"jax","consumer":"torch@v1",
 *     "array":{"platform":"gpu","platform_version":"<unknown>"},
 *     "kwargs":{"copy":true}}
 *    producer and consumer are refs as dlroute_ruleset takes them (also
 *    name==release: "jax==0.10.2"); the producer is a rule set that
 *    answers the four calls, or jax (whose __dlpack__ is jax-export's of
 *    the same release), the consumer one that answers them, or jax (whose
 *    from_dlpack is jax-import's of the same release). array is the
 *    producer's inputs that describe the array (absent: the ordinary
 *    array, the inputs' defaults); the inputs that say where it lives
 *    and are left out take their defaults, so an array is named as the
 *    matrix names it. It may not name call or __dlpack__'s arguments
 *    (stream, max_version, dl_device, copy, keywords): the exchange
 *    passes those. kwargs are from_dlpack's keyword arguments, as the
 *    consumer's inputs (copy, device; for jax a device is its repr,
 *    "CpuDevice(id=0)"); one left out is not passed.
 * Writes the cell exactly as `dlroute interop --json` writes it, without
 * the newline: {"producer","consumer","array":{"platform","memory",
 * "input"},"outcome","error"?,"device"?,"steps":[{"call","attempt",
 * "input","keywords"?,"kwargs"?,"decision"}...],"checked":{"run",
 * "producer":[...],"consumer":[...]}}. "outcome" is in_place,
 * producer_copy, consumer_copy, both_copy, or error (then "error" is the
 * exception's {"type","message"}); otherwise "device" is the device of
 * the consumer's array. "checked" lists each side's rule-set versions
 * ({"ruleset","checked":{release:"run"|"source"},"release_warning"?});
 * "run" is true where every one was run against a real release and no
 * ref named a release outside what was checked (release_warning: as
 * dlroute_ruleset's warning). Statuses: OK (an exception in the cell is an
 * answer, not a failure); INPUT_ERROR (out: an error object: a request
 * that is not such an object, code json_syntax, unknown_field,
 * missing_field, wrong_type or invalid_utf8; or an array or kwarg the
 * rule sets do not declare or of the wrong type); NO_RULESET (out: an
 * error object, code no_ruleset: a ref the rules lack, or a rule set
 * that is no library on its side, such as exchange, jax-export, or jax
 * as a consumer, the libraries in the hint); EVAL_ERROR (the rules could not
 * decide a step; out: an error object naming it); BAD_HANDLE;
 * BAD_ARGUMENT; TOO_SMALL; LOAD_ERROR only if an embedded version failed
 * to compile. The first call compiles the rule sets it names (0.1 to
 * 0.4 s for the embedded rules); a call costs a few milliseconds, and
 * its answer is not remembered: keep the cell where an array's answer is
 * needed again. */
int dlroute_interop_json(uint64_t rules, const char *request, size_t request_len,
                         char *out, size_t out_cap, size_t *out_len);

/* The interop matrix: every array the producers' rules distinguish (the
 * platforms and memory kinds of their __dlpack_device__ cases) into
 * every consumer, written as `dlroute interop --json` writes it: one
 * cell per line (dlroute_interop_json's form), each line ended by a
 * newline, a producer's rows in order and each row's consumers in order.
 *  request, request_len: one JSON object, {"producers":["jax"],
 *    "consumers":["torch","numpy"],"kwargs":{"copy":true}}; a list left
 *    out or empty is every library's default version (compiling every
 *    rule set on the first such call). Each cell that raises or reads
 *    silently different values carries "remedy": {"kind", "fix",
 *    "outcome"}, the cheapest fix that makes it cross.
 *  With "catch": true, the answer is instead one JSON object per pair
 *    of a producer and a consumer named, as `dlroute interop --catch
 *    --json` writes it: the exception types the exchange can raise over
 *    every version of both libraries, and the except clause that
 *    catches them.
 * Statuses as dlroute_interop_json's. */
int dlroute_interop_matrix_json(uint64_t rules, const char *request, size_t request_len,
                                char *out, size_t out_cap, size_t *out_len);

#ifdef __cplusplus
}
#endif

#endif /* DLROUTE_H */
