/* fork/join fib by leaf counting: each task spawns two children; leaves add to a counter. */
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <errno.h>
#include <time.h>
#include "sched.h"

static atomic_long leaves, spawned, ran, eagain;
typedef struct { int n; } arg_t;

static void fibtask(void *c, struct scheduler *s) {
    int n = (int)(long)c;
    atomic_fetch_add_explicit(&ran, 1, memory_order_relaxed);
    if (n < 2) { atomic_fetch_add_explicit(&leaves, n, memory_order_relaxed); return; }
    for (int k = 1; k <= 2; k++) {
        if (sched_spawn(fibtask, (void *)(long)(n - k), s) == 0)
            atomic_fetch_add_explicit(&spawned, 1, memory_order_relaxed);
        else if (errno == EAGAIN) { atomic_fetch_add_explicit(&eagain, 1, memory_order_relaxed); fibtask((void *)(long)(n - k), s); }
        else { perror("sched_spawn"); abort(); }
    }
}
static long fibs(int n) { long a = 0, b = 1; while (n--) { long t = a + b; a = b; b = t; } return a; }
int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 25, th = argc > 2 ? atoi(argv[2]) : 0, q = argc > 3 ? atoi(argv[3]) : 1 << 20;
    struct timespec t0, t1; clock_gettime(CLOCK_MONOTONIC, &t0);
    int r = sched_init(th, q, fibtask, (void *)(long)n);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double dt = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    long want = fibs(n);
    long expected_tasks = spawned + 1 + eagain;
    printf("fib(%d) th=%d q=%d r=%d leaves=%ld want=%ld ran=%ld expect_ran=%ld eagain=%ld %.3fs %s\n", n, th, q, r, (long)leaves, want,
           (long)ran, expected_tasks, (long)eagain, dt, (leaves == want && ran == expected_tasks) ? "OK" : "WRONG");
    return !(r == 0 && leaves == want && ran == expected_tasks);
}
