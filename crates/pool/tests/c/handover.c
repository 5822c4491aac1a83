/* The pool's hand-overs, as race checkers see them: a root task writes each cell's input and
 * spawns a task that reads it and writes the cell's output; main reads the outputs once
 * sched_init has returned. Every access is ordered by the pool's guarantees (a spawn
 * happens-before its task; every task happens-before sched_init's return), so a race
 * checker must report nothing.
 *
 * usage: handover [-r]
 *   -r  also make a real race: every task increments one shared counter without
 *       synchronisation, which a race checker must report.
 * Exits 1 if a result is wrong. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fugue/sched.h"

#define CELLS 64

struct cell {
    long in;
    long out;
};

static struct cell cells[CELLS];
static long shared_counter;
static int racy;

static void task(void *p, struct scheduler *s) {
    struct cell *c = p;
    (void)s;
    c->out = c->in * 2;
    if (racy)
        shared_counter++;
}

static void root(void *p, struct scheduler *s) {
    int i;
    (void)p;
    for (i = 0; i < CELLS; i++) {
        volatile long spin;
        /* Some work between spawns, so that idle threads steal the tasks. */
        for (spin = 0; spin < 20000; spin++)
            ;
        cells[i].in = i;
        if (sched_spawn(task, &cells[i], s) != 0)
            task(&cells[i], s);
        /* Blocked a while, so that other threads take the tasks even where a checker runs
         * one thread at a time (Valgrind): the racing increments are then on several. */
        if (racy)
            usleep(2000);
    }
}

int main(int argc, char **argv) {
    long sum = 0;
    int i;
    racy = argc > 1 && strcmp(argv[1], "-r") == 0;
    if (sched_init(4, 1024, root, NULL) != 0)
        return 1;
    for (i = 0; i < CELLS; i++)
        sum += cells[i].out;
    printf("%ld\n", sum);
    return sum == CELLS * (CELLS - 1) ? 0 : 1;
}
