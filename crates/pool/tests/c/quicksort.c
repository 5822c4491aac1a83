/* Quicksort through fugue-pool's C ABI: each task partitions its range and spawns both halves
 * (a malloc'd closure holding the array and the bounds, freed by the task), down to a
 * 128-element serial cutoff. Checks that the result is sorted; exits 1 if not.
 *
 * usage: quicksort [-n ELEMENTS] [-t THREADS] [-q QLEN] [-s]
 *   -n  number of ints (default 10000000)
 *   -t  threads (default 0: the pool's default)
 *   -q  queue capacity (default 4096); a full queue makes the spawner sort the half itself
 *   -s  serial: the same program without the pool (the baseline)
 * The policy comes from FUGUE_POOL_POLICY. Prints the sort time in ms on stdout. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"

#define CUTOFF 128

struct range {
    int *a;
    long lo, hi; /* the range [lo, hi) */
};

static void insertion_sort(int *a, long lo, long hi) {
    for (long i = lo + 1; i < hi; i++) {
        int x = a[i];
        long j = i - 1;
        while (j >= lo && a[j] > x) {
            a[j + 1] = a[j];
            j--;
        }
        a[j + 1] = x;
    }
}

/* Lomuto partition around the middle element; returns the pivot's final index. */
static long partition(int *a, long lo, long hi) {
    long mid = lo + (hi - lo) / 2, last = hi - 1;
    int t = a[mid];
    a[mid] = a[last];
    a[last] = t;
    int p = a[last];
    long i = lo;
    for (long j = lo; j < last; j++) {
        if (a[j] < p) {
            t = a[i];
            a[i] = a[j];
            a[j] = t;
            i++;
        }
    }
    a[last] = a[i];
    a[i] = p;
    return i;
}

static void serial_sort(int *a, long lo, long hi) {
    while (hi - lo > CUTOFF) {
        long p = partition(a, lo, hi);
        serial_sort(a, lo, p);
        lo = p + 1;
    }
    insertion_sort(a, lo, hi);
}

static void sort_task(void *closure, struct scheduler *s);

static void spawn_half(int *a, long lo, long hi, struct scheduler *s) {
    struct range *r = malloc(sizeof *r);
    if (r == NULL) {
        perror("malloc");
        exit(2);
    }
    r->a = a;
    r->lo = lo;
    r->hi = hi;
    if (sched_spawn(sort_task, r, s) < 0) {
        if (errno != EAGAIN) {
            perror("sched_spawn");
            exit(2);
        }
        sort_task(r, s); /* queue full: sort it here */
    }
}

static void sort_task(void *closure, struct scheduler *s) {
    struct range r = *(struct range *)closure;
    free(closure);
    if (r.hi - r.lo <= CUTOFF) {
        insertion_sort(r.a, r.lo, r.hi);
        return;
    }
    long p = partition(r.a, r.lo, r.hi);
    spawn_half(r.a, r.lo, p, s);
    spawn_half(r.a, p + 1, r.hi, s);
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
    long n = 10000000;
    int threads = 0, qlen = 4096, serial = 0, opt;
    while ((opt = getopt(argc, argv, "n:t:q:s")) != -1) {
        switch (opt) {
        case 'n': n = atol(optarg); break;
        case 't': threads = atoi(optarg); break;
        case 'q': qlen = atoi(optarg); break;
        case 's': serial = 1; break;
        default:
            fprintf(stderr, "usage: %s [-n ELEMENTS] [-t THREADS] [-q QLEN] [-s]\n", argv[0]);
            return 2;
        }
    }
    int *a = malloc(n * sizeof *a);
    if (a == NULL) {
        perror("malloc");
        return 2;
    }
    unsigned long long x = 0x2545F4914F6CDD1DULL;
    for (long i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = (int)(x >> 33);
    }
    double t0 = now_ms();
    if (serial) {
        serial_sort(a, 0, n);
    } else {
        struct range *r = malloc(sizeof *r);
        if (r == NULL) {
            perror("malloc");
            return 2;
        }
        r->a = a;
        r->lo = 0;
        r->hi = n;
        if (sched_init(threads, qlen, sort_task, r) < 0) {
            perror("sched_init");
            return 2;
        }
    }
    double t1 = now_ms();
    for (long i = 1; i < n; i++) {
        if (a[i - 1] > a[i]) {
            fprintf(stderr, "not sorted at %ld: %d > %d\n", i, a[i - 1], a[i]);
            return 1;
        }
    }
    printf("%.3f\n", t1 - t0);
    free(a);
    return 0;
}
