package live

import (
	"cmp"
	"fmt"
	"github.com/dlroute/dlroute/engine"
	"time"

	"github.com/dlroute/dlroute/bundle"
)

// A sequence's ceiling. A bundle whose sequence is far ahead of the one
// in force, accepted, would put every later bundle before it: each would
// be refused as a rollback, across restarts through the kept file. So a
// sequence is bounded from above too: as a time, by the clock; as a
// counter, by how far it may jump.
const (
	// MinTimeSequence is the least sequence read as a time in Unix
	// seconds (2001-09-09), as `dlroute bundle build` writes by default;
	// a lower one is a counter.
	MinTimeSequence = 1_000_000_000
	// SequenceClockMargin is how far after the clock a sequence that is
	// a time may be: a build machine's clock ahead of the host's, or one
	// set to local time as if it were UTC (up to 14 hours).
	SequenceClockMargin = 24 * time.Hour
	// DefaultMaxSequenceJump is how far ahead of the bundle in force a
	// counter may be when Gate.MaxSequenceJump is 0: ten thousand builds
	// between two that a host sees.
	DefaultMaxSequenceJump = 10_000
)

// CodeSequenceAhead is an AheadError's code.
const CodeSequenceAhead engine.Code = "sequence_ahead" // the candidate's sequence is later than the clock allows, or jumps further than the operator allows

// AheadError is a candidate whose sequence is beyond its ceiling: a
// StageVerify refusal, which Gate.AllowRollback does not lift.
type AheadError struct {
	Code     engine.Code `json:"code"`     // CodeSequenceAhead
	Sequence uint64      `json:"sequence"` // the candidate's
	Ceiling  uint64      `json:"ceiling"`  // the highest it could have been
	// From is the sequence the jump is counted from, for a counter; 0 for
	// a time.
	From uint64 `json:"from,omitempty"`
}

func (e *AheadError) Error() string {
	if e.From != 0 {
		return fmt.Sprintf("the bundle's sequence %d is %d ahead of %d, the one it follows; a counter may jump at most %d (--max-sequence-jump)", e.Sequence, e.Sequence-e.From, e.From, e.Ceiling-e.From)
	}
	return fmt.Sprintf("the bundle's sequence %d, as a time in Unix seconds, is after %d, the clock and a margin of %v: a bundle from the future would put every later one before it", e.Sequence, e.Ceiling, SequenceClockMargin)
}

// SequenceAhead returns why seq is beyond its ceiling, or nil: a time
// (at least MinTimeSequence) more than SequenceClockMargin after now, or
// a counter more than maxJump (0: DefaultMaxSequenceJump) ahead of from,
// the sequence in force (0: none, so no bound).
func SequenceAhead(seq, from uint64, now time.Time, maxJump uint64) *AheadError {
	if seq >= MinTimeSequence {
		ceiling := uint64(max(now.Add(SequenceClockMargin).Unix(), MinTimeSequence))
		if seq > ceiling {
			return &AheadError{Code: CodeSequenceAhead, Sequence: seq, Ceiling: ceiling}
		}
		return nil
	}
	jump := cmp.Or(maxJump, DefaultMaxSequenceJump)
	if from == 0 || from >= seq || seq-from <= jump {
		return nil
	}
	return &AheadError{Code: CodeSequenceAhead, Sequence: seq, Ceiling: from + jump, From: from}
}

// jumped returns why b, a counter, jumps too far ahead of one of the
// bundles it follows, or nil.
func jumped(b *bundle.Bundle, maxJump uint64, bundles ...*placed) *AheadError {
	if b.Manifest.Sequence >= MinTimeSequence {
		return nil // a time: bounded by the clock, in Gate.verify
	}
	for _, p := range bundles {
		if p == nil || p.sequence >= MinTimeSequence {
			continue
		}
		if e := SequenceAhead(b.Manifest.Sequence, p.sequence, time.Time{}, maxJump); e != nil {
			return e
		}
	}
	return nil
}
