// Package wasmhost runs the dlroute WebAssembly module with wazero: a
// compiled Module and its Runners (a pool of instances that load the
// rules once and decide from many goroutines), the "dlroute_host"
// functions the module imports (what a Host does for it), and RuleSet, a
// rule set of the module that answers as engine.RuleSet does, byte for
// byte.
//
// # Deadlines
//
// A call into the module ends at its deadline, the caller's context's or
// RunnerConfig.CallTimeout's, wherever the guest is: the runtime checks
// at every loop (wazero's WithCloseOnContextDone), the call answers
// engine.CodeCanceled, and the runner replaces the stopped instance.
//
// # Host functions
//
// platform_version answers the module's question about a device from
// Host.PlatformVersion (machine.PlatformVersion reads the real
// machine); copy_to_host carries out an exchange's copy with Host.Copier
// (package machine's copiers). Both check every guest-memory access and
// return a status; neither panics on what the guest passes.
//
// # Exchanges
//
// RuleSet.Exchange decides an exchange in the module and carries it out
// for a Buffer; CarryOut does the same for a decision of the native
// engine, with the same results and errors (ExchangeError, whose codes
// are those of ERRORS.md).
package wasmhost
