/*
 * ggml-cpu.h - the CPU backend, built into libggml-backend.
 *
 * Direct graph computation on a thread pool, NUMA placement, run-time CPU
 * feature detection, element accessors for host tensors, and the CPU
 * backend object.
 */
#ifndef GGML_CPU_H
#define GGML_CPU_H

#include "ggml.h"
#include "ggml-backend.h"

#ifdef __cplusplus
extern "C" {
#endif

    /* Plan for ggml_graph_compute, made by ggml_graph_plan. */
    struct ggml_cplan {
        size_t    work_size; /* scratch bytes the computation needs */
        uint8_t * work_data; /* caller-provided scratch of work_size bytes */

        int n_threads;
        struct ggml_threadpool * threadpool; /* NULL: a pool made for the call */

        ggml_abort_callback abort_callback; /* polled between nodes; true stops */
        void *              abort_callback_data;

        bool use_ref; /* run the plain C reference kernels only */
    };

    /* How threads and memory are placed on NUMA machines. */
    enum ggml_numa_strategy {
        GGML_NUMA_STRATEGY_DISABLED   = 0, /* no placement */
        GGML_NUMA_STRATEGY_DISTRIBUTE = 1, /* threads spread over nodes, weights interleaved */
        GGML_NUMA_STRATEGY_ISOLATE    = 2, /* threads and memory on the caller's node */
        GGML_NUMA_STRATEGY_NUMACTL    = 3, /* keep the process's cpuset and memory policy */
        GGML_NUMA_STRATEGY_MIRROR     = 4, /* one copy of the weights per node */
        GGML_NUMA_STRATEGY_COUNT
    };

    /* Reads the topology and applies the strategy; call once, early. */
    GGML_BACKEND_API void    ggml_numa_init(enum ggml_numa_strategy numa);
    /* True when the process can use more than one NUMA node. */
    GGML_BACKEND_API bool    ggml_is_numa(void);

    /* ------------------------------------------------- element access
     *
     * For tensors whose data is in host memory; values are converted
     * from and to the tensor's type.  Indices are element indices (_1d: a
     * flat index into a contiguous tensor; _nd: one per dimension).
     */

    /* New 1-element I32 / F32 tensor holding value. */
    GGML_BACKEND_API struct ggml_tensor * ggml_new_i32(struct ggml_context * ctx, int32_t value);
    GGML_BACKEND_API struct ggml_tensor * ggml_new_f32(struct ggml_context * ctx, float value);

    /* Sets every element to value; returns tensor. */
    GGML_BACKEND_API struct ggml_tensor * ggml_set_i32 (struct ggml_tensor * tensor, int32_t value);
    GGML_BACKEND_API struct ggml_tensor * ggml_set_f32 (struct ggml_tensor * tensor, float value);

    GGML_BACKEND_API int32_t ggml_get_i32_1d(const struct ggml_tensor * tensor, int i);
    GGML_BACKEND_API void    ggml_set_i32_1d(const struct ggml_tensor * tensor, int i, int32_t value);

    GGML_BACKEND_API int32_t ggml_get_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3);
    GGML_BACKEND_API void    ggml_set_i32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, int32_t value);

    GGML_BACKEND_API float   ggml_get_f32_1d(const struct ggml_tensor * tensor, int i);
    GGML_BACKEND_API void    ggml_set_f32_1d(const struct ggml_tensor * tensor, int i, float value);

    GGML_BACKEND_API float   ggml_get_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3);
    GGML_BACKEND_API void    ggml_set_f32_nd(const struct ggml_tensor * tensor, int i0, int i1, int i2, int i3, float value);

    /* ------------------------------------------------------ thread pool */

    /* New pool started per params; NULL (logged) on failure. */
    GGML_BACKEND_API struct ggml_threadpool *      ggml_threadpool_new           (struct ggml_threadpool_params  * params);
    /* Stops and frees the pool; NULL is a no-op. */
    GGML_BACKEND_API void                          ggml_threadpool_free          (struct ggml_threadpool * threadpool);
    GGML_BACKEND_API int                           ggml_threadpool_get_n_threads (struct ggml_threadpool * threadpool);
    /* Parks the threads (no CPU use) until resumed. */
    GGML_BACKEND_API void                          ggml_threadpool_pause         (struct ggml_threadpool * threadpool);
    GGML_BACKEND_API void                          ggml_threadpool_resume        (struct ggml_threadpool * threadpool);

    /* Plan for computing cgraph on n_threads threads (threadpool may be
     * NULL); allocate work_size bytes into work_data before computing. */
    GGML_BACKEND_API struct ggml_cplan ggml_graph_plan(
                  const struct ggml_cgraph * cgraph,
                                       int   n_threads,
                    struct ggml_threadpool * threadpool);
    /* Computes the graph with the plan. */
    GGML_BACKEND_API enum ggml_status  ggml_graph_compute(struct ggml_cgraph * cgraph, struct ggml_cplan * cplan);

    /* Plans and computes, taking the scratch memory from ctx (which must
     * have room for it). */
    GGML_BACKEND_API enum ggml_status  ggml_graph_compute_with_ctx(struct ggml_context * ctx, struct ggml_cgraph * cgraph, int n_threads);

    /* ---------------------------------------------- CPU features (0 or 1) */

    /* x86 */
    GGML_BACKEND_API int ggml_cpu_has_sse3       (void);
    GGML_BACKEND_API int ggml_cpu_has_ssse3      (void);
    GGML_BACKEND_API int ggml_cpu_has_avx        (void);
    GGML_BACKEND_API int ggml_cpu_has_avx_vnni   (void);
    GGML_BACKEND_API int ggml_cpu_has_avx2       (void);
    GGML_BACKEND_API int ggml_cpu_has_bmi2       (void);
    GGML_BACKEND_API int ggml_cpu_has_f16c       (void);
    GGML_BACKEND_API int ggml_cpu_has_fma        (void);
    GGML_BACKEND_API int ggml_cpu_has_avx512     (void);
    GGML_BACKEND_API int ggml_cpu_has_avx512_vbmi(void);
    GGML_BACKEND_API int ggml_cpu_has_avx512_vnni(void);
    GGML_BACKEND_API int ggml_cpu_has_avx512_bf16(void);
    GGML_BACKEND_API int ggml_cpu_has_amx_int8   (void);
    /* ARM */
    GGML_BACKEND_API int ggml_cpu_has_neon       (void);
    GGML_BACKEND_API int ggml_cpu_has_arm_fma    (void);
    GGML_BACKEND_API int ggml_cpu_has_fp16_va    (void);
    GGML_BACKEND_API int ggml_cpu_has_dotprod    (void);
    GGML_BACKEND_API int ggml_cpu_has_matmul_int8(void);
    GGML_BACKEND_API int ggml_cpu_has_sve        (void);
    /* SVE vector length in bytes, 0 without SVE. */
    GGML_BACKEND_API int ggml_cpu_get_sve_cnt    (void);
    GGML_BACKEND_API int ggml_cpu_has_sme        (void);
    GGML_BACKEND_API int ggml_cpu_has_sme2       (void);
    /* other architectures */
    GGML_BACKEND_API int ggml_cpu_has_riscv_v    (void);
    /* RISC-V vector length in bytes, 0 without RVV. */
    GGML_BACKEND_API int ggml_cpu_get_rvv_vlen   (void);
    GGML_BACKEND_API int ggml_cpu_has_vsx        (void);
    GGML_BACKEND_API int ggml_cpu_has_vxe        (void);
    GGML_BACKEND_API int ggml_cpu_has_wasm_simd  (void);
    GGML_BACKEND_API int ggml_cpu_has_llamafile  (void);

    /* Dot product of n elements of rows x and y into s (bs, bx, by are
     * strides for nrc > 1 simultaneous rows). */
    typedef void (*ggml_vec_dot_t)  (int n, float * GGML_RESTRICT s, size_t bs, const void * GGML_RESTRICT x, size_t bx,
                                     const void * GGML_RESTRICT y, size_t by, int nrc);

    /* Kernels the CPU backend uses for a type. */
    struct ggml_type_traits_cpu {
        ggml_from_float_t        from_float;   /* fast encoder, or NULL */
        ggml_vec_dot_t           vec_dot;      /* dot product against vec_dot_type */
        enum ggml_type           vec_dot_type; /* type the other operand is converted to */
        int64_t                  nrows;        /* rows vec_dot handles per call */
    };

    /* CPU traits of a type; NULL (logged) for a value outside the enum. */
    GGML_BACKEND_API const struct ggml_type_traits_cpu * ggml_get_type_traits_cpu(enum ggml_type type);

    /* Detects CPU features and builds lookup tables; called by every entry
     * point that needs it, safe to call more than once. */
    GGML_BACKEND_API void ggml_cpu_init(void);

    /* ------------------------------------------------------ CPU backend */

    /* New CPU backend with the default thread count. */
    GGML_BACKEND_API ggml_backend_t ggml_backend_cpu_init(void);

    /* True when backend is a CPU backend. */
    GGML_BACKEND_API bool ggml_backend_is_cpu                (ggml_backend_t backend);
    GGML_BACKEND_API void ggml_backend_cpu_set_n_threads     (ggml_backend_t backend_cpu, int n_threads);
    /* Uses the given pool (NULL: a pool of the backend's own). */
    GGML_BACKEND_API void ggml_backend_cpu_set_threadpool    (ggml_backend_t backend_cpu, ggml_threadpool_t threadpool);
    GGML_BACKEND_API void ggml_backend_cpu_set_abort_callback(ggml_backend_t backend_cpu, ggml_abort_callback abort_callback, void * abort_callback_data);

    /* Restricts the backend to the plain C reference kernels. */
    GGML_BACKEND_API void ggml_backend_cpu_set_use_ref(ggml_backend_t backend_cpu, bool use_ref);

    /* Registry of the CPU device. */
    GGML_BACKEND_API ggml_backend_reg_t ggml_backend_cpu_reg(void);

    /* Row conversions with the fastest kernels of this CPU (n elements). */
    GGML_BACKEND_API void ggml_cpu_fp32_to_fp32(const float *,       float *, int64_t);
    GGML_BACKEND_API void ggml_cpu_fp32_to_i32 (const float *,     int32_t *, int64_t);
    GGML_BACKEND_API void ggml_cpu_fp32_to_fp16(const float *, ggml_fp16_t *, int64_t);
    GGML_BACKEND_API void ggml_cpu_fp16_to_fp32(const ggml_fp16_t *, float *, int64_t);
    GGML_BACKEND_API void ggml_cpu_fp32_to_bf16(const float *, ggml_bf16_t *, int64_t);
    GGML_BACKEND_API void ggml_cpu_bf16_to_fp32(const ggml_bf16_t *, float *, int64_t);

#ifdef __cplusplus
}
#endif

#endif /* GGML_CPU_H */
