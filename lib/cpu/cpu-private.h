/*
 * cpu-private.h - internal declarations of the CPU backend.
 *
 * Not installed.  Include after config.h and ggml-impl.h.
 */
#ifndef GGML_BACKEND_CPU_PRIVATE_H
#define GGML_BACKEND_CPU_PRIVATE_H

#include <sched.h>
#include <stdbool.h>

#include "ggml-backend-impl.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"
#include "fp16-impl.h"
#include "numa-plan.h"
#include "simd/kernels.h"

/* ------------------------------------------------------------ thread pool */

/*
 * A job: fn runs once on each of nth threads with ith = 0..nth-1; thread 0
 * is the caller of ggml__threadpool_run.  Inside fn, threads of the same job
 * may meet at ggml__threadpool_barrier.
 */
typedef void (*ggml__job_fn)(void *arg, int ith, int nth);

/*
 * Runs fn on n_threads threads of the pool (1 <= n_threads <= the pool's
 * size) and returns true when every one has returned.  Resumes a paused
 * pool.  Jobs of one pool never overlap: while a job runs, a run from
 * another thread (two backends sharing a pool, or misuse) returns false at
 * once, with nothing run and nothing logged.  No allocation, no hwloc call.
 */
bool ggml__threadpool_run(struct ggml_threadpool *pool, int n_threads, ggml__job_fn fn, void *arg);

/*
 * Blocks until all threads of the current job have reached it.  Every
 * thread of the job must call it the same number of times: a kernel that
 * uses it must run on all threads (its op_impl leaves n_tasks NULL), or on
 * one thread, which the engine tells by a NULL pool (then it returns at
 * once).
 */
void ggml__threadpool_barrier(struct ggml_threadpool *pool);

/*
 * Index into the NUMA layout's nodes of the node thread ith of the pool
 * runs on (0 when not bound): the copy of MIRROR weights it reads.
 */
int ggml__threadpool_thread_node(const struct ggml_threadpool *pool, int ith);

/* ------------------------------------------------------------------ NUMA */

/* The process's hwloc topology, loaded on first use; NULL if hwloc failed
 * (then the process has one node).
 * Only read it: hwloc's system queries are made once, by numa.c. */
hwloc_topology_t ggml__cpu_topology(void);

/* True when threads and memory may be bound: the topology is this
 * machine's (or there is none, and binding follows explicit masks). */
bool ggml__cpu_binding_applies(void);

/* cpus (NULL: none) as a new kernel CPU mask of *size bytes (what
 * sched_setaffinity takes, large enough for every CPU); NULL when out of
 * memory.  Freed with free. */
cpu_set_t *ggml__cpu_mask_new(hwloc_const_bitmap_t cpus, size_t *size);

/* The NUMA layout in effect (numa.c): DISABLED until ggml_numa_init. */
const struct ggml__numa_layout *ggml__numa_layout(void);

/*
 * Default thread count: physical cores the process may run on,
 * performance cores only on hybrid machines (at least 1).
 */
int ggml__cpu_physical_cores(void);

/*
 * Applies place (INTERLEAVE or BIND; the others need nothing) to the pages
 * of [ptr, ptr + size), moving pages already touched when migrate.  False
 * when the system refused (noted once per process; the memory works).
 */
bool ggml__numa_place_memory(void *ptr, size_t size, struct ggml__buffer_place place, bool migrate);

/* Page-aligned memory not yet touched (so placed by policy or first touch),
 * or NULL; freed with ggml__numa_free_pages with the same size.  Advised
 * for huge pages as ggml__advise_huge_pages says. */
void *ggml__numa_alloc_pages(size_t size);

/*
 * Buffers of GGML__HUGE_PAGE_BYTES or more: allocated at that alignment
 * and advised to the kernel for transparent huge pages, where the system
 * lets a program ask (Linux with THP in "madvise" or "always" mode).
 * Weights are read in long sweeps, a few rows at a time: with 4 KiB pages
 * every row crosses pages, each crossing a TLB miss that waits on a page
 * walk (a 64 MiB F32 matrix x vector ran some 10% faster on huge pages).
 */
#define GGML__HUGE_PAGE_BYTES ((size_t) 2 << 20)

/* Advises the page-aligned memory [ptr, ptr + size) for huge pages when
 * size is GGML__HUGE_PAGE_BYTES or more; advice only, nothing fails. */
void ggml__advise_huge_pages(void *ptr, size_t size);
void ggml__numa_free_pages(void *ptr, size_t size);

/* ggml-backend-info's text: topology, layout and plans for n_threads
 * (<= 0: the default count); see ggml__numa_describe. */
size_t ggml__cpu_describe_placement(int n_threads, char *buf, size_t size);

/*
 * True when the running kernel level multiplies weights of type by
 * columns in 8-bit integer arithmetic whatever the number of columns
 * (ops/matmul.c; the BLAS plugin leaves those products to the CPU).
 * Reached as "ggml_backend_cpu_integer_products" through the CPU
 * registry's get_proc_address.
 */
bool ggml__cpu_integer_products(enum ggml_type type);

/*
 * CPU buffers with another interface (repack.c): new memory placed as
 * the CPU buffer type places it, the CPU buffer's own interface, a write
 * of size bytes at byte at of the buffer into every per-node copy, and
 * the byte offset of a tensor's data in the buffer (in every copy).
 */
ggml_backend_buffer_t ggml__cpu_buffer_alloc(ggml_backend_buffer_type_t buft, struct ggml_backend_buffer_i iface,
                                             size_t size);
struct ggml_backend_buffer_i ggml__cpu_buffer_iface(void);
void ggml__cpu_buffer_write(ggml_backend_buffer_t buffer, size_t at, const void *data, size_t size);
size_t ggml__cpu_buffer_offset(ggml_backend_buffer_t buffer, const struct ggml_tensor *tensor);

/*
 * The "CPU_REPACK" buffer type (repack.c).  would_pack: t is stored
 * interleaved when placed in such a buffer; tensor_packed: t is (its
 * data is in the interleaved layout); repack_allows: op touches no
 * packed data other than as MUL_MAT's src0; extra_bufts: the device's
 * "ggml_backend_dev_get_extra_bufts" (the repack type when the kernel
 * level has integer tiles).
 */
bool ggml__cpu_would_pack(const struct ggml_tensor *t);
bool ggml__cpu_tensor_packed(const struct ggml_tensor *t);
bool ggml__cpu_is_repack_buft(ggml_backend_buffer_type_t buft);
bool ggml__cpu_repack_allows(const struct ggml_tensor *op);
ggml_backend_buffer_type_t *ggml__cpu_extra_bufts(ggml_backend_dev_t dev);

/*
 * For MIRROR: where thread ith of pool reads tensor t's data, when t lives
 * in a replicated CPU buffer and the thread's node has its own copy; NULL
 * otherwise (read t->data).
 */
void *ggml__cpu_buffer_local_data(const struct ggml_tensor *t, int node);

/* Number of CPU buffers that hold per-node copies now (0: none to read). */
int ggml__cpu_mirrored_buffers(void);

/* Detects the CPU's features once (ggml_cpu_has_* answer from then on). */
void ggml__cpu_features_init(void);

/* The features found, as name/value pairs ended by a NULL name. */
struct ggml_backend_feature *ggml__cpu_feature_list(void);

/* The processor's model name (hwloc's CPUModel), or "CPU". */
const char *ggml__cpu_model_name(void);

/* The CPU device (its registry is ggml_backend_cpu_reg()). */
extern struct ggml_backend_device ggml__cpu_device;

/* ---------------------------------------------------------------- kernels */

/* What one thread of a node's computation gets. */
struct ggml__compute_params {
    int ith, nth;                  /* this thread, of nth threads on the node */
    size_t wsize;                  /* scratch shared by the node's threads */
    void *wdata;
    struct ggml_threadpool *pool;  /* for ggml__threadpool_barrier inside a kernel (NULL: nth is 1) */
    bool use_ref;                  /* reference kernels only */
    const struct ggml__cpu_kernels *kernels;   /* the kernel table in use (simd/kernels.h) */
};

/* Computes this thread's share of dst (its sources are ready). */
typedef void (*ggml__kernel_fn)(const struct ggml__compute_params *params, struct ggml_tensor *dst);

/*
 * How the CPU backend runs one op.  kernel is required; the others are
 * optional: supports (defaults to true), n_tasks (defaults to every thread),
 * work_size (defaults to no scratch).
 *
 * A node may come from elsewhere than the op constructors (the RPC server
 * deserializes graphs), so supports holds it to what the constructor could
 * make wherever the kernel indexes, divides or loops by it (shapes,
 * op_params, types); the engine has checked before that the required
 * sources are present and every operand's strides stay inside its memory.
 * Such a node's operands may also overlap one another: kernels copy
 * between operands with memmove, never memcpy.
 */
struct ggml__op_impl {
    ggml__kernel_fn kernel;
    bool (*supports)(const struct ggml_tensor *dst);
    int (*n_tasks)(const struct ggml_tensor *dst, int n_threads);
    size_t (*work_size)(const struct ggml_tensor *dst, int n_tasks);
};

/* The implementation of op, or NULL when the CPU backend has none. */
const struct ggml__op_impl *ggml__cpu_op_impl(enum ggml_op op);

/* True for ops that only reinterpret memory (nothing to compute). */
bool ggml__op_is_noop(enum ggml_op op);

/* True when the CPU backend can compute node (supports_op). */
bool ggml__cpu_supports(const struct ggml_tensor *node);

struct ggml__live_buffers; /* backend-private.h */

/*
 * One pass over cgraph's nodes: true when the CPU backend can compute
 * every one and each has its memory (else false, with the first problem
 * logged), with *work_size the scratch ggml_graph_plan gives it for
 * n_threads (1..GGML_MAX_N_THREADS).  node_tasks, when not NULL, has
 * cgraph's n_nodes entries and receives each node's thread count for
 * n_threads (0: a node the engine skips), for ggml__graph_compute_checked.
 * live, when not NULL, also checks that every tensor the computation
 * touches that lives in a backend buffer lives in a live one (the check of
 * ggml__graph_buffers_live, for what is computed).
 */
bool ggml__graph_check(const struct ggml_cgraph *cgraph, int n_threads, size_t *work_size, uint16_t *node_tasks,
                       struct ggml__live_buffers *live);

/* ggml_graph_compute of a graph ggml__graph_check accepted, with a plan
 * that has at least that scratch and cplan->n_threads as the check's
 * n_threads; node_tasks: what that check wrote, or NULL (then each
 * thread works the counts out again as it walks the graph). */
enum ggml_status ggml__graph_compute_checked(struct ggml_cgraph *cgraph, const struct ggml_cplan *cplan,
                                             const uint16_t *node_tasks);

/* Rows [*first, *last) of n rows that thread ith of nth computes. */
static inline void ggml__split_rows(int64_t n, int ith, int nth, int64_t *first, int64_t *last)
{
    /* (no division for the one thread of a tiny node) */
    const int64_t per_thread = nth == 1 ? n : (n + nth - 1) / nth;
    *first = per_thread * ith < n ? per_thread * ith : n;
    *last = *first + per_thread < n ? *first + per_thread : n;
}

/* Address of element (i0, i1, i2, i3) of t, by its byte strides. */
static inline void *ggml__elem_ptr(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return (char *) t->data + i0 * (int64_t) t->nb[0] + i1 * (int64_t) t->nb[1] + i2 * (int64_t) t->nb[2] +
           i3 * (int64_t) t->nb[3];
}

/* Element (i0, i1, i2, i3) of an F32 tensor. */
static inline float ggml__f32_at(const struct ggml_tensor *t, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    return *(const float *) ggml__elem_ptr(t, i0, i1, i2, i3);
}

/* One element of a float type (F32, F16, BF16) at p, as F32. */
static inline float ggml__load_float(enum ggml_type type, const void *p)
{
    switch (type) {
    case GGML_TYPE_F16:  return ggml__fp16_to_fp32(*(const ggml_fp16_t *) p);
    case GGML_TYPE_BF16: return ggml__bf16_to_fp32(*(const ggml_bf16_t *) p);
    default:             return *(const float *) p;
    }
}

/* Stores v at p in a float type (F32, F16, BF16), rounding to nearest even. */
static inline void ggml__store_float(enum ggml_type type, void *p, float v)
{
    switch (type) {
    case GGML_TYPE_F16:  *(ggml_fp16_t *) p = ggml__fp32_to_fp16(v); break;
    case GGML_TYPE_BF16: *(ggml_bf16_t *) p = ggml__fp32_to_bf16(v); break;
    default:             *(float *) p = v; break;
    }
}

/* n elements of a float type spaced nb0 bytes apart, converted to F32. */
static inline void ggml__load_row_float(enum ggml_type type, const void *src, size_t nb0, int64_t n, float *out)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = ggml__load_float(type, (const char *) src + (size_t) i * nb0);
}

/* n F32 values stored in a float type, nb0 bytes apart. */
static inline void ggml__store_row_float(enum ggml_type type, void *dst, size_t nb0, int64_t n, const float *in)
{
    for (int64_t i = 0; i < n; i++)
        ggml__store_float(type, (char *) dst + (size_t) i * nb0, in[i]);
}

/* Op implementations, by family (lib/cpu/ops/); the op table of compute.c uses them. */
#define GGML__OP_IMPL(name) extern const struct ggml__op_impl name
GGML__OP_IMPL(ggml__op_copy);         /* ops/copy.c: DUP, CPY, CONT */
GGML__OP_IMPL(ggml__op_binary);       /* ops/binary.c: ADD, SUB, MUL, DIV */
GGML__OP_IMPL(ggml__op_add1);         /* ops/unary.c */
GGML__OP_IMPL(ggml__op_scale);
GGML__OP_IMPL(ggml__op_math);         /* SQR, SQRT, LOG, SIN, COS */
GGML__OP_IMPL(ggml__op_clamp);
GGML__OP_IMPL(ggml__op_unary);        /* every GGML_UNARY_OP_* */
GGML__OP_IMPL(ggml__op_leaky_relu);
GGML__OP_IMPL(ggml__op_glu);
GGML__OP_IMPL(ggml__op_sum);          /* ops/reduce.c */
GGML__OP_IMPL(ggml__op_sum_rows);
GGML__OP_IMPL(ggml__op_mean);
GGML__OP_IMPL(ggml__op_argmax);
GGML__OP_IMPL(ggml__op_count_equal);
GGML__OP_IMPL(ggml__op_repeat);
GGML__OP_IMPL(ggml__op_concat);
GGML__OP_IMPL(ggml__op_norm);         /* NORM */
GGML__OP_IMPL(ggml__op_rms_norm);
GGML__OP_IMPL(ggml__op_l2_norm);
GGML__OP_IMPL(ggml__op_group_norm);
GGML__OP_IMPL(ggml__op_mul_mat);      /* ops/matmul.c */
GGML__OP_IMPL(ggml__op_mul_mat_id);
GGML__OP_IMPL(ggml__op_out_prod);
GGML__OP_IMPL(ggml__op_get_rows);     /* ops/rows.c */
GGML__OP_IMPL(ggml__op_set_rows);
GGML__OP_IMPL(ggml__op_set);
GGML__OP_IMPL(ggml__op_acc);
GGML__OP_IMPL(ggml__op_diag_mask_inf);
GGML__OP_IMPL(ggml__op_soft_max);     /* ops/softmax.c */
GGML__OP_IMPL(ggml__op_rope);         /* ops/rope.c: ROPE, ROPE_BACK */
GGML__OP_IMPL(ggml__op_argsort);      /* ops/sort.c */
GGML__OP_IMPL(ggml__op_top_k);
GGML__OP_IMPL(ggml__op_flash_attn_ext); /* ops/attention.c */
GGML__OP_IMPL(ggml__op_im2col);           /* ops/conv.c */
GGML__OP_IMPL(ggml__op_im2col_3d);
GGML__OP_IMPL(ggml__op_col2im_1d);
GGML__OP_IMPL(ggml__op_conv_2d);          /* ops/conv-direct.c */
GGML__OP_IMPL(ggml__op_conv_3d);
GGML__OP_IMPL(ggml__op_conv_2d_dw);
GGML__OP_IMPL(ggml__op_conv_transpose_1d);
GGML__OP_IMPL(ggml__op_conv_transpose_2d);
GGML__OP_IMPL(ggml__op_pool_1d);          /* ops/image.c */
GGML__OP_IMPL(ggml__op_pool_2d);
GGML__OP_IMPL(ggml__op_upscale);
GGML__OP_IMPL(ggml__op_pad);
GGML__OP_IMPL(ggml__op_pad_reflect_1d);
GGML__OP_IMPL(ggml__op_roll);
GGML__OP_IMPL(ggml__op_win_part);
GGML__OP_IMPL(ggml__op_win_unpart);
GGML__OP_IMPL(ggml__op_get_rel_pos);
GGML__OP_IMPL(ggml__op_add_rel_pos);
GGML__OP_IMPL(ggml__op_arange);           /* ops/seq.c */
GGML__OP_IMPL(ggml__op_timestep_embedding);
GGML__OP_IMPL(ggml__op_cumsum);
GGML__OP_IMPL(ggml__op_tri);
GGML__OP_IMPL(ggml__op_fill);
GGML__OP_IMPL(ggml__op_diag);
GGML__OP_IMPL(ggml__op_diag_mask_zero);
GGML__OP_IMPL(ggml__op_repeat_back);
GGML__OP_IMPL(ggml__op_add_id);
GGML__OP_IMPL(ggml__op_ssm_conv);         /* ops/recurrent.c */
GGML__OP_IMPL(ggml__op_ssm_scan);
GGML__OP_IMPL(ggml__op_rwkv_wkv6);
GGML__OP_IMPL(ggml__op_rwkv_wkv7);
GGML__OP_IMPL(ggml__op_gated_delta_net);
GGML__OP_IMPL(ggml__op_gated_linear_attn);
GGML__OP_IMPL(ggml__op_solve_tri);
GGML__OP_IMPL(ggml__op_map_custom1);      /* ops/custom.c */
GGML__OP_IMPL(ggml__op_map_custom2);
GGML__OP_IMPL(ggml__op_map_custom3);
GGML__OP_IMPL(ggml__op_lightning_indexer); /* ops/deepseek.c */
GGML__OP_IMPL(ggml__op_dsv4_hc_comb);
GGML__OP_IMPL(ggml__op_dsv4_hc_pre);
GGML__OP_IMPL(ggml__op_dsv4_hc_post);
GGML__OP_IMPL(ggml__op_custom);
GGML__OP_IMPL(ggml__op_silu_back);       /* ops/back.c */
GGML__OP_IMPL(ggml__op_rms_norm_back);
GGML__OP_IMPL(ggml__op_get_rows_back);
GGML__OP_IMPL(ggml__op_soft_max_back);
GGML__OP_IMPL(ggml__op_im2col_back);
GGML__OP_IMPL(ggml__op_pool_2d_back);
GGML__OP_IMPL(ggml__op_cross_entropy_loss);
GGML__OP_IMPL(ggml__op_cross_entropy_loss_back);
GGML__OP_IMPL(ggml__op_opt_step_adamw);
GGML__OP_IMPL(ggml__op_opt_step_sgd);

/* True when the op's result dst is to be written by the table's streaming
   entries (unary_stream, binary_stream) where they exist: it would not stay
   in the last-level cache anyway. */
static inline bool ggml__output_streams(const struct ggml__cpu_kernels *k, const struct ggml_tensor *dst)
{
    return ggml__nbytes(dst) >= k->stream_min_bytes;
}

#endif
