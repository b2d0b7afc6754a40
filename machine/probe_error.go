package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// Codes of a *ProbeError: why a probe did not answer. Like the engine's
// codes they are stable; programs match on them, never on messages.
const (
	CodeNotInstalled  engine.Code = "not_installed"  // a file, directory or command the probe reads is not there
	CodeLoadFailed    engine.Code = "load_failed"    // dlopen failed: the library is missing or broken (the message is dlopen's)
	CodeMissingSymbol engine.Code = "missing_symbol" // the library loads but lacks a function the probe calls
	CodeCallFailed    engine.Code = "call_failed"    // a driver function returned a failure status; the cause is a *CallError
	CodeNoDevices     engine.Code = "no_devices"     // the driver is there and reports no device
	CodeBadOutput     engine.Code = "bad_output"     // a file or command says something the probe cannot read
	CodeCommandFailed engine.Code = "command_failed" // a command ran and failed, or ran past its time
	CodeInternal      engine.Code = "internal"       // a bug in a probe, recovered from
)

// ProbeError says why a probe did not answer, or why NewCUDACopier could
// not load the driver. Its JSON form is {"code","source","message"}.
type ProbeError struct {
	Code engine.Code `json:"code"`
	// Source is what the probe read: a library ("libcuda.so.1"), a file
	// ("/proc/driver/nvidia/version") or a command ("python3").
	Source string `json:"source"`
	// Message says what went wrong, for people.
	Message string `json:"message"`

	err error // the cause, for errors.Is and errors.As
}

// Error formats the error as "source: message".
func (e *ProbeError) Error() string { return e.Source + ": " + e.Message }

// Unwrap returns the cause: a *CallError, an fs error, dlopen's error.
func (e *ProbeError) Unwrap() error { return e.err }

// CallError is a driver function that returned a failure status: a
// CUresult, nvmlReturn_t or ze_result_t.
type CallError struct {
	Library string `json:"library"`               // "libcuda.so.1"
	Call    string `json:"call"`                  // "cuInit"
	Status  int64  `json:"status"`                // the status it returned, such as 100
	Name    string `json:"status_name,omitempty"` // its name in the C header, when known: "CUDA_ERROR_NO_DEVICE"
}

// Error formats the error as "libcuda.so.1: cuInit returned 100
// (CUDA_ERROR_NO_DEVICE)"; a status above 0xffff (Level Zero's) is
// written in hex, as its header does.
func (e *CallError) Error() string { return e.Library + ": " + e.what() }

func (e *CallError) what() string {
	status := fmt.Sprint(e.Status)
	if e.Status > 0xffff {
		status = fmt.Sprintf("%#x", e.Status)
	}
	if e.Name == "" {
		return fmt.Sprintf("%s returned %s", e.Call, status)
	}
	return fmt.Sprintf("%s returned %s (%s)", e.Call, status, e.Name)
}

// callFailed is the ProbeError of a failed driver call; statusNames is
// the library's table of status names.
func callFailed(lib, call string, status int64, statusNames map[int64]string) *ProbeError {
	ce := &CallError{Library: lib, Call: call, Status: status, Name: statusNames[status]}
	return &ProbeError{Code: CodeCallFailed, Source: lib, Message: ce.what(), err: ce}
}

// loadFailed is the ProbeError of a library that dlopen refused.
func loadFailed(lib string, err error) *ProbeError {
	// dlerror already starts with the library's name; say it once.
	msg := strings.TrimPrefix(err.Error(), lib+": ")
	return &ProbeError{Code: CodeLoadFailed, Source: lib, Message: msg, err: err}
}

// fileError is the ProbeError of a file or directory that cannot be read.
func fileError(path string, err error) *ProbeError {
	if errors.Is(err, fs.ErrNotExist) {
		return &ProbeError{Code: CodeNotInstalled, Source: path, Message: "not found", err: err}
	}
	return &ProbeError{Code: CodeBadOutput, Source: path, Message: "cannot read: " + err.Error(), err: err}
}

// Attempt is one probe Probe tried. Its JSON form is {"probe": ...} for a
// probe that answered and {"probe": ..., "error": ..., "code": ...} for
// one that did not; "code" is there when Err is a *ProbeError.
type Attempt struct {
	Probe string // a Probe* constant
	Err   error  // nil: it answered
}

// String formats the attempt as "probe: ok" or "probe: error".
func (a Attempt) String() string {
	if a.Err == nil {
		return a.Probe + ": ok"
	}
	return a.Probe + ": " + a.Err.Error()
}

// MarshalJSON writes the JSON form described on Attempt.
func (a Attempt) MarshalJSON() ([]byte, error) {
	w := struct {
		Probe string      `json:"probe"`
		Error string      `json:"error,omitempty"`
		Code  engine.Code `json:"code,omitempty"`
	}{Probe: a.Probe}
	if a.Err != nil {
		w.Error = a.Err.Error()
		var pe *ProbeError
		if errors.As(a.Err, &pe) {
			w.Code = pe.Code
		}
	}
	return json.Marshal(w)
}
