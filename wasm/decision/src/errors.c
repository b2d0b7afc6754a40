/*
 * Errors: plan/errors.go. A perr is the engine's *Error field for field,
 * so that its text and its JSON are the engine's.
 */
#include "decision.h"

/* code_is_input: Code.Input, whether the code says the input was not
 * valid. */
bool code_is_input(const char *code) {
	static const char *const input[] = {
		CODE_JSON, CODE_UNKNOWN_FIELD, CODE_MISSING_FIELD, CODE_WRONG_TYPE, CODE_TOO_LONG, CODE_INVALID_UTF8,
	};
	for (size_t i = 0; i < sizeof input / sizeof input[0]; i++) {
		if (strcmp(code, input[i]) == 0) {
			return true;
		}
	}
	return false;
}

/* perr_new is &Error{Code: code, Message: message}, in the arena. An
 * arena too full for it traps: the error of a call past ARENA_LIMIT has
 * nowhere to go. */
perr *perr_new(const char *code, str message) {
	perr *e = arena_alloc(sizeof *e);
	if (e == NULL) {
		__builtin_trap();
	}
	e->code = code;
	e->message = message;
	return e;
}

/* plain_file reports whether a file name is valid UTF-8 and printable
 * (Position.String's test): then strconv.Quote escapes only its quotes
 * and backslashes, while it lengthens every other rune it escapes. */
static bool plain_file(str file) {
	uint32_t want = file.n + 2;
	for (uint32_t i = 0; i < file.n; i++) {
		want += file.p[i] == '"' || file.p[i] == '\\';
	}
	return quote(file).n == want;
}

/* position_to: Position.String, file:line:col, leaving out what is
 * unknown, and quoting a file name a terminal would act on. */
static void position_to(buf *w, const position *p) {
	if (plain_file(p->file)) {
		buf_str(w, p->file);
	} else {
		quote_to(w, p->file);
	}
	if (p->line == 0) {
		return;
	}
	buf_byte(w, ':');
	buf_int(w, p->line);
	if (p->column == 0) {
		return;
	}
	buf_byte(w, ':');
	buf_int(w, p->column);
}

/* perr_text: (*Error).Error, "file:line:col: message", then the source
 * line and a caret under the column, in the arena. */
str perr_text(const perr *e) {
	buf w = {0};
	if (e->has_pos) {
		position_to(&w, &e->pos);
		buf_lit(&w, ": ");
	}
	buf_str(&w, e->message);
	if (e->has_pos && e->source.n > 0) {
		buf_lit(&w, "\n | ");
		buf_str(&w, e->source);
		if (e->pos.column > 0) {
			buf_lit(&w, "\n | ");
			/* One mark a rune of the source before the column, as Go
			 * ranges over a string. */
			uint32_t end = e->source.n;
			if ((uint64_t)(e->pos.column - 1) < end) {
				end = (uint32_t)(e->pos.column - 1);
			}
			for (uint32_t i = 0, size; i < end; i += size) {
				buf_byte(&w, utf8_decode_rune(e->source.p + i, end - i, &size) == '\t' ? '\t' : '.');
			}
			buf_byte(&w, '^');
		}
	}
	return buf_done(&w);
}

/* write_error_json: (*Error).AppendJSON, byte for byte what json.Marshal
 * writes for it: {"code":...,"message":...} with "position", "source"
 * and "hint" where set, HTML characters escaped. */
void write_error_json(buf *w, const perr *e) {
	buf_lit(w, "{\"code\":");
	quote_json(w, (str){e->code, (uint32_t)strlen(e->code)}, true);
	buf_lit(w, ",\"message\":");
	quote_json(w, e->message, true);
	if (e->has_pos) {
		buf_lit(w, ",\"position\":{\"file\":");
		quote_json(w, e->pos.file, true);
		buf_lit(w, ",\"line\":");
		buf_int(w, e->pos.line);
		buf_lit(w, ",\"column\":");
		buf_int(w, e->pos.column);
		buf_byte(w, '}');
	}
	if (e->source.n > 0) {
		buf_lit(w, ",\"source\":");
		quote_json(w, e->source, true);
	}
	if (e->hint.n > 0) {
		buf_lit(w, ",\"hint\":");
		quote_json(w, e->hint, true);
	}
	buf_byte(w, '}');
}
