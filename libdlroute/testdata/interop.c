// interop.c: the interop question in C. Each line of stdin is a request
// of dlroute_interop_json (argument "cell", the default) or of
// dlroute_interop_matrix_json ("matrix"); for each it writes the status's
// name, a space and the output, then a newline. The output is sized
// first by a call with no buffer (out NULL, out_cap 0), as a caller
// that does not know its size does. Run by libdlroute/interop_test.go,
// which wants the bytes the Go side (libdlroute/internal/capi) answers.

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dlroute.h"

typedef int (*entry)(uint64_t, const char *, size_t, char *, size_t, size_t *);

int main(int argc, char **argv) {
    entry ask = dlroute_interop_json;
    if (argc > 1 && strcmp(argv[1], "matrix") == 0) {
        ask = dlroute_interop_matrix_json;
    } else if (argc > 1 && strcmp(argv[1], "cell") != 0) {
        fprintf(stderr, "usage: interop [cell|matrix] < requests\n");
        return 2;
    }
    char msg[4096];
    size_t len = 0;
    uint64_t rules = 0;
    int st = dlroute_open(NULL, 0, NULL, 0, &rules, msg, sizeof msg, &len);
    if (st != DLROUTE_OK) {
        fprintf(stderr, "dlroute_open: %s %.*s\n", dlroute_status_name(st), (int)len, msg);
        return 1;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[n - 1] == '\n') n--;
        size_t need = 0;
        st = ask(rules, line, (size_t)n, NULL, 0, &need);
        char *out = NULL;
        if (st == DLROUTE_TOO_SMALL) {
            out = malloc(need);
            if (out == NULL) return 1;
            st = ask(rules, line, (size_t)n, out, need, &len);
            if (st == DLROUTE_TOO_SMALL || len != need) {
                fprintf(stderr, "the second call wanted %zu bytes, the first said %zu\n", len, need);
                return 1;
            }
        } else {
            len = 0;
        }
        printf("%s %.*s\n", dlroute_status_name(st), (int)len, out ? out : "");
        free(out);
    }
    free(line);
    dlroute_close(rules);
    return 0;
}
