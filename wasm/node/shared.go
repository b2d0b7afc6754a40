// Package node is, for Node.js, the dlroute package in this directory
// (index.mjs; README.md shows its use). For Go it holds one thing: the ES
// modules of that package that the browser playground runs as well, so
// that every JavaScript host speaks the ABI through the same code.
package node

import "embed"

// Shared holds the modules that run in the browser as in Node.js, each
// importing only the others: client.js, the client of the compiler
// module's ABI (wasm/ABI.md); decision.js, the client of the decision
// module's (wasm/decision/ABI.md) and the reader of a set of plans;
// archive.js, the rules-archive encoder; and errors.js, the errors they
// throw. Package playground serves them beside the page's own modules,
// under the same names.
//
//go:embed client.js archive.js decision.js errors.js
var Shared embed.FS
