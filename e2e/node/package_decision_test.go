package node

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/build/wasmbuild"
	"github.com/dlroute/dlroute/internal/contract"
	"github.com/dlroute/dlroute/internal/testkit/corpus"
	"github.com/dlroute/dlroute/internal/testkit/testenv"
	"github.com/dlroute/dlroute/rules"
	decisionwasm "github.com/dlroute/dlroute/wasm/decision"
)

// TestPackageDecidesTheCorpus: the Node.js package's default engine, which
// decides the embedded rules with the decision module and rules/plans.bin,
// answers every version's corpus (internal/testkit/corpus) byte for byte as
// `dlroute resolve --json` does natively, with no compiler module: the
// script (wasm/node/test/corpus.mjs) runs with $DLROUTE_WASM naming a
// file that does not exist, so any call that reached for the compiler
// module would fail.
func TestPackageDecidesTheCorpus(t *testing.T) {
	testenv.Short(t, "the corpus through the Node.js package's decision module")
	node, module, _ := decisionFiles(t)
	lines := corpus.Load(t, repoRoot)
	exceptions := corpus.ReadExceptions(t, repoRoot)

	var stdin bytes.Buffer
	enc := json.NewEncoder(&stdin)
	for _, c := range lines {
		enc.Encode(map[string]string{"ref": c.Ref, "stdin": base64.StdEncoding.EncodeToString(c.Stdin())})
	}
	cmd := exec.Command(node, filepath.Join("test", "corpus.mjs"))
	cmd.Dir = packageDir
	cmd.Env = append(os.Environ(), decisionwasm.EnvModule+"="+module, wasmbuild.EnvModule+"="+filepath.Join(t.TempDir(), "no-compiler.wasm"))
	cmd.Stdin = &stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("node test/corpus.mjs: %v\n%s", err, stderr.String())
	}
	got := map[string]corpus.Answers{}
	dec := json.NewDecoder(&stdout)
	for dec.More() {
		var a struct {
			Ref    string `json:"ref"`
			Stdout string `json:"stdout"`
			Status int    `json:"status"`
		}
		if err := dec.Decode(&a); err != nil {
			t.Fatalf("node test/corpus.mjs: %v", err)
		}
		got[a.Ref] = corpus.SplitAnswers([]byte(a.Stdout), a.Status)
	}

	cat, err := engine.Load(rules.FS, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	used := corpus.Used{}
	for _, c := range lines {
		t.Run(c.Ref, func(t *testing.T) {
			a, ok := got[c.Ref]
			if !ok {
				t.Fatalf("node test/corpus.mjs gave no answers for %s", c.Ref)
			}
			corpus.Compare(t, "node", c, nativeAnswers(t, cat, c), a, used, exceptions)
		})
	}
	corpus.CheckUsed(t, "node", lines, used, exceptions)
}

// nativeAnswers is what `dlroute resolve --json --ruleset REF` writes for
// c's lines, made in this process as the command makes it: each line
// without its "\r", one over contract.MaxLineLen refused unread.
func nativeAnswers(t *testing.T, cat *engine.Catalog, c corpus.RuleSet) corpus.Answers {
	t.Helper()
	rs, err := cat.RuleSet(c.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var a corpus.Answers
	for n, l := range c.Lines {
		line := bytes.TrimSuffix(l.Data, []byte("\r"))
		var out []byte
		err := error(contract.TooLong())
		if len(line) <= contract.MaxLineLen {
			out, err = rs.ResolveJSON(context.Background(), line)
		}
		if err != nil {
			a.Status = 1
		}
		a.Lines = append(a.Lines, contract.Line(n+1, out, err))
	}
	return a
}
