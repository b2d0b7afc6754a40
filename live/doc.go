// Package live keeps rules in force while they change: a source offers
// candidate versions, each passes a gate, and only then replaces the rules
// in force, by an atomic swap. A candidate that fails any step is refused
// with its reason, and the rules in force keep deciding. It is how
// `dlroute serve` picks up a new marker without a restart, and how an
// editor that reloads rules as they are edited can do the same.
//
// # Sources
//
// Dir watches a rules directory with fsnotify; File watches a bundle file;
// HTTP polls a bundle's URL with If-None-Match; Static offers a fixed
// directory, such as the embedded rules. Any type with Fetch and String is
// a Source; one with Changes too is a Watcher.
//
// # The gate
//
// A candidate is, in order: read as a bundle (a directory is packed into
// one first) with every digest checked, and with Gate.Keys a signature by
// one of them (package bundle); compiled (engine.Load), with every
// version's plan (Plans), and a bundle's plans.bin, when it carries one,
// checked to be what its rules build (BundlePlans, bundle.CodePlansMismatch:
// a snapshot's PlanSet hands hosts those plans); tested (every
// case of every version's tests.yaml); and, with Gate.Prepare, readied for
// another engine. A step that fails refuses it with a *Refusal that names
// the Stage, a stable Code and the reason. Compiling, testing and
// preparing have a budget, Gate.Timeout (DefaultCheckTimeout): past it the
// candidate is refused with CodeCheckTimeout. Watch cancels a check under
// way when a newer change comes, and checks the newest instead; Status
// says which check is under way, since when.
//
// # Use
//
//	r, err := live.Open(ctx, live.Config{Source: live.Dir("rules"), Keep: "/var/cache/dlroute/last-good.tar.gz"})
//	go r.Watch(ctx)
//	s := r.Acquire()             // one snapshot for the whole request
//	defer s.Release()
//	rs, err := s.Catalog().RuleSet("jax")
//	d, err := rs.Resolve(ctx, in) // d.RuleSet and s.Revision() name what decided
//
// Open serves the bundle kept by the last activation (Config.Keep) when
// the source has nothing that passes the gate at start. Status says what
// is in force, the last check and the last refusal; Config.Observe is told
// of every activation and refusal, for logs and metrics. Offer puts a
// candidate from elsewhere (an editor's buffer) through the same gate.
//
// # Guarantees
//
// A snapshot is immutable; a request that acquires one is answered by one
// version, whole. Swaps are atomic and happen only after every step
// passed; checks run one at a time. A snapshot's Attached is closed once
// it is replaced and released by every holder.
package live
