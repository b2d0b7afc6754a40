package main

import (
	"fmt"
	"io"
	"os"
)

// isTerminal reports whether w is a terminal, where progress is shown:
// a character device, so not a pipe, a file or a test's buffer. (So is
// /dev/null, where progress does no harm.)
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// progressLine is a func for engine.DiffOptions.Progress that keeps one
// line on the terminal w up to date, "what: 647,040 of 1,439,424 inputs
// (44%)", and erases it once every input is done, before the report.
func progressLine(w io.Writer, what string) func(done, total int) {
	return func(done, total int) {
		if done >= total {
			fmt.Fprint(w, "\r\033[K")
			return
		}
		fmt.Fprintf(w, "\r%s: %s of %s inputs (%d%%)\033[K", what, thousands(done), thousands(total), int(int64(done)*100/int64(total)))
	}
}

// thousands writes n with commas between its groups of three digits.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
