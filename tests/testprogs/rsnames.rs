// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// rsnames N: Rust names to demangle (rs::crunch, a generic method),
// built with legacy and v0 mangling; N rounds of work.
mod rs {
    #[inline(never)]
    pub fn crunch(n: u64) -> u64 {
        let mut x = 0u64;
        for i in 0..n { x = x.wrapping_mul(31).wrapping_add(i ^ (x >> 3)); }
        x
    }
}
struct Worker<T> { v: T }
impl<T: Copy + Into<u64>> Worker<T> {
    #[inline(never)]
    fn run(&self, rounds: u64) -> u64 { let mut s = 0; for _ in 0..rounds { s += rs::crunch(self.v.into()); } s }
}
fn main() {
    let n: u64 = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let w = Worker { v: 100000u32 };
    println!("{}", w.run(n));
}
