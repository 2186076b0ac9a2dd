// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// hot.js SECONDS: named functions called in a loop for SECONDS, for JIT
// frames named from the perf map node --perf-basic-prof writes
function leafWork(n) {
	let x = 0;
	for (let i = 0; i < n; i++)
		x = (x * 31 + i) | 0;
	return x;
}
function middleWork(n) {
	return leafWork(n) + 1;
}
function outerLoop(ms) {
	const end = Date.now() + ms;
	let s = 0;
	while (Date.now() < end)
		s += middleWork(10000);
	return s;
}
console.log(outerLoop(1000 * Number(process.argv[2] || 1)));
