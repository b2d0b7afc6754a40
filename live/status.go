package live

import (
	"time"
)

// Status is what Rules.Status reports: the rules in force, the check
// under way, the last check of the source and the last refusal. Its JSON
// is serve's /v1/status.
type Status struct {
	Source string  `json:"source"`
	Active *Active `json:"active,omitempty"`
	// Checking is the check under way, if one is: a candidate that may
	// replace Active once it passes.
	Checking    *Checking `json:"checking,omitempty"`
	LastCheck   *Check    `json:"last_check,omitempty"`
	LastRefusal *Refusal  `json:"last_refusal,omitempty"`
	Activations int       `json:"activations"`
	Refusals    int       `json:"refusals"`
	KeepError   string    `json:"keep_error,omitempty"` // why the last activation could not be kept on disk
	Kept        string    `json:"kept,omitempty"`       // the file the last good bundle is kept in
	Started     time.Time `json:"started"`
}

// Active describes the snapshot in force.
type Active struct {
	Revision    string    `json:"revision"`
	Sequence    uint64    `json:"sequence,omitempty"` // the bundle's order; absent when unordered
	Digest      string    `json:"digest"`
	RuleSets    []string  `json:"rulesets"`
	SignedBy    []string  `json:"signed_by,omitempty"`
	Origin      string    `json:"origin"`
	Kept        bool      `json:"kept"`             // restored from the kept bundle at start
	KeptAt      time.Time `json:"kept_at,omitzero"` // when that bundle was kept
	ActivatedAt time.Time `json:"activated_at"`
}

// Checking is a check under way.
type Checking struct {
	Origin string `json:"origin"` // the source, or where an offered candidate came from
	// Revision is the candidate's, once it has been read; "" before.
	Revision string    `json:"revision,omitempty"`
	Since    time.Time `json:"since"`
	// Deadline is when its budget (Gate.Timeout) runs out, once it is
	// compiled and tested; zero before.
	Deadline time.Time `json:"deadline,omitzero"`
}

// Check is the outcome of one look at the source.
type Check struct {
	At      time.Time `json:"at"`
	Outcome Outcome   `json:"outcome"`
	Seconds float64   `json:"seconds"` // how long the check took
}

// Outcome is what one check or offer came to.
type Outcome string

// Outcomes of a check.
const (
	Activated Outcome = "activated" // a new snapshot is in force
	Unchanged Outcome = "unchanged" // the source offered what is in force, or said it had nothing new
	Refused   Outcome = "refused"   // the candidate was refused; the rules in force stay
	// Canceled: the check stopped before its verdict, because a newer
	// change came (Watch checks that one next) or the host is stopping;
	// nothing was refused, and the rules in force stay.
	Canceled Outcome = "canceled"
)

// Event is one thing that happened to the rules, for Config.Observe:
// logs and metrics.
type Event struct {
	At      time.Time
	Outcome Outcome       // Activated, Unchanged, Refused or Canceled; "" for the failures below
	Took    time.Duration // the check's time
	// Snapshot is the snapshot activated (Activated), or the one in force
	// that the source offered again (Unchanged; nil when the source said
	// it had nothing new, as an HTTP 304 does). After a refusal, an
	// Unchanged event with a Snapshot says the source is back to the
	// rules in force.
	Snapshot *Snapshot
	// Refusal is why a candidate was refused (Refused), or where its
	// check stopped (Canceled: a *StoppedError with CodeCanceled).
	Refusal *Refusal
	// Repeated is set on a refusal the same as the check before's, but
	// for its time: the source still offers what was refused, as a folder
	// left broken does at every poll.
	Repeated bool
	// KeepError is set when an activated bundle could not be kept on
	// disk; the activation stands.
	KeepError error
	// Rollback is set on an activation that Gate.AllowRollback let
	// through: why it would have been refused.
	Rollback *RollbackError
	// WatchError is set when the source's change notifications failed;
	// the source is still checked every Config.Interval.
	WatchError error
}

func activeOf(s *Snapshot) *Active {
	if s == nil {
		return nil
	}
	m := s.Manifest()
	return &Active{Revision: m.Revision, Sequence: m.Sequence, Digest: s.Digest(), RuleSets: m.RuleSets, SignedBy: s.SignedBy(),
		Origin: s.origin, Kept: s.kept, KeptAt: s.keptAt, ActivatedAt: s.activated}
}
