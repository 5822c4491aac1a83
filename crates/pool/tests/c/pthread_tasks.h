/* The checks shared by pthread_compat.c and pthread_fugue.c (included after the headers under
 * test): the system's affinity calls and a pool of tasks that spawn tasks. */
#define LEAVES 1000

static atomic_long sum;

struct range {
    long lo, hi;
};

static struct range ranges[2 * LEAVES];
static atomic_int next_range;

/* Adds lo..hi-1 to sum, splitting the range into two tasks until it is short. */
static void add_range(void *closure, struct scheduler *s) {
    struct range *r = closure;
    while (r->hi - r->lo > 8) {
        long mid = r->lo + (r->hi - r->lo) / 2;
        int i = atomic_fetch_add(&next_range, 1);
        if (i >= 2 * LEAVES) {
            break;
        }
        ranges[i].lo = mid;
        ranges[i].hi = r->hi;
        r->hi = mid;
        if (sched_spawn(add_range, &ranges[i], s) != 0) {
            add_range(&ranges[i], s);
        }
    }
    for (long v = r->lo; v < r->hi; v++) {
        atomic_fetch_add(&sum, v);
    }
}

static int run_checks(const char *name) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 1) {
        fprintf(stderr, "%s: sched_getaffinity failed\n", name);
        return 1;
    }
    static struct range all = {1, 10001};
    if (sched_init(2, 64, add_range, &all) != 0) {
        perror("sched_init");
        return 1;
    }
    long want = 10000L * 10001L / 2;
    if (atomic_load(&sum) != want) {
        fprintf(stderr, "%s: sum %ld, expected %ld\n", name, atomic_load(&sum), want);
        return 1;
    }
    printf("%s: sum %ld on %d cores\n", name, atomic_load(&sum), CPU_COUNT(&set));
    return 0;
}
