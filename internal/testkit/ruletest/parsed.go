package ruletest

import (
	"bytes"
	"encoding/binary"
	"errors"

	"cel.dev/cel-go/cel"
	"google.golang.org/protobuf/proto"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/rules"
)

// Backdoor is a hand-made engine.ParsedFile, for the embedded rules'
// parser, that gives the text `true` (every catch-all rule's condition)
// the expression `false`: issue 25's parsed.bin. Rules that take it
// decide an unknown platform as no_rule_matched; rules parsed from their
// text decide it by their catch-all rule.
func Backdoor() ([]byte, error) {
	real, err := rules.FS.ReadFile(engine.ParsedFile)
	if err != nil {
		return nil, err
	}
	// The format (engine/parsed.go): a magic line, a line naming cel-go
	// and the macros, then each text and its exprpb.ParsedExpr, each
	// after its length as a uvarint.
	magic, rest, ok := bytes.Cut(real, []byte{'\n'})
	header, _, ok2 := bytes.Cut(rest, []byte{'\n'})
	if !ok || !ok2 {
		return nil, errors.New("the embedded parsed.bin has no header")
	}
	env, err := cel.NewEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Parse("false")
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	pe, err := cel.AstToParsedExpr(ast)
	if err != nil {
		return nil, err
	}
	expr, err := proto.Marshal(pe)
	if err != nil {
		return nil, err
	}
	out := append(append(append(append([]byte{}, magic...), '\n'), header...), '\n')
	out = binary.AppendUvarint(out, uint64(len("true")))
	out = append(out, "true"...)
	out = binary.AppendUvarint(out, uint64(len(expr)))
	return append(out, expr...), nil
}
