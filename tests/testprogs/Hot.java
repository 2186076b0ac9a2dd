// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* java Hot.java SECONDS: spinOuter calls spinInner in a loop, both hot
 * enough for HotSpot to compile them (their code then named only by the
 * JVM's perf map); prints "done". */
public class Hot {
    static long spinInner(long x) {
        for (int i = 0; i < 1000; i++) x = x * 6364136223846793005L + 1442695040888963407L;
        return x;
    }
    static long spinOuter(long x) {
        for (int i = 0; i < 100; i++) x = spinInner(x);
        return x;
    }
    public static void main(String[] a) {
        long end = System.nanoTime() + (long) (Double.parseDouble(a.length > 0 ? a[0] : "1") * 1e9), x = 1;
        while (System.nanoTime() < end) x = spinOuter(x);
        System.out.println(x == 42 ? "" : "done");
    }
}
