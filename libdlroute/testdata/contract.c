// contract.c: what a C caller may do to libdlroute, checked. Each check
// prints "ok NAME" or "FAIL NAME: why"; the last line is "N passed, N
// failed", and the exit status is 1 when any failed. Run by
// libdlroute/main_test.go, under a timeout (a hang is a failure too).

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dlroute.h"

static int passed, failed;

static void check(int cond, const char *name, const char *why) {
    if (cond) {
        passed++;
        printf("ok %s\n", name);
    } else {
        failed++;
        printf("FAIL %s: %s\n", name, why);
    }
    fflush(stdout);
}

static char out[1 << 16];
static size_t len;

static uint64_t open_ruleset(const char *ref) {
    uint64_t rules = 0, rs = 0;
    if (dlroute_open(NULL, 0, NULL, 0, &rules, out, sizeof out, &len) != DLROUTE_OK) return 0;
    if (dlroute_ruleset(rules, ref, strlen(ref), &rs, out, sizeof out, &len) != DLROUTE_OK) return 0;
    return rs;
}

static const char seed[] = "{\"platform\":\"gpu\",\"platform_version\":\"<unknown>\",\"local_hardware_id\":0}";
static const char seed_answer[] =
    "{\"error\":{\"type\":\"BufferError\",\"message\":\"Unknown GPU platform for __dlpack__: <unknown>\"},"
    "\"rule\":\"gpu-unknown-platform\",\"ruleset\":\"jax@v3\"}";

struct worker {
    uint64_t rs;
    int bad;
};

static void *resolve_many(void *arg) {
    struct worker *w = arg;
    char buf[4096];
    size_t n;
    for (int i = 0; i < 2000; i++) {
        int st = dlroute_resolve_json(w->rs, seed, sizeof seed - 1, buf, sizeof buf, &n);
        if (st != DLROUTE_OK || n != sizeof seed_answer - 1 || memcmp(buf, seed_answer, n) != 0) w->bad++;
    }
    return NULL;
}

int main(void) {
    check(dlroute_abi_version() == DLROUTE_ABI_VERSION, "abi_version", "the library's ABI is not the header's");
    check(strcmp(dlroute_status_name(DLROUTE_FORKED), "forked") == 0, "status_name", "DLROUTE_FORKED is not named forked");
    check(strcmp(dlroute_status_name(999), "unknown") == 0, "status_name_unknown", "999 has a name");

    uint64_t rules = 0;
    int st = dlroute_open(NULL, 0, NULL, 0, &rules, out, sizeof out, &len);
    check(st == DLROUTE_OK && rules != 0, "open_embedded", "the embedded rules did not open");

    uint64_t rs = 0;
    st = dlroute_ruleset(rules, "jax", 3, &rs, out, sizeof out, &len);
    check(st == DLROUTE_OK && rs != 0, "ruleset", "jax is not a rule set");

    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, out, sizeof out, &len);
    check(st == DLROUTE_OK && len == sizeof seed_answer - 1 && memcmp(out, seed_answer, len) == 0, "resolve_json_seed",
          "the seed's input is not answered as dlroute resolve --json answers it");

    // Output buffers: too small says the size; NULL with 0 capacity asks
    // for the size only.
    char tiny[8];
    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, tiny, sizeof tiny, &len);
    check(st == DLROUTE_TOO_SMALL && len == sizeof seed_answer - 1, "too_small", "a small buffer does not say the size needed");
    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, NULL, 0, &len);
    check(st == DLROUTE_TOO_SMALL && len == sizeof seed_answer - 1, "size_query", "NULL, 0 does not say the size needed");

    // Bad arguments: statuses, never crashes.
    st = dlroute_resolve_json(rs, NULL, 10, out, sizeof out, &len);
    check(st == DLROUTE_BAD_ARGUMENT, "null_input", "a NULL input with a length is not bad_argument");
    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, NULL, 100, &len);
    check(st == DLROUTE_BAD_ARGUMENT, "null_out", "a NULL out with a capacity is not bad_argument");
    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, out, sizeof out, NULL);
    check(st == DLROUTE_BAD_ARGUMENT, "null_out_len", "a NULL out_len is not bad_argument");
    st = dlroute_ruleset(rules, "jax", 3, NULL, out, sizeof out, &len);
    check(st == DLROUTE_BAD_ARGUMENT, "null_handle_out", "a NULL handle out-parameter is not bad_argument");
    st = dlroute_resolve_json(0xdeadbeef, seed, sizeof seed - 1, out, sizeof out, &len);
    check(st == DLROUTE_BAD_HANDLE, "made_up_handle", "a made-up handle is not bad_handle");
    st = dlroute_resolve_json(0, seed, sizeof seed - 1, out, sizeof out, &len);
    check(st == DLROUTE_BAD_HANDLE, "zero_handle", "handle 0 is not bad_handle");
    st = dlroute_resolve_json(rules, seed, sizeof seed - 1, out, sizeof out, &len);
    check(st == DLROUTE_BAD_HANDLE, "rules_as_ruleset", "a rules handle used as a rule set is not bad_handle");
    st = dlroute_resolve(rs, (const uint8_t *)"\x07garbage", 8, (uint8_t *)out, sizeof out, &len);
    check(st == DLROUTE_BAD_ARGUMENT, "malformed_binary", "a malformed binary input is not bad_argument");
    const char bad_utf8[] = "{\"platform\":\"gpu\xff\"}";
    st = dlroute_resolve_json(rs, bad_utf8, sizeof bad_utf8 - 1, out, sizeof out, &len);
    check(st == DLROUTE_INPUT_ERROR && len > 0 && strstr(out, "\"input_error\"") == out + 1, "invalid_utf8",
          "invalid UTF-8 is not an input_error line");
    st = dlroute_ruleset(rules, "nosuch", 6, &rs, out, sizeof out, &len);
    check(st == DLROUTE_NO_RULESET && len > 0, "no_ruleset", "an unknown rule set is not no_ruleset with a message");
    st = dlroute_ruleset(rules, "jax", 3, &rs, out, sizeof out, &len);
    const char *missing = "/nonexistent/rules";
    uint64_t other = 0;
    st = dlroute_open(missing, strlen(missing), NULL, 0, &other, out, sizeof out, &len);
    check(st == DLROUTE_LOAD_ERROR && other == 0 && len > 0 && out[0] == '[', "open_missing",
          "a missing rules directory is not load_error with a JSON array");

    // Lengths that lie: a 76-byte buffer given as 2^40 bytes, as SIZE_MAX
    // and as one byte over the limit is refused as too long (the code
    // too_long), before a byte past its 76 is read.
    static const char small[76] = "{\"platform\":\"gpu\"}";
    const size_t lies[] = {(size_t)1 << 40, SIZE_MAX, DLROUTE_MAX_INPUT_LEN + 1};
    uint64_t exch = open_ruleset("exchange");
    int lied = 0;
    for (size_t i = 0; i < sizeof lies / sizeof lies[0]; i++) {
        size_t n = lies[i];
        int32_t step = -1;
        uint64_t h = 1;
        struct {
            const char *entry;
            int status, want;
        } got[] = {
            {"resolve_json", dlroute_resolve_json(rs, small, n, out, sizeof out, &len), DLROUTE_INPUT_ERROR},
            {"explain_json", dlroute_explain_json(rs, small, n, out, sizeof out, &len), DLROUTE_INPUT_ERROR},
            {"exchange_json", dlroute_exchange_json(exch, small, n, &step, out, sizeof out, &len), DLROUTE_INPUT_ERROR},
            {"resolve", dlroute_resolve(rs, (const uint8_t *)small, n, (uint8_t *)out, sizeof out, &len), DLROUTE_INPUT_ERROR},
            {"interop_json", dlroute_interop_json(rules, small, n, out, sizeof out, &len), DLROUTE_INPUT_ERROR},
            {"interop_matrix_json", dlroute_interop_matrix_json(rules, small, n, out, sizeof out, &len), DLROUTE_INPUT_ERROR},
            {"open path", dlroute_open(small, n, NULL, 0, &h, out, sizeof out, &len), DLROUTE_BAD_ARGUMENT},
            {"open key", dlroute_open(NULL, 0, small, n, &h, out, sizeof out, &len), DLROUTE_BAD_ARGUMENT},
            {"ruleset", dlroute_ruleset(rules, small, n, &h, out, sizeof out, &len), DLROUTE_BAD_ARGUMENT},
        };
        // Each call above wrote over out: three of them again, alone, for
        // their messages.
        for (size_t k = 0; k < sizeof got / sizeof got[0]; k++) {
            if (got[k].status != got[k].want) {
                printf("  %s of a 76-byte buffer given as %zu bytes: status %s, want %s\n", got[k].entry, n,
                       dlroute_status_name(got[k].status), dlroute_status_name(got[k].want));
                lied++;
            }
        }
        st = dlroute_resolve_json(rs, small, n, out, sizeof out, &len);
        if (memmem(out, len, "\"code\":\"too_long\"", 17) == NULL || strstr(out, "{\"input_error\":") != out) lied++;
        st = dlroute_open(small, n, NULL, 0, &h, out, sizeof out, &len);
        if (memmem(out, len, "\"code\":\"too_long\"", 17) == NULL || h != 0) lied++;
        st = dlroute_resolve(rs, (const uint8_t *)small, n, (uint8_t *)out, sizeof out, &len);
        if (memmem(out, len, "\"code\":\"too_long\"", 17) == NULL) lied++;
        if (step != DLROUTE_STEP_RAISE) lied++;
    }
    check(lied == 0, "lying_lengths", "a length over DLROUTE_MAX_INPUT_LEN is not refused as too_long by every entry");

    // The interop question takes the rules' handle: a rule set's is not one.
    static const char cell[] =
        "{\"producer\":\"jax\",\"consumer\":\"torch\",\"array\":{\"platform\":\"gpu\",\"platform_version\":\"<unknown>\"}}";
    static const char cell_start[] = "{\"producer\":\"jax@v3\",\"consumer\":\"torch@v3\",";
    static const char cell_error[] =
        "\"outcome\":\"error\",\"error\":{\"type\":\"BufferError\",\"message\":\"Unknown GPU platform for __dlpack__: <unknown>\"}";
    static const char matrix[] = "{\"producers\":[\"numpy\"],\"consumers\":[\"torch\"]}";
    st = dlroute_interop_json(rules, cell, sizeof cell - 1, out, sizeof out, &len);
    check(st == DLROUTE_OK && len > sizeof cell_start && memcmp(out, cell_start, sizeof cell_start - 1) == 0 &&
              memmem(out, len, cell_error, sizeof cell_error - 1) != NULL,
          "interop_seed", "the seed's array into torch is not the cell with JAX's BufferError");
    size_t cell_len = len;
    st = dlroute_interop_json(rules, cell, sizeof cell - 1, NULL, 0, &len);
    check(st == DLROUTE_TOO_SMALL && len == cell_len, "interop_size_query", "NULL, 0 does not say the cell's size");
    st = dlroute_interop_json(rules, NULL, 5, out, sizeof out, &len);
    check(st == DLROUTE_BAD_ARGUMENT, "interop_null_request", "a NULL request with a length is not bad_argument");
    st = dlroute_interop_json(rules, cell, sizeof cell - 1, out, sizeof out, NULL);
    check(st == DLROUTE_BAD_ARGUMENT, "interop_null_out_len", "a NULL out_len is not bad_argument");
    st = dlroute_interop_json(rs, cell, sizeof cell - 1, out, sizeof out, &len);
    check(st == DLROUTE_BAD_HANDLE && len == 0, "interop_ruleset_handle", "a rule set's handle as the rules is not bad_handle");
    st = dlroute_interop_json(rules, "{}", 2, out, sizeof out, &len);
    check(st == DLROUTE_INPUT_ERROR && len > 0 && out[0] == '{', "interop_no_producer", "a request without a producer is not input_error with an error object");
    st = dlroute_interop_matrix_json(rules, matrix, sizeof matrix - 1, out, sizeof out, &len);
    int lines = 0;
    for (size_t i = 0; i < len; i++) lines += out[i] == '\n';
    check(st == DLROUTE_OK && lines == 3 && out[len - 1] == '\n', "interop_matrix",
          "numpy@v2's three arrays into torch are not three lines");

    // Many threads on one handle.
    enum { threads = 8 };
    pthread_t tid[threads];
    struct worker w[threads];
    for (int i = 0; i < threads; i++) {
        w[i] = (struct worker){rs, 0};
        pthread_create(&tid[i], NULL, resolve_many, &w[i]);
    }
    int bad = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(tid[i], NULL);
        bad += w[i].bad;
    }
    check(bad == 0, "threads", "a thread got a different answer");

    // Fork: the child is told, and does not hang.
    pid_t pid = fork();
    if (pid == 0) {
        char buf[4096];
        size_t n = 0;
        int s = dlroute_resolve_json(rs, seed, sizeof seed - 1, buf, sizeof buf, &n);
        if (s != DLROUTE_FORKED || n == 0 || strstr(buf, "spawn") == NULL) _exit(1);
        s = dlroute_interop_json(rules, cell, sizeof cell - 1, buf, sizeof buf, &n);
        _exit(s == DLROUTE_FORKED && n > 0 ? 0 : 1);
    }
    int wstatus = 0;
    waitpid(pid, &wstatus, 0);
    check(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0, "fork_child", "the forked child was not told DLROUTE_FORKED");
    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, out, sizeof out, &len);
    check(st == DLROUTE_OK, "fork_parent", "the parent stopped working after fork");

    // Closing: every handle from the rules is dead, and stays dead.
    check(dlroute_close(rules) == DLROUTE_OK, "close", "close failed");
    st = dlroute_resolve_json(rs, seed, sizeof seed - 1, out, sizeof out, &len);
    check(st == DLROUTE_BAD_HANDLE, "closed_ruleset", "a closed rule set still answers");
    check(dlroute_close(rules) == DLROUTE_BAD_HANDLE, "close_twice", "closing twice is not bad_handle");
    st = dlroute_interop_json(rules, cell, sizeof cell - 1, out, sizeof out, &len);
    check(st == DLROUTE_BAD_HANDLE, "closed_interop", "closed rules still answer the interop question");

    // Opening again after close, and twice at once.
    uint64_t a = open_ruleset("jax@v1"), b = open_ruleset("jax@v1");
    check(a != 0 && b != 0 && a != b, "open_again", "opening again does not give new handles");

    // Rules never closed stop at DLROUTE_MAX_OPEN, with their own status;
    // a close makes room again.
    static uint64_t many[DLROUTE_MAX_OPEN + 1];
    int opened = 0;
    for (st = DLROUTE_OK; opened <= DLROUTE_MAX_OPEN; opened++) {
        st = dlroute_open(NULL, 0, NULL, 0, &many[opened], out, sizeof out, &len);
        if (st != DLROUTE_OK) break;
    }
    check(st == DLROUTE_TOO_MANY_OPEN && opened < DLROUTE_MAX_OPEN && many[opened] == 0 &&
              memmem(out, len, "\"code\":\"too_many_open\"", 22) != NULL,
          "too_many_open", "opening rules without closing them does not stop at DLROUTE_MAX_OPEN with too_many_open");
    check(strcmp(dlroute_status_name(DLROUTE_TOO_MANY_OPEN), "too_many_open") == 0, "status_name_too_many_open",
          "DLROUTE_TOO_MANY_OPEN is not named too_many_open");
    dlroute_close(many[0]);
    st = dlroute_open(NULL, 0, NULL, 0, &many[0], out, sizeof out, &len);
    check(st == DLROUTE_OK, "open_after_close_at_limit", "a close at the limit does not make room for an open");
    for (int i = 0; i < opened; i++) dlroute_close(many[i]);

    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
