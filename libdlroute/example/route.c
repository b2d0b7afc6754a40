// route: dlroute resolve --json, written in C over libdlroute.
//
//   gcc -o route route.c -I.. -L<dir of libdlroute.so> -ldlroute
//   ./route [RULESET [RULES]] < inputs.jsonl
//
// Reads one JSON input per line on stdin and writes, for each, the line
// `dlroute resolve --json --ruleset RULESET --rules RULES` writes: the
// decision, or {"input_error":...} / {"eval_error":...}. RULESET is "jax"
// by default and RULES the embedded rules. Exit status: 0, or 1 when a line
// was not decided, or 2 when the rules or the library could not be used.
// The corpus test (cmd/dlroute/corpus_test.go) runs it as the C host.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlroute.h"

// call_grow calls an entry again with a larger buffer while it says
// DLROUTE_TOO_SMALL.
#define CALL_GROW(status, buf, cap, len, call)                 \
    for (;;) {                                                \
        status = (call);                                      \
        if (status != DLROUTE_TOO_SMALL) break;               \
        cap = len;                                            \
        buf = realloc(buf, cap);                              \
        if (buf == NULL) { perror("route"); exit(2); }        \
    }

int main(int argc, char **argv) {
    const char *ref = argc > 1 ? argv[1] : "jax";
    const char *rules_path = argc > 2 ? argv[2] : "";

    if (dlroute_abi_version() != DLROUTE_ABI_VERSION) {
        fprintf(stderr, "error: libdlroute has ABI version %u; this program was built for %d\n",
                dlroute_abi_version(), DLROUTE_ABI_VERSION);
        return 2;
    }

    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    if (out == NULL) { perror("route"); return 2; }

    uint64_t rules = 0, ruleset = 0;
    int status;
    CALL_GROW(status, out, cap, len,
              dlroute_open(rules_path, strlen(rules_path), NULL, 0, &rules, out, cap, &len));
    if (status != DLROUTE_OK) {
        fprintf(stderr, "error: %s: %.*s\n", dlroute_status_name(status), (int)len, out);
        return 2;
    }
    CALL_GROW(status, out, cap, len, dlroute_ruleset(rules, ref, strlen(ref), &ruleset, out, cap, &len));
    if (status != DLROUTE_OK) {
        fprintf(stderr, "error: %s: %.*s\n", dlroute_status_name(status), (int)len, out);
        return 2;
    }

    int exit_status = 0;
    char *line = NULL;
    size_t line_cap = 0;
    ssize_t n;
    while ((n = getline(&line, &line_cap, stdin)) >= 0) {
        if (n > 0 && line[n - 1] == '\n') n--;
        if (n > 0 && line[n - 1] == '\r') n--;
        CALL_GROW(status, out, cap, len, dlroute_resolve_json(ruleset, line, (size_t)n, out, cap, &len));
        if (status != DLROUTE_OK) exit_status = 1;
        if (status != DLROUTE_OK && status != DLROUTE_INPUT_ERROR && status != DLROUTE_EVAL_ERROR) {
            fprintf(stderr, "error: %s: %.*s\n", dlroute_status_name(status), (int)len, out);
            return 2;
        }
        fwrite(out, 1, len, stdout);
        fputc('\n', stdout);
    }
    free(line);
    free(out);
    dlroute_close(rules);
    return exit_status;
}
