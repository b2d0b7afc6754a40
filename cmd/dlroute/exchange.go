package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/atomicfile"
	"github.com/dlroute/dlroute/machine"
	"github.com/dlroute/dlroute/wasmhost"
)

// copier makes the copies into host memory that exchange carries out,
// natively and for the module's copy_to_host. The buffer file is in this
// process's memory, so the host copier is the copy a host runs for
// host-reachable memory; tests replace it with copiers that fail.
var copier machine.Copier = machine.HostCopier{}

// exchangeOutput is what exchange prints: the decision, the source buffer,
// and the buffer exported (null for an exception).
type exchangeOutput struct {
	Decision json.RawMessage `json:"decision"`
	Source   sourceBuffer    `json:"source"`
	Buffer   *exportedBuffer `json:"buffer"`
}

type sourceBuffer struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// exportedBuffer is the buffer a consumer gets: the source's bytes in
// place, or a copy (copied) in host memory.
type exportedBuffer struct {
	DeviceType     string   `json:"device_type"`
	DeviceTypeCode int32    `json:"device_type_code"`
	DeviceID       int32    `json:"device_id"`
	Size           int64    `json:"size"`
	SHA256         string   `json:"sha256"`
	Copied         bool     `json:"copied"`
	Flags          []string `json:"flags"`
}

// runExchange carries out one exchange for the bytes of --buffer. Exit
// status: 0 when the decision was carried out, or is an exception the
// rules decided (it is printed, with "buffer":null); 1 when it could not
// be carried out (a file that cannot be read or is empty, an input the
// rules refuse, a copy that failed or that no copier here makes, --out
// not written); 2 for a usage error.
func runExchange(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlags("exchange")
	rulesDir := rulesFlag(fs)
	ruleset := fs.String("ruleset", "exchange", "the rule set `REF`: NAME (its newest version), NAME@VERSION, or NAME==RELEASE (the version for that release of what it mirrors, such as jax==0.10.2)")
	bufferPath := fs.String("buffer", "", "the array's bytes: `FILE` stands for the array on the device the input describes; it is only read")
	outPath := fs.String("out", "", "write the copy's bytes to `FILE` when the decision copies (through a temporary file, renamed once complete)")
	inputJSON := fs.String("input", "", "the input as one JSON `OBJECT`, as a line of resolve --json, instead of input flags")
	inputs := addInputFlags(fs)
	engineKind := engineFlag(fs)
	strict := strictReleaseFlag(fs)
	if status, ok := parseFlags(fs, args, stdout, stderr); !ok {
		return status
	}
	if !validEngine(*engineKind, stderr) {
		return 2
	}
	if status, ok := checkExchangeFlags(*bufferPath, *outPath, *inputJSON, inputs.given(), stderr); !ok {
		return status
	}
	data, err := readBuffer(*bufferPath)
	if err != nil {
		printExchangeError(stderr, err)
		return 1
	}
	line := []byte(*inputJSON)
	if len(line) == 0 {
		line, _ = json.Marshal(inputs.input())
	}

	ctx := context.Background()
	cat, deciders, done, err := openDeciders(ctx, *engineKind, *rulesDir, []string{*ruleset}, *strict, stderr)
	if err != nil {
		printError(stderr, err)
		return 1
	}
	defer done()
	src := machine.Buffer{DeviceType: machine.DeviceCPU, Data: data, Size: int64(len(data))}
	res, err := deciders[0].Exchange(ctx, line, src)
	if err != nil {
		if *inputJSON == "" { // the input came from flags: name the flag a missing field takes
			native, _ := cat.RuleSet(deciders[0].Ref())
			err = inputs.withFlagHint(err, native)
		}
		printExchangeError(stderr, err)
		return 1
	}
	if res.Buffer != nil && res.Decision.Copy && *outPath != "" {
		if err := atomicfile.WriteFile(*outPath, 0o644, res.Buffer.Data); err != nil {
			printExchangeError(stderr, &engine.Error{Code: engine.CodeRead, Message: "writing the copy: " + err.Error(),
				Hint: "nothing was written to " + *outPath + "; --out takes a file in a directory that exists and is writable"})
			return 1
		}
	}
	decision, _ := res.Decision.MarshalJSON()
	writeJSON(stdout, exchangeOutput{Decision: decision, Source: sourceBuffer{src.Size, digest(data)}, Buffer: exported(res)})
	return 0
}

// checkExchangeFlags reports what the flags leave out or get wrong as a
// usage error.
func checkExchangeFlags(buffer, out, input string, given []string, stderr io.Writer) (int, bool) {
	switch {
	case buffer == "":
		fmt.Fprintln(stderr, "error: exchange needs --buffer FILE, the bytes of the array")
		fmt.Fprintln(stderr, "hint: dlroute exchange --buffer array.bin --platform gpu --platform-version '<unknown>' --local-hardware-id 0 --max-version 1,1")
	case input != "" && len(given) > 0:
		fmt.Fprintf(stderr, "error: --input gives the whole input; it does not mix with input flags (%s)\n", strings.Join(given, " "))
		fmt.Fprintln(stderr, "hint: put every field in the --input object, or use only input flags")
	case input == "" && !slices.Contains(given, "--platform"):
		fmt.Fprintln(stderr, "error: exchange needs --platform (and usually --platform-version), or --input JSON")
		fmt.Fprintln(stderr, "hint: dlroute exchange --buffer array.bin --platform gpu --platform-version 'cuda 12030' --local-hardware-id 0")
	case out != "" && sameFile(buffer, out):
		fmt.Fprintf(stderr, "error: --out %s is the --buffer file; the source is never written\n", out)
		fmt.Fprintln(stderr, "hint: give --out another file")
	default:
		return 0, true
	}
	return 2, false
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// readBuffer reads the buffer file: it must hold at least one byte.
func readBuffer(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &engine.Error{Code: engine.CodeRead, Message: "reading the buffer: " + err.Error(),
			Hint: "--buffer takes a file whose bytes stand for the array"}
	}
	if len(data) == 0 {
		return nil, &engine.Error{Code: engine.CodeRead, Message: fmt.Sprintf("the buffer %s is empty", path),
			Hint: "--buffer takes a file whose bytes stand for the array, at least one byte"}
	}
	return data, nil
}

// exported is the buffer of a result, as printed.
func exported(res wasmhost.ExchangeResult) *exportedBuffer {
	b := res.Buffer
	if b == nil {
		return nil
	}
	flags := res.Decision.Flags.Names()
	if flags == nil {
		flags = []string{}
	}
	return &exportedBuffer{DeviceType: res.Decision.DeviceType, DeviceTypeCode: b.DeviceType, DeviceID: b.DeviceID,
		Size: b.Size, SHA256: digest(b.Data), Copied: res.Decision.Copy, Flags: flags}
}

func digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// printExchangeError prints an *wasmhost.ExchangeError with its hint, and
// any other error as printError does.
func printExchangeError(w io.Writer, err error) {
	var xe *wasmhost.ExchangeError
	if !errors.As(err, &xe) {
		printError(w, err)
		return
	}
	fmt.Fprintf(w, "error: %s\n", xe.Message)
	if xe.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", xe.Hint)
	}
}
