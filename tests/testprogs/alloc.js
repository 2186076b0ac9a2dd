// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// alloc.js ROUNDS: named functions filling new arrays of new objects, so
// JIT code touches fresh heap pages (page faults under JS frames named
// from the perf map node --perf-basic-prof writes)
function fillObjects(n) {
	const a = new Array(n);
	for (let i = 0; i < n; i++)
		a[i] = { i: i, s: "v" + i };
	return a;
}
function growHeap(rounds) {
	const keep = [];
	for (let r = 0; r < rounds; r++)
		keep.push(fillObjects(100000));
	return keep.length;
}
console.log(growHeap(Number(process.argv[2] || 20)));
