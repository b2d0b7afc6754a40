// Package interop decides what happens when one array library's array is
// handed to another's from_dlpack: the four calls of an exchange, each
// asked of the rule set of the library that makes it, chained as
// rules/README.md ("Libraries on both sides") describes:
//
//	consumer request            what from_dlpack(x, copy=) passes to x.__dlpack__
//	producer __dlpack_device__  only when the consumer calls it first (torch does)
//	producer __dlpack__         the capsule, or the exception; again after a
//	                            TypeError when the consumer tries again
//	consumer from_dlpack        the array made from the capsule
//
// The first exception is what the user sees. Otherwise the exchange is in
// place, or a copy made by the producer (its __dlpack__ decided copy) or
// by the consumer (its from_dlpack did).
//
// A cell that raises, or reads values silently different from the
// producer's, carries its remedy (FindRemedy): the cheapest fix a user
// applies, found by deciding the exchange again with the fix. CatchSet
// gathers the exception types one library's arrays can raise in another's
// from_dlpack over every version of both. Every cell crosses by
// x.__dlpack__ (LaneDLPack); a producer's type that also exposes DLPack
// 1.3's C exchange API says so (Producer.CExchange), a lane no consumer
// here reads.
//
// # Libraries
//
// A producer or consumer is a rule set that declares the input `call` and
// answers the four calls (numpy, torch, cupy). JAX answers through three
// rule sets, paired by release: as a producer, jax for __dlpack_device__
// and jax-export for __dlpack__ (jax@v3 with jax-export==0.11.0); as a
// consumer, jax-import for from_dlpack's request and import (jax==0.10.2
// is jax-import@v1.1), a rule set that is no producer of its own.
//
// The arrays a producer is asked about are the platforms and memory kinds
// its own rules distinguish: its __dlpack_device__ cases in tests.yaml,
// read at the inputs that say where the array lives (see Producer.Arrays),
// one array for each distinct way the producer answers. Which inputs those
// are is the one thing this package knows of each library by name.
//
// # Place
//
// The package is internal: its users are in this module (the command
// line, and the playground's module through wasm/internal/guest), and its
// shape follows the rule sets' inputs, which change with them. The public
// API stays engine's.
package interop
