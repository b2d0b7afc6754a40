package interop

import (
	"strings"

	"github.com/dlroute/dlroute/engine"
)

// The four calls of an exchange, as the rule sets' input `call` names them.
const (
	CallDevice  = "__dlpack_device__" // the producer's x.__dlpack_device__()
	CallExport  = "__dlpack__"        // the producer's x.__dlpack__(**kwargs)
	CallRequest = "request"           // what the consumer's from_dlpack asks __dlpack__
	CallImport  = "from_dlpack"       // the consumer's import of the capsule
)

// Outcome is what an exchange comes to.
type Outcome string

const (
	InPlace      Outcome = "in_place"      // the consumer's array shares the producer's memory
	ProducerCopy Outcome = "producer_copy" // the producer's __dlpack__ copied, and exported the copy
	ConsumerCopy Outcome = "consumer_copy" // the consumer copied after the import
	BothCopy     Outcome = "both_copy"     // each copied once
	Raises       Outcome = "error"         // an exception reaches the user
)

// Step is one question asked of one rule set, and its answer.
type Step struct {
	// Call is one of CallDevice, CallExport, CallRequest, CallImport.
	Call string `json:"call"`
	// Attempt is 1, or 2 for the consumer's second try after a TypeError
	// (a request and the __dlpack__ it asks for).
	Attempt int `json:"attempt"`
	// Input is what the rule set was asked, as it declares its inputs
	// (those left out have their defaults).
	Input engine.Input `json:"input"`
	// Keywords and Kwargs are, for a request that calls __dlpack__, the
	// keywords it passes in order and their values: the rule set's
	// request_keywords and request_kwargs.
	Keywords []string       `json:"keywords,omitempty"`
	Kwargs   map[string]any `json:"kwargs,omitempty"`
	// Decision is the answer, with the rule and the version that decided.
	Decision engine.Decision `json:"decision"`
}

// Cell is one exchange decided: one producer's array into one consumer.
type Cell struct {
	Producer string  `json:"producer"` // the producer's ref, such as "jax@v3"
	Consumer string  `json:"consumer"` // the consumer's ref, such as "numpy@v2"
	Array    Array   `json:"array"`
	Outcome  Outcome `json:"outcome"`
	// Error is the exception the user sees when Outcome is Raises: the
	// last step's.
	Error *engine.Exception `json:"error,omitempty"`
	// Device is the device of the consumer's array, unless Outcome is
	// Raises.
	Device *Device `json:"device,omitempty"`
	// Steps are the calls made, in order; the last one decided the cell.
	Steps []Step `json:"steps"`
	// Checked says what each side's versions were checked against.
	Checked Checked `json:"checked"`
	// Lane is how the consumer reached the producer's array: LaneDLPack or
	// LaneCExchange.
	Lane Lane `json:"lane"`
	// OtherLane is the outcome by the other lane where it differs from
	// Outcome (a producer that exposes the C exchange API to a consumer
	// that could take either); "" where it does not differ or there is no
	// other lane.
	OtherLane Outcome `json:"other_lane,omitempty"`
	// Remedy is, for a cell that raises or reads silently different
	// values, the first fix a user applies that makes the exchange cross,
	// checked by deciding it again with the fix; nil where it crosses, or
	// where no fix the rules know of does.
	Remedy *Remedy `json:"remedy,omitempty"`
}

// Lane is the way a consumer reads a producer's array.
type Lane string

const (
	// LaneDLPack is the Python lane: the consumer calls x.__dlpack__ and
	// reads the capsule.
	LaneDLPack Lane = "dlpack"
	// LaneCExchange is DLPack 1.3's C lane: the consumer calls the C
	// exchange API that type(x) exposes (__dlpack_c_exchange_api__).
	LaneCExchange Lane = "c_exchange_api"
)

// Remedy is a fix for an exchange that raises or reads silently different
// values, in the words of the library whose call it changes.
type Remedy struct {
	// Kind names the fix: one of the Remedy* kinds (remedy.go), such as
	// "contiguous", "copy" or "host_copy".
	Kind string `json:"kind"`
	// Fix is the fix as the user writes it, such as "x.contiguous()" or
	// "np.from_dlpack(x, copy=True)".
	Fix string `json:"fix"`
	// Outcome is what the exchange comes to with the fix applied.
	Outcome Outcome `json:"outcome"`
}

// Device is a DLPack device: its type's name and code, and its id.
type Device struct {
	Type string `json:"device_type"`
	Code int64  `json:"device_type_code"`
	ID   int64  `json:"device_id"`
}

// Short is the cell as a person reads it in a table: "in place", "copy
// (producer)", "copy (consumer)", "copy (both)", or the exception as
// "Type: message" (the type alone for an empty message), cut to at most width runes (width 0: not cut). A
// message's lines are joined by spaces. The cut is in the middle, marked
// "…", keeping the last third: a message ends in what it quotes (the
// platform_version, the device type code).
func (c Cell) Short(width int) string {
	var s string
	switch c.Outcome {
	case InPlace:
		s = "in place"
	case ProducerCopy:
		s = "copy (producer)"
	case ConsumerCopy:
		s = "copy (consumer)"
	case BothCopy:
		s = "copy (both)"
	default:
		s = c.Error.Type
		if c.Error.Message != "" {
			s += ": " + strings.Join(strings.Fields(c.Error.Message), " ")
		}
	}
	r := []rune(s)
	if width > 0 && len(r) > width {
		tail := (width - 1) / 3
		return string(r[:width-1-tail]) + "…" + string(r[len(r)-tail:])
	}
	return s
}

// Decider is the step that decided the cell: the last one.
func (c Cell) Decider() Step { return c.Steps[len(c.Steps)-1] }
