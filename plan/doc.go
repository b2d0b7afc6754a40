// Package plan holds a compiled decision of one dlroute rule-set version —
// a plan — and evaluates it with no CEL compiler: no cel-go, no protobuf,
// no YAML. The engine (package engine, with cel-go) builds a plan from
// the checked expressions of a version; a host that only decides embeds
// this package and the plan's bytes.
//
// # What a plan holds
//
// A plan is one version's decision: its declared inputs (types,
// defaults), its named values, its rules in order with their outcomes,
// the device-type table, and the versions it imports, resolved and
// embedded. Each expression is a small tree of nodes (constants, inputs,
// values, calls, comprehensions) with the rule file's line and column of
// every node; marker tables and other constants are folded into the tree.
// The bytes start with Magic and FormatVersion and are deterministic: the
// same rules give the same bytes.
//
// # Evaluation
//
// Decode reads a plan; Plan.Decide decides one JSON input line and
// answers the bytes the engine's RuleSet.ResolveJSON answers for it, or an
// *Error with the same code, message, position and hint; Plan.ExplainJSON
// answers RuleSet.ExplainJSON's: the decision, the rules tried, and every
// value with what it evaluated to (or the message it failed with), which
// is why a plan keeps its rules' and values' positions and why its
// failures follow cel-go's message for message. The engine's tests check
// both byte for byte against cel-go on every shipped case, the corpus
// and fuzzed inputs. Evaluation counts its steps against the plan's
// StepLimit (ExplainStepFactor times that for an explanation), derived
// from the rule set's cost bound, so a host needs no timer to bound a
// call. A decision allocates little but the values it makes: its frame
// and its input's fields are a scratch kept between decisions, and an
// input string equal to one of the plan's short constants is that
// constant, because in WebAssembly allocations are much of a decision's
// cost.
//
// # CEL covered
//
// The CEL that the shipped rule sets use: null, bool, int, uint, double,
// string, list and map values; ==, !=, <, <=, >, >=, &&, ||, !, ?:, +
// (strings, lists), * (ints), in, indexing and field selection, size,
// int(), string(), dyn(), the string functions contains, startsWith,
// endsWith, indexOf and split, and the comprehension macros (all, exists,
// exists_one, map, filter). The engine refuses anything else when it
// builds the plan, at the expression's file, line and column.
//
// # Sets of plans
//
// EncodeSet writes several versions' plans as one file and DecodeSet
// reads it: rules/plans.bin (rules.Plans) holds every embedded version's,
// made by `go generate ./rules` (engine.WritePlans) and checked fresh.
//
// # What it links
//
// Decide reads its JSON line with a reader of its own that follows
// encoding/json's scanner, values, messages and offsets alike, and
// formats its messages without fmt: the package imports no encoding/json,
// fmt, reflect, strings or encoding/binary. That kept the decision
// module small while it was this package built by Go for WebAssembly;
// it is now this package ported to C (wasm/decision/src, function for
// function, the same reader, scratch and writer), and the choices stay
// here so that the two read alike. For the same reason a JSON object is
// a sorted slice, not a map, and the functions marked //go:noinline are
// those whose inlined copies each grew the Go build of the module.
//
// # Not yet
//
// The host functions (platform_version, the copier of an exchange) are
// the engine's and the compiler module's only.
package plan
