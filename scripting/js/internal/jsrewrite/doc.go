// Package jsrewrite rewrites the operators whose BigInt results goja
// computes in one uninterruptible step of unbounded size (a ** b, a << b,
// a >> b with a negative count, a * b) into calls of helpers that jsguard
// defines and that refuse a result over its cap (see jsguard's package
// documentation, "BigInt"). It works on goja's syntax tree, before
// goja.CompileAST: the tree is changed in place, so positions, source maps
// and functions' source text stay the source's own, and since the
// operators are calls by the time goja compiles, its compiler no longer
// folds constant BigInt expressions either (3n ** 100000000n took 28 s to
// compile).
package jsrewrite
