/*
 * The call arena and the byte buffers built in it. Ports nothing of
 * package plan: Go's collector frees a call's values; here they all come
 * from one arena that module.c resets at the start of each call, so a
 * call frees everything it made at once and never leaks.
 *
 * The arena is a list of malloc'd chunks. The first is kept across
 * resets (most calls fit in it, so a call usually mallocs nothing);
 * the others are freed at the reset. A call may take at most
 * ARENA_LIMIT bytes; past it arena_alloc returns NULL.
 */
#include <stdlib.h>

#include "decision.h"

/* FIRST_CHUNK is the first chunk's room: a decision of the shipped rule
 * sets, its input's values and its answer, fits many times over. */
#define FIRST_CHUNK (64u << 10)

typedef struct chunk chunk;
struct chunk {
	chunk *next; /* the chunk allocated before this one */
	size_t cap;
	/* the bytes follow, 8-aligned (the header is 8 or 16 bytes) */
	uint64_t data[];
};

static chunk *first;  /* kept across resets */
static chunk *cur;    /* where allocation happens: first, or the newest */
static size_t used;   /* bytes of cur in use */
static size_t total;  /* bytes handed out in this call */
static char *last;    /* the last allocation, which buf_grow may extend */

static chunk *chunk_new(size_t cap, chunk *next) {
	chunk *c = malloc(sizeof(chunk) + cap);
	if (c == NULL) {
		return NULL;
	}
	c->next = next;
	c->cap = cap;
	return c;
}

void *arena_alloc(size_t n) {
	size_t need = (n + 7) & ~(size_t)7;
	if (need < n || need > ARENA_LIMIT || total + need > ARENA_LIMIT) {
		return NULL;
	}
	if (cur == NULL) {
		if (first == NULL && (first = chunk_new(FIRST_CHUNK, NULL)) == NULL) {
			return NULL;
		}
		cur = first;
		used = 0;
	}
	if (cur->cap - used < need) {
		/* A new chunk twice the last, or as large as the request. */
		size_t cap = cur->cap * 2;
		if (cap < need) {
			cap = need;
		}
		if (cap > ARENA_LIMIT) {
			cap = ARENA_LIMIT;
		}
		chunk *c = chunk_new(cap, cur);
		if (c == NULL) {
			return NULL;
		}
		cur = c;
		used = 0;
	}
	char *p = (char *)cur->data + used;
	used += need;
	total += need;
	memset(p, 0, n);
	last = p;
	return p;
}

void arena_reset(void) {
	while (cur != NULL && cur != first) {
		chunk *next = cur->next;
		free(cur);
		cur = next;
	}
	used = 0;
	total = 0;
	last = NULL;
}

/* arena_extend grows the last allocation, p of n bytes, to m bytes in
 * place where its chunk has room: a buffer that grows as it is written,
 * as answers are, then costs no copy. */
static bool arena_extend(char *p, size_t n, size_t m) {
	size_t have = (n + 7) & ~(size_t)7, need = (m + 7) & ~(size_t)7;
	if (p == NULL || p != last || need < m || need - have > ARENA_LIMIT - total ||
	    (size_t)(p - (char *)cur->data) + need > cur->cap) {
		return false;
	}
	memset(p + n, 0, m - n);
	used += need - have;
	total += need - have;
	return true;
}

str arena_str(const char *p, uint32_t n) {
	char *q = arena_alloc(n);
	if (q == NULL) {
		__builtin_trap(); /* a call past ARENA_LIMIT in strings alone */
	}
	if (n > 0) {
		memcpy(q, p, n);
	}
	return (str){q, n};
}

/* ---- buf --------------------------------------------------------------- */

/* buf_grow makes room for more bytes: in place when the buffer is the
 * arena's last allocation, else in a copy twice as large. A buffer the
 * arena cannot hold traps: no answer comes near ARENA_LIMIT (a
 * decision's and an explanation's size are bounded by the steps). */
static void buf_grow(buf *w, uint32_t more) {
	uint64_t want = (uint64_t)w->n + more;
	if (want > ARENA_LIMIT) {
		__builtin_trap();
	}
	uint64_t cap = (uint64_t)w->cap * 2;
	if (cap < 64) {
		cap = 64;
	}
	if (cap < want) {
		cap = want;
	}
	if (cap > ARENA_LIMIT) {
		cap = ARENA_LIMIT;
	}
	if (arena_extend(w->b, w->cap, cap)) {
		w->cap = (uint32_t)cap;
		return;
	}
	char *b = arena_alloc(cap);
	if (b == NULL) {
		__builtin_trap();
	}
	if (w->n > 0) {
		memcpy(b, w->b, w->n);
	}
	w->b = b;
	w->cap = (uint32_t)cap;
}

void buf_byte(buf *w, char c) {
	if (w->n == w->cap) {
		buf_grow(w, 1);
	}
	w->b[w->n++] = c;
}

void buf_bytes(buf *w, const char *p, uint32_t n) {
	if (n == 0) {
		return;
	}
	if (w->cap - w->n < n) {
		buf_grow(w, n);
	}
	memcpy(w->b + w->n, p, n);
	w->n += n;
}

void buf_lit(buf *w, const char *lit) { buf_bytes(w, lit, (uint32_t)strlen(lit)); }

void buf_str(buf *w, str s) { buf_bytes(w, s.p, s.n); }

void buf_uint(buf *w, uint64_t v) {
	char d[20];
	int i = sizeof d;
	do {
		d[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	buf_bytes(w, d + i, (uint32_t)(sizeof d - i));
}

void buf_int(buf *w, int64_t v) {
	if (v < 0) {
		buf_byte(w, '-');
		buf_uint(w, -(uint64_t)v); /* INT64_MIN too */
		return;
	}
	buf_uint(w, (uint64_t)v);
}

str buf_done(buf *w) { return (str){w->b, w->n}; }

int str_cmp(str a, str b) {
	uint32_t n = a.n < b.n ? a.n : b.n;
	int c = n == 0 ? 0 : memcmp(a.p, b.p, n);
	if (c != 0) {
		return c < 0 ? -1 : 1;
	}
	return a.n < b.n ? -1 : a.n > b.n ? 1 : 0;
}
