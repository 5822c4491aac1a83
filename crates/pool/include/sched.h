/* The former name of <fugue/sched.h>, kept for programs that write #include "sched.h".
 *
 * With -I crates/pool/include this file is also what <sched.h> finds, including the
 * system headers' own #include <sched.h> (from <pthread.h>, for example). So it first includes
 * the system's <sched.h> (the next one on the search path), then fugue's declarations, and a
 * program sees both, as if the two headers had different names. New programs include
 * <fugue/sched.h>.
 *
 * The #include_next stands before the include guard: a copy of this file beside the program,
 * found first as "sched.h" from the program's folder and then again through -I. (the first
 * folder on the search path), would otherwise end the search at itself, guard already set, and
 * the system's header would never be read. Each #include_next starts after the folder where
 * its file was found, so the search reaches the system's header in a step or two, which has a
 * guard of its own. */

/* #include_next is a GCC extension (clang has it too); marking this file as a system header
 * keeps -Wpedantic quiet about it. */
#pragma GCC system_header
#include_next <sched.h>

#ifndef FUGUE_POOL_SCHED_COMPAT_H
#define FUGUE_POOL_SCHED_COMPAT_H

#include "fugue/sched.h"

#endif
