/*
 * fault-alloc.c - the failing allocator of tests/test-fault (see
 * fault-alloc.h).
 *
 * Why definitions in the test program, not an LD_PRELOAD object nor a hook
 * of the library: the executable comes first in the process's symbol
 * lookup, so these definitions replace the real functions for every
 * library exactly as a preloaded object would (glibc supports replacing
 * its malloc this way, and its own internal allocations then come here
 * too), without a wrapper shell or a separate object to find, and without
 * a hook that would see the library's own calls but not hwloc's or libc's.
 * Under AddressSanitizer a preloaded allocator would sit in front of the
 * sanitizer's runtime, which must come first; here the sanitizer build
 * forwards to the runtime's __interceptor_ entry points instead, so ASan
 * still checks every block and LeakSanitizer still sees every leak.
 *
 * Paths that allocate without calling malloc through the PLT, and how
 * they are covered:
 *   - hwloc_alloc (CPU buffers and MIRROR copies under a NUMA strategy)
 *     maps pages with mmap: mmap and munmap are replaced too;
 *   - thread stacks are mapped inside glibc's pthread_create:
 *     pthread_create is replaced and counts as one allocation;
 *   - ASan's own strdup and strndup allocate without calling malloc:
 *     both are defined here on top of malloc.
 * Anything else that allocates inside glibc (stdio buffers, the dynamic
 * linker's thread data) calls the replaced malloc or calloc.
 *
 * The record of live blocks keeps each address XORed with a mask, so that
 * LeakSanitizer does not take the record for a reference to the block.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fault-alloc.h"
#if defined(FAULT_ASAN)
#include <sanitizer/lsan_interface.h>
#endif

#define EXPORT __attribute__((visibility("default")))

#if defined(FAULT_ASAN)
void *__interceptor_malloc(size_t size);
void *__interceptor_calloc(size_t n, size_t size);
void *__interceptor_realloc(void *p, size_t size);
void __interceptor_free(void *p);
void *__interceptor_memalign(size_t alignment, size_t size);
int __interceptor_posix_memalign(void **p, size_t alignment, size_t size);
void *__interceptor_valloc(size_t size);
void *__interceptor_pvalloc(size_t size);
void *__interceptor_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __interceptor_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg);
#define real_malloc __interceptor_malloc
#define real_calloc __interceptor_calloc
#define real_realloc __interceptor_realloc
#define real_free __interceptor_free
#define real_memalign __interceptor_memalign
#define real_valloc __interceptor_valloc
#define real_pvalloc __interceptor_pvalloc
static int real_posix_memalign(void **p, size_t alignment, size_t size)
{
    return __interceptor_posix_memalign(p, alignment, size);
}
static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return __interceptor_mmap(addr, len, prot, flags, fd, off);
}
static int real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    return __interceptor_pthread_create(thread, attr, start, arg);
}
#else
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);
void *__libc_memalign(size_t alignment, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);
#define real_malloc __libc_malloc
#define real_calloc __libc_calloc
#define real_realloc __libc_realloc
#define real_free __libc_free
#define real_memalign __libc_memalign
#define real_valloc __libc_valloc
#define real_pvalloc __libc_pvalloc
static int real_posix_memalign(void **p, size_t alignment, size_t size)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment % sizeof(void *) != 0)
        return EINVAL;
    void *q = __libc_memalign(alignment, size);
    if (q == NULL)
        return ENOMEM;
    *p = q;
    return 0;
}
static void *real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return (void *) syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
typedef int pthread_create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static int real_pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    static pthread_create_fn *next;
    if (next == NULL) {
        void *sym = dlsym(RTLD_NEXT, "pthread_create");
        if (sym == NULL)
            return EAGAIN;
        memcpy(&next, &sym, sizeof next);
    }
    return next(thread, attr, start, arg);
}
#endif

static int real_munmap(void *addr, size_t len)
{
    return (int) syscall(SYS_munmap, addr, len);
}

/* ------------------------------------------------------------ the record */

#define RECORD_SLOTS (1u << 16) /* a power of two */
#define ADDRESS_MASK ((uintptr_t) 0x5a5a5a5a5a5a5a5aull)
#define TOMBSTONE ((uintptr_t) 1)

struct slot {
    uintptr_t key; /* address ^ ADDRESS_MASK; 0 empty, TOMBSTONE removed */
    size_t size;
};

static struct slot record[RECORD_SLOTS];
static atomic_flag record_lock = ATOMIC_FLAG_INIT;
static long live_blocks;
static size_t live_bytes;
static bool record_full;

static atomic_bool armed;
static atomic_long events;
static long fail_at;
static atomic_bool fired;
static void *fired_frames[FAULT_MAX_FRAMES];
static int n_fired_frames;

static void lock(void)
{
    while (atomic_flag_test_and_set_explicit(&record_lock, memory_order_acquire))
        ;
}

static void unlock(void)
{
    atomic_flag_clear_explicit(&record_lock, memory_order_release);
}

static size_t slot_of(uintptr_t key)
{
    return (size_t) ((key * 0x9e3779b97f4a7c15ull) >> 40) & (RECORD_SLOTS - 1);
}

static void remember(void *p, size_t size)
{
    const uintptr_t key = (uintptr_t) p ^ ADDRESS_MASK;
    lock();
    size_t i = slot_of(key);
    for (size_t probes = 0; probes < RECORD_SLOTS; probes++, i = (i + 1) & (RECORD_SLOTS - 1))
        if (record[i].key == 0 || record[i].key == TOMBSTONE) {
            record[i] = (struct slot) { key, size };
            live_blocks++;
            live_bytes += size;
            unlock();
            return;
        }
    record_full = true;
    unlock();
}

static void forget(const void *p)
{
    if (p == NULL)
        return;
    const uintptr_t key = (uintptr_t) p ^ ADDRESS_MASK;
    lock();
    if (live_blocks > 0) {
        size_t i = slot_of(key);
        for (size_t probes = 0; probes < RECORD_SLOTS && record[i].key != 0;
             probes++, i = (i + 1) & (RECORD_SLOTS - 1))
            if (record[i].key == key) {
                record[i].key = TOMBSTONE;
                live_blocks--;
                live_bytes -= record[i].size;
                break;
            }
    }
    unlock();
}

/*
 * Whether this thread runs the program's code: the thread that armed the
 * allocator, and threads from the moment their start routine runs.  What
 * a new thread allocates before (under ASan, the runtime's own setup of
 * the thread, which cannot survive a failure) is not counted.
 */
static _Thread_local bool program_thread;

struct thread_start {
    void *(*start)(void *);
    void *arg;
};

static void *start_program_thread(void *p)
{
    struct thread_start ts = *(struct thread_start *) p;
    real_free(p);
    program_thread = true;
    return ts.start(ts.arg);
}

/* Counts one event; true when it is the one to fail. */
static bool must_fail(void)
{
    if (!atomic_load_explicit(&armed, memory_order_relaxed) || !program_thread)
        return false;
    const long n = atomic_fetch_add(&events, 1) + 1;
    if (n != fail_at)
        return false;
    n_fired_frames = backtrace(fired_frames, FAULT_MAX_FRAMES);
    atomic_store(&fired, true);
    return true;
}

static void *remembered(void *p, size_t size)
{
    if (p != NULL && atomic_load_explicit(&armed, memory_order_relaxed))
        remember(p, size);
    return p;
}

/* ------------------------------------------------------------ the API */

void fault_load_unwinder(void)
{
    /* the dynamic linker's blocks are not the program's (LeakSanitizer
     * knows them by their caller, which the allocator here hides) */
    void *frame[2];
#if defined(FAULT_ASAN)
    __lsan_disable();
#endif
    backtrace(frame, 2);
#if defined(FAULT_ASAN)
    __lsan_enable();
#endif
}

void fault_arm(long n)
{
    fault_load_unwinder(); /* now (if not yet), not at the failure */
    lock();
    memset(record, 0, sizeof record);
    live_blocks = 0;
    live_bytes = 0;
    record_full = false;
    unlock();
    program_thread = true;
    fail_at = n;
    n_fired_frames = 0;
    atomic_store(&fired, false);
    atomic_store(&events, 0);
    atomic_store(&armed, true);
}

void fault_disarm(void)
{
    atomic_store(&armed, false);
}

long fault_events(void)
{
    return atomic_load(&events);
}

bool fault_fired(void)
{
    return atomic_load(&fired);
}

long fault_live_blocks(void)
{
    lock();
    long n = record_full ? -1 : live_blocks;
    unlock();
    return n;
}

size_t fault_live_bytes(void)
{
    lock();
    size_t n = live_bytes;
    unlock();
    return n;
}

int fault_frames(void **frames, int max)
{
    if (!fault_fired())
        return 0;
    int n = n_fired_frames < max ? n_fired_frames : max;
    memcpy(frames, fired_frames, (size_t) n * sizeof *frames);
    return n;
}

/* ------------------------------------------------------------ replacements */

EXPORT void *malloc(size_t size)
{
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return remembered(real_malloc(size), size);
}

EXPORT void *calloc(size_t n, size_t size)
{
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return remembered(real_calloc(n, size), n * size);
}

EXPORT void *realloc(void *p, size_t size)
{
    if (p != NULL && size == 0) {
        forget(p);
        return real_realloc(p, size);
    }
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    void *q = real_realloc(p, size);
    if (q != NULL)
        forget(p);
    return remembered(q, size);
}

EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
    if (size != 0 && n > SIZE_MAX / size) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, n * size);
}

EXPORT void free(void *p)
{
    forget(p);
    real_free(p);
}

EXPORT int posix_memalign(void **p, size_t alignment, size_t size)
{
    if (must_fail())
        return ENOMEM;
    int status = real_posix_memalign(p, alignment, size);
    if (status == 0)
        remembered(*p, size);
    return status;
}

EXPORT void *aligned_alloc(size_t alignment, size_t size)
{
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return remembered(real_memalign(alignment, size), size);
}

EXPORT void *memalign(size_t alignment, size_t size)
{
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return remembered(real_memalign(alignment, size), size);
}

EXPORT void *valloc(size_t size)
{
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return remembered(real_valloc(size), size);
}

EXPORT void *pvalloc(size_t size)
{
    if (must_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    return remembered(real_pvalloc(size), size);
}

EXPORT char *strdup(const char *s)
{
    size_t n = strlen(s) + 1;
    char *copy = malloc(n);
    if (copy != NULL)
        memcpy(copy, s, n);
    return copy;
}

EXPORT char *strndup(const char *s, size_t max)
{
    size_t n = strnlen(s, max);
    char *copy = malloc(n + 1);
    if (copy != NULL) {
        memcpy(copy, s, n);
        copy[n] = '\0';
    }
    return copy;
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (must_fail()) {
        errno = ENOMEM;
        return MAP_FAILED;
    }
    void *p = real_mmap(addr, len, prot, flags, fd, off);
    return p == MAP_FAILED ? p : remembered(p, len);
}

EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return mmap(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
    forget(addr);
    return real_munmap(addr, len);
}

EXPORT int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg)
{
    if (must_fail())
        return EAGAIN;
    struct thread_start *ts = real_malloc(sizeof *ts);
    if (ts == NULL)
        return EAGAIN;
    *ts = (struct thread_start) { start, arg };
    int status = real_pthread_create(thread, attr, start_program_thread, ts);
    if (status != 0)
        real_free(ts);
    return status;
}
