package engine

import "context"

// The JSON line contract. `dlroute resolve --json` reads one input object
// per line and writes one line for each; every host (the command line,
// serve, the WebAssembly guest, the C library) decides a line through
// these methods, and answers it through internal/contract, which owns the
// line limit, the memo and the error line, so that the bytes are the
// same everywhere.

// ResolveJSON decides one JSON input object (a line of `dlroute resolve
// --json` without its newline) and returns the decision's JSON, byte for
// byte the line resolve --json writes for it. An input that is not valid
// for the rule set is an *Error whose Code.Input() is true; an
// evaluation that could not decide is any other *Error.
func (rs *RuleSet) ResolveJSON(ctx context.Context, line []byte) ([]byte, error) {
	in, err := rs.DecodeInput(line)
	if err != nil {
		return nil, err
	}
	d, err := rs.Resolve(ctx, in)
	if err != nil {
		return nil, err
	}
	return d.MarshalJSON()
}

// ExplainJSON decides one JSON input object as ResolveJSON does and
// returns the JSON of its Explanation: the decision and how it was
// reached. Errors are ResolveJSON's.
func (rs *RuleSet) ExplainJSON(ctx context.Context, line []byte) ([]byte, error) {
	in, err := rs.DecodeInput(line)
	if err != nil {
		return nil, err
	}
	x, err := rs.Explain(ctx, in)
	if err != nil {
		return nil, err
	}
	return x.MarshalJSON()
}
