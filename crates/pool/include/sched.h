/* The former name of <fugue/sched.h>, kept for programs that write #include "sched.h".
 *
 * With -I crates/pool/include this file is also what <sched.h> finds, including the
 * system headers' own #include <sched.h> (from <pthread.h>, for example). So it first includes
 * the system's <sched.h> (the next one on the search path), then fugue's declarations, and a
 * program sees both, as if the two headers had different names. New programs include
 * <fugue/sched.h>. */
#ifndef FUGUE_POOL_SCHED_COMPAT_H
#define FUGUE_POOL_SCHED_COMPAT_H

/* #include_next is a GCC extension (clang has it too); marking this file as a system header
 * keeps -Wpedantic quiet about it. */
#pragma GCC system_header
#include_next <sched.h>

#include "fugue/sched.h"

#endif
