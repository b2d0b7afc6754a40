// Package engine compiles and evaluates dlroute rule sets: the decision of
// which DLPack device an array advertises, written as CEL expressions in
// YAML instead of as code in an array library.
//
// # Rules
//
// A rules directory holds one folder per rule set and version,
// <name>/<version>/ (a name within NamePattern, a version v<N>[.<N>...]),
// each with four files: manifest.yaml (what it is and which upstream
// behaviour it mirrors), device_types.yaml (the DLPack device-type table,
// name to code), rules.yaml (inputs, tables, values and ordered rules) and
// tests.yaml (cases). rules/README.md in the repository
// describes the format. The rule sets dlroute ships are embedded by package
// github.com/dlroute/dlroute/rules.
//
// # Use
//
// Load compiles a directory once into a Catalog; Catalog.RuleSet picks a
// version; RuleSet.Resolve decides inputs, from many goroutines at once:
//
//	cat, err := engine.Load(rules.FS, engine.Options{})
//	rs, err := cat.RuleSet("jax")
//	d, err := rs.Resolve(ctx, engine.Input{"platform": "gpu", "platform_version": "cuda 12030", "local_hardware_id": 0})
//	// d.DeviceType == "kDLCUDA", d.DeviceID == 0, d.Rule == "gpu"
//
// A Decision is a device or an Exception (the BufferError JAX would raise):
// both are answers. Resolve returns an error only when it cannot answer.
//
// # Errors
//
// Every error is an *Error with a stable Code. Load checks every
// expression and refuses the whole directory on any error, returning an
// ErrorList of all of them, each with its position in the file, the line
// and a caret:
//
//	rules/jax/v3/rules.yaml:49:18: rule sharded: when: Syntax error: ...
//	 |     when: shards >> 1
//	 | .................^
//
// # Limits
//
// Limits are on by default: MaxRuleFileSize for a rule file, MaxStringLen
// and MaxListLen for inputs, DefaultCostLimit for the CEL cost of one
// expression (a matches counted by its pattern's compiled program, up to
// MaxRegexInsts instructions, and a pattern that is not a literal refused),
// DefaultMemoSize for the decisions a rule set remembers. The context
// given to Resolve bounds evaluation time: it is checked before each
// expression, and inside a comprehension whose cost may pass
// InterruptAbove.
//
// # Compatibility
//
// The rule format is versioned by the rule sets themselves: a version
// directory, once published, keeps its meaning. Error codes, the JSON form
// of Decision and the CEL library versions (strings v4, optional types v2)
// change only with a new major version of this module.
package engine
