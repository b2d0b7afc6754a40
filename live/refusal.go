package live

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
)

// Stage is the step at which a candidate was refused.
type Stage string

// The steps between a source and activation, in order.
const (
	StageFetch   Stage = "fetch"   // the source could not be read: unreachable, an HTTP error, a timeout, too large
	StageVerify  Stage = "verify"  // the archive, a digest or the signature does not check (package bundle)
	StageCompile Stage = "compile" // the rules do not load (engine.Load), or a version has no plan (Plans)
	StageTest    Stage = "test"    // a version's tests.yaml does not pass
	StagePrepare Stage = "prepare" // Gate.Prepare failed, such as loading the rules into the WebAssembly module
)

// Refusal is why a candidate was not activated: the stage, a stable code
// and the reason. The rules in force stay in force. It is the error of
// Check, Offer and Gate.Admit, and what Status and Event report.
type Refusal struct {
	At     time.Time `json:"at"`
	Origin string    `json:"origin"`
	Stage  Stage     `json:"stage"`
	// Code is the cause's stable code: a bundle.Code, an engine.Code, a
	// SourceError's code or a RollbackError's.
	Code engine.Code `json:"code"`
	// Revision is the candidate's, when it got far enough to have one.
	Revision string `json:"revision,omitempty"`
	// Reason is the cause's text; for rules that do not load or pass, the
	// position and code of each of the first maxReasons errors, and never
	// their messages: those quote the rule files (the line, the caret, a
	// value), and Status is served to anyone who asks (serve's
	// /v1/status, its log). Unwrap gives the errors whole, for the
	// operator's own tools.
	Reason string `json:"reason"`

	err error
}

const maxReasons = 5

// Error says what was refused, where and why.
func (r *Refusal) Error() string {
	what := r.Origin
	if r.Revision != "" {
		what += " (revision " + r.Revision + ")"
	}
	return fmt.Sprintf("refused %s at %s: %s", what, r.Stage, r.Reason)
}

// same reports whether o is r again, at another time.
func (r *Refusal) same(o *Refusal) bool {
	return r != nil && o != nil && r.Origin == o.Origin && r.Stage == o.Stage && r.Code == o.Code && r.Revision == o.Revision && r.Reason == o.Reason
}

// Unwrap returns the cause: a *SourceError, a *bundle.Error, a
// *RollbackError, a *StoppedError, an engine.ErrorList, or Gate.Prepare's
// error.
func (r *Refusal) Unwrap() error { return r.err }

func refuse(at time.Time, stage Stage, origin, revision string, err error) *Refusal {
	r := &Refusal{At: at, Origin: origin, Stage: stage, Revision: revision, Code: CodeUncoded, Reason: err.Error(), err: err}
	var se *SourceError
	var be *bundle.Error
	var re *RollbackError
	var ae *AheadError
	var st *StoppedError
	switch list := engine.Errors(err); {
	case errors.As(err, &st):
		r.Code = st.Code
	case errors.As(err, &ae):
		r.Code = ae.Code
	case errors.As(err, &se):
		r.Code = se.Code
	case errors.As(err, &re):
		r.Code = re.Code
	case errors.As(err, &be):
		r.Code = be.Code
	case len(list) > 0:
		r.Code = list[0].Code
		r.Reason = positions(list)
	case stage == StagePrepare:
		r.Code = CodePrepareFailed
	}
	return r
}

// positions is the Reason of rules that do not load or pass: one line
// "file:line:col: code" per error, then where the messages are.
func positions(list engine.ErrorList) string {
	var b strings.Builder
	for _, e := range list[:min(len(list), maxReasons)] {
		if e.Pos != nil {
			b.WriteString(e.Pos.String() + ": ")
		}
		b.WriteString(string(e.Code) + "\n")
	}
	if len(list) > maxReasons {
		fmt.Fprintf(&b, "(and %d more)\n", len(list)-maxReasons)
	}
	b.WriteString("(the messages quote the files and are left out here: 'dlroute lint --rules' on the folder or bundle prints them)")
	return b.String()
}

// Codes of a refusal whose cause has none of its own.
const (
	CodePrepareFailed engine.Code = "prepare_failed" // Gate.Prepare failed (serve --engine wasm: the module refused the rules)
	CodeUncoded       engine.Code = "error"          // any other cause without a code; the reason says what
)

// Codes of a StoppedError.
const (
	// CodeCheckTimeout: compiling, testing and preparing the candidate
	// took longer than Gate.Timeout; the check stopped at the refusal's
	// stage.
	CodeCheckTimeout engine.Code = "check_timeout"
	// CodeCanceled: the check's context ended before its verdict, such
	// as when Rules.Watch saw a newer change, which it checks next.
	CodeCanceled = engine.CodeCanceled
)

// StoppedError is a check that stopped before its verdict: its budget,
// Gate.Timeout, ran out (CodeCheckTimeout), or its context ended
// (CodeCanceled).
type StoppedError struct {
	Code   engine.Code   `json:"code"`
	Stage  Stage         `json:"stage"`            // the step it stopped at
	Budget time.Duration `json:"budget,omitempty"` // Gate.Timeout, for CodeCheckTimeout
	err    error         // the context's cause
}

func (e *StoppedError) Error() string {
	if e.Code == CodeCheckTimeout {
		hint := "a rule that loops over a table for every test case is the usual cause: 'dlroute test --rules' on the folder shows which case is slow"
		if e.Stage == StagePrepare {
			hint = "the engine the host decides with took that long to load the rules and run their tests"
		}
		return fmt.Sprintf("checking the rules took longer than its budget of %v, and stopped at the %s step; %s", e.Budget, e.Stage, hint)
	}
	return fmt.Sprintf("the check stopped at the %s step before its verdict: %v", e.Stage, e.err)
}

// Unwrap returns the context's cause.
func (e *StoppedError) Unwrap() error { return e.err }

// Codes of a SourceError.
const (
	CodeUnreachable engine.Code = "unreachable"         // the connection failed
	CodeTimeout     engine.Code = "timeout"             // the fetch took longer than its timeout
	CodeHTTPStatus  engine.Code = "http_status"         // the server answered neither 200 nor 304
	CodeTooLong                 = engine.CodeTooLong    // the body is longer than the source's limit
	CodeRead                    = engine.CodeRead       // a file or folder could not be read
	CodeNotRegular              = engine.CodeNotRegular // a bundle file is a named pipe, a device, a folder: not a regular file
	// CodeOutsideRoot: a file or folder of a rules directory leads outside
	// it (a link), and is not read.
	CodeOutsideRoot = bundle.CodeOutsideRoot
)

// SourceError is a source that could not be read: a StageFetch refusal.
type SourceError struct {
	Code    engine.Code `json:"code"`
	Message string      `json:"message"`
	err     error
}

func (e *SourceError) Error() string { return e.Message }

// Unwrap returns the cause, if any.
func (e *SourceError) Unwrap() error { return e.err }

// Codes of a RollbackError.
const (
	CodeRollback       engine.Code = "rollback"        // the candidate's sequence is lower than the bundle in force's, or the kept one's at start
	CodeSequenceReused engine.Code = "sequence_reused" // the candidate has the sequence of the bundle in force, or of the kept one, and other content
)

// RollbackError is a candidate ordered before the bundle in force, or
// before the kept bundle at Open, by bundle.Manifest.Sequence: a
// StageVerify refusal, unless Gate.AllowRollback. Its signature may be
// good: an older bundle, replayed, is signed too.
type RollbackError struct {
	Code     engine.Code `json:"code"`     // CodeRollback or CodeSequenceReused
	Sequence uint64      `json:"sequence"` // the candidate's
	// Newer is the sequence of the bundle it is ordered before, whose
	// revision is NewerRevision, and NewerWhere says where that one is:
	// "in force", or "kept in PATH".
	Newer         uint64 `json:"newer"`
	NewerRevision string `json:"newer_revision"`
	NewerWhere    string `json:"newer_where"`
}

func (e *RollbackError) Error() string {
	if e.Code == CodeSequenceReused {
		return fmt.Sprintf("the bundle has sequence %d, as revision %s %s has, and other content: one sequence is one bundle", e.Sequence, e.NewerRevision, e.NewerWhere)
	}
	return fmt.Sprintf("the bundle's sequence %d is older than %d, of revision %s %s: a host does not roll back unless told", e.Sequence, e.Newer, e.NewerRevision, e.NewerWhere)
}
