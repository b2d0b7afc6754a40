package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/internal/contract"
)

// maxLineLen is the longest JSON line resolve reads.
const maxLineLen = contract.MaxLineLen

func runResolve(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("resolve")
	rulesDir := rulesFlag(fs)
	ruleset := fs.String("ruleset", "jax", "the rule set `REF`: NAME (its newest version), NAME@VERSION, or NAME==RELEASE (the version for that release of what it mirrors, such as jax==0.10.2)")
	jsonl := fs.Bool("json", false, "read one JSON input object per line on stdin; write one JSON line each")
	inputs := addInputFlags(fs)
	explain := fs.Bool("explain", false, "say how each decision was reached: the rules tried and every value")
	engineKind := engineFlag(fs)
	strict := strictReleaseFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	if !validEngine(*engineKind, stderr) {
		return 2
	}
	given := inputs.given()
	if *jsonl && len(given) > 0 {
		fmt.Fprintf(stderr, "error: --json reads inputs from stdin; it does not mix with input flags (%s)\n", strings.Join(given, " "))
		return 2
	}
	if !*jsonl && !slices.Contains(given, "--platform") {
		fmt.Fprintln(stderr, "error: resolve needs --platform (and usually --platform-version), or --json")
		fmt.Fprintln(stderr, "hint: dlroute resolve --platform gpu --platform-version 'cuda 12030' --local-hardware-id 0")
		return 2
	}

	ctx := context.Background()
	cat, deciders, done, err := openDeciders(ctx, *engineKind, *rulesDir, []string{*ruleset}, *strict, stderr)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	defer done()
	rs := deciders[0]
	if !*jsonl {
		line, _ := json.Marshal(inputs.input())
		if *explain {
			return explainOne(ctx, rs, line, stdout, stderr)
		}
		d, err := rs.ResolveJSON(ctx, line)
		if err != nil {
			native, _ := cat.RuleSet(rs.Ref())
			printError(stderr, inputs.withFlagHint(err, native))
			return 1
		}
		stdout.Write(append(d, '\n'))
		return 0
	}
	if *explain {
		return explainLines(ctx, rs, stdin, stdout)
	}
	return resolveLines(ctx, rs, stdin, stdout)
}

// resolveLines answers each line of r with one line on w, in order: a
// decision, or {"input_error":...} for a line that is not a valid input, or
// {"eval_error":...} when the rules could not decide. A bad line never stops
// the run; the status is then 1.
func resolveLines(ctx context.Context, rs decider, r io.Reader, w io.Writer) int {
	return answerLines(ctx, rs.ResolveJSON, r, w)
}

// answerLines answers each line with decide; see resolveLines.
func answerLines(ctx context.Context, decide func(context.Context, []byte) ([]byte, error), r io.Reader, w io.Writer) int {
	in := bufio.NewReaderSize(r, 64<<10)
	out := bufio.NewWriter(w)
	defer out.Flush()
	status := 0
	for n := 1; ; n++ {
		line, tooLong, err := readLine(in, maxLineLen)
		if err != nil && len(line) == 0 && !tooLong {
			break
		}
		var reply []byte
		if tooLong {
			status = 1
			reply = contract.Line(n, nil, contract.TooLong())
		} else {
			decided, rerr := decide(ctx, line)
			if rerr != nil {
				status = 1
			}
			reply = contract.Line(n, decided, rerr)
		}
		out.Write(reply)
		out.WriteByte('\n')
		// Answer as soon as nothing more is waiting, so that a process
		// talking to dlroute line by line gets each answer in time.
		if in.Buffered() == 0 {
			out.Flush()
		}
		if err != nil {
			break
		}
	}
	return status
}

// readLine reads one line without its "\n" (or "\r\n"). A line longer than
// max is read to its end and dropped, with tooLong set. err is io.EOF after
// the last line.
func readLine(r *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > max+2 {
			tooLong = true
		} else {
			buf = append(buf, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		buf = bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r"))
		if tooLong || len(buf) > max {
			return nil, true, err
		}
		return buf, false, err
	}
}

// writeJSON writes v as one line of JSON, without HTML escaping.
func writeJSON(w io.Writer, v any) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		enc.Encode(map[string]string{"code": "internal", "message": err.Error()})
	}
}
