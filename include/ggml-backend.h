/*
 * ggml-backend.h - buffers, backends, devices, the registry and the
 * scheduler.
 *
 * A buffer type describes where memory comes from; a buffer is a block of
 * it holding tensor data.  A device is one compute unit (CPU, GPU,
 * accelerator) found through a registry; a backend is a stream of work on
 * a device.  The scheduler splits one graph over several backends.
 *
 * Every handle is checked: a NULL, freed or foreign handle is reported
 * through the log and the call returns NULL, false, 0 or an error status.
 */
#ifndef GGML_BACKEND_H
#define GGML_BACKEND_H

#include "ggml.h"
#include "ggml-alloc.h"

/* Marks a public symbol of a backend; same meaning as GGML_API. */
#if defined(__GNUC__) || defined(__clang__)
#    define GGML_BACKEND_API __attribute__((visibility("default"))) extern
#else
#    define GGML_BACKEND_API extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

    typedef struct ggml_backend_buffer_type * ggml_backend_buffer_type_t;
    typedef struct ggml_backend_buffer * ggml_backend_buffer_t;
    typedef struct ggml_backend_event * ggml_backend_event_t;
    typedef struct ggml_backend * ggml_backend_t;
    typedef void * ggml_backend_graph_plan_t;
    typedef struct ggml_backend_reg * ggml_backend_reg_t;
    typedef struct ggml_backend_device * ggml_backend_dev_t;

    /* ------------------------------------------------------ buffer type */

    /* Name of the buffer type, e.g. "CPU". */
    GGML_API const char *          ggml_backend_buft_name          (ggml_backend_buffer_type_t buft);
    /* New buffer of size bytes; NULL (logged) on failure.  Size 0 gives a
     * valid empty buffer. */
    GGML_API ggml_backend_buffer_t ggml_backend_buft_alloc_buffer  (ggml_backend_buffer_type_t buft, size_t size);
    /* Alignment every tensor placed in such a buffer must have. */
    GGML_API size_t                ggml_backend_buft_get_alignment (ggml_backend_buffer_type_t buft);
    /* Largest buffer that can be allocated (SIZE_MAX when unlimited). */
    GGML_API size_t                ggml_backend_buft_get_max_size  (ggml_backend_buffer_type_t buft);
    /* Bytes the tensor needs in such a buffer, padding included. */
    GGML_API size_t                ggml_backend_buft_get_alloc_size(ggml_backend_buffer_type_t buft, const struct ggml_tensor * tensor);
    /* True when the data is host memory in the standard tensor layout. */
    GGML_API bool                  ggml_backend_buft_is_host       (ggml_backend_buffer_type_t buft);
    /* Device the buffer type belongs to, or NULL. */
    GGML_API ggml_backend_dev_t    ggml_backend_buft_get_device    (ggml_backend_buffer_type_t buft);

    /* ----------------------------------------------------------- buffer */

    /* What a buffer holds; schedulers and backends may use it as a hint. */
    enum ggml_backend_buffer_usage {
        GGML_BACKEND_BUFFER_USAGE_ANY = 0,
        GGML_BACKEND_BUFFER_USAGE_WEIGHTS = 1,
        GGML_BACKEND_BUFFER_USAGE_COMPUTE = 2,
    };

    /* Name of the buffer's type. */
    GGML_API const char *                   ggml_backend_buffer_name          (ggml_backend_buffer_t buffer);
    /* Frees the buffer; NULL is a no-op.  The data pointers of tensors
     * placed in it dangle afterwards. */
    GGML_API void                           ggml_backend_buffer_free          (ggml_backend_buffer_t buffer);
    /* Address of the first byte (not dereferenceable for device memory). */
    GGML_API void *                         ggml_backend_buffer_get_base      (ggml_backend_buffer_t buffer);
    /* Size in bytes. */
    GGML_API size_t                         ggml_backend_buffer_get_size      (ggml_backend_buffer_t buffer);
    /* Lets the buffer prepare a tensor whose data was placed in it. */
    GGML_API enum ggml_status               ggml_backend_buffer_init_tensor   (ggml_backend_buffer_t buffer, struct ggml_tensor * tensor);
    /* As the ggml_backend_buft_* functions, for the buffer's type. */
    GGML_API size_t                         ggml_backend_buffer_get_alignment (ggml_backend_buffer_t buffer);
    GGML_API size_t                         ggml_backend_buffer_get_max_size  (ggml_backend_buffer_t buffer);
    GGML_API size_t                         ggml_backend_buffer_get_alloc_size(ggml_backend_buffer_t buffer, const struct ggml_tensor * tensor);
    /* Sets every byte of the buffer to value. */
    GGML_API void                           ggml_backend_buffer_clear         (ggml_backend_buffer_t buffer, uint8_t value);
    GGML_API bool                           ggml_backend_buffer_is_host       (ggml_backend_buffer_t buffer);
    GGML_API void                           ggml_backend_buffer_set_usage     (ggml_backend_buffer_t buffer, enum ggml_backend_buffer_usage usage);
    GGML_API enum ggml_backend_buffer_usage ggml_backend_buffer_get_usage     (ggml_backend_buffer_t buffer);
    GGML_API ggml_backend_buffer_type_t     ggml_backend_buffer_get_type      (ggml_backend_buffer_t buffer);
    /* Drops per-tensor state the buffer keeps (its tensors must be re-initialized). */
    GGML_API void                           ggml_backend_buffer_reset         (ggml_backend_buffer_t buffer);

    /* Copies the data of src into dst (same layout, any buffers, any backends). */
    GGML_API void ggml_backend_tensor_copy(const struct ggml_tensor * src, struct ggml_tensor * dst);

    /* --------------------------------------------------- backend (stream) */

    /* Identifier of the backend implementation. */
    GGML_API ggml_guid_t  ggml_backend_guid(ggml_backend_t backend);
    GGML_API const char * ggml_backend_name(ggml_backend_t backend);
    /* Waits for pending work and frees the backend; NULL is a no-op. */
    GGML_API void         ggml_backend_free(ggml_backend_t backend);

    /* Buffer type of the backend's device. */
    GGML_API ggml_backend_buffer_type_t ggml_backend_get_default_buffer_type(ggml_backend_t backend);
    /* Buffer of the default type. */
    GGML_API ggml_backend_buffer_t      ggml_backend_alloc_buffer(ggml_backend_t backend, size_t size);
    GGML_API size_t                     ggml_backend_get_alignment(ggml_backend_t backend);
    GGML_API size_t                     ggml_backend_get_max_size(ggml_backend_t backend);

    /* Queues a copy of size bytes between host memory data and the tensor's
     * data at byte offset; data must stay valid until ggml_backend_synchronize. */
    GGML_API void ggml_backend_tensor_set_async(ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
    GGML_API void ggml_backend_tensor_get_async(ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);
    /* As ggml_backend_tensor_set_2d and _get_2d, queued. */
    GGML_API void ggml_backend_tensor_set_2d_async(ggml_backend_t backend,       struct ggml_tensor * tensor, const void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
    GGML_API void ggml_backend_tensor_get_2d_async(ggml_backend_t backend, const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);

    /* Copies size bytes between host memory and the tensor's data at byte
     * offset; the range must lie inside the tensor. */
    GGML_API void ggml_backend_tensor_set(      struct ggml_tensor * tensor, const void * data, size_t offset, size_t size);
    GGML_API void ggml_backend_tensor_get(const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size);
    /* n_copies runs of size bytes: run i at byte offset + i * stride_tensor
     * of the tensor and at data + i * stride_data on the host; every run
     * must lie inside the tensor. */
    GGML_API void ggml_backend_tensor_set_2d(      struct ggml_tensor * tensor, const void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
    GGML_API void ggml_backend_tensor_get_2d(const struct ggml_tensor * tensor,       void * data, size_t offset, size_t size, size_t n_copies, size_t stride_tensor, size_t stride_data);
    /* Sets size bytes of the tensor's data at offset to value. */
    GGML_API void ggml_backend_tensor_memset(   struct ggml_tensor * tensor,     uint8_t value, size_t offset, size_t size);

    /* Waits until every queued operation of the backend has finished. */
    GGML_API void ggml_backend_synchronize(ggml_backend_t backend);

    /* Prepared execution of a graph, for backends that support plans. */
    GGML_API ggml_backend_graph_plan_t ggml_backend_graph_plan_create(ggml_backend_t backend, struct ggml_cgraph * cgraph);
    GGML_API void                      ggml_backend_graph_plan_free  (ggml_backend_t backend, ggml_backend_graph_plan_t plan);

    GGML_API enum ggml_status ggml_backend_graph_plan_compute (ggml_backend_t backend, ggml_backend_graph_plan_t plan);
    /* Computes the graph and waits for the result. */
    GGML_API enum ggml_status ggml_backend_graph_compute      (ggml_backend_t backend, struct ggml_cgraph * cgraph);
    /* Queues the graph; ggml_backend_synchronize waits for it. */
    GGML_API enum ggml_status ggml_backend_graph_compute_async(ggml_backend_t backend, struct ggml_cgraph * cgraph);

    /* As the ggml_backend_dev_* functions, for the backend's device. */
    GGML_API bool ggml_backend_supports_op(ggml_backend_t backend, const struct ggml_tensor * op);
    GGML_API bool ggml_backend_supports_buft(ggml_backend_t backend, ggml_backend_buffer_type_t buft);
    GGML_API bool ggml_backend_offload_op(ggml_backend_t backend, const struct ggml_tensor * op);

    /* Copies src into dst after the work queued on backend_src; backend_dst
     * waits for the copy before its later work.  Falls back to a blocking
     * copy when the backends cannot do it asynchronously. */
    GGML_API void ggml_backend_tensor_copy_async(ggml_backend_t backend_src, ggml_backend_t backend_dst, const struct ggml_tensor * src, struct ggml_tensor * dst);

    /* Device the backend runs on. */
    GGML_API ggml_backend_dev_t ggml_backend_get_device(ggml_backend_t backend);

    /* ----------------------------------------------------------- events */

    /* New event of the device; NULL when the device has no events. */
    GGML_API ggml_backend_event_t ggml_backend_event_new(ggml_backend_dev_t device);
    /* Frees the event; NULL is a no-op. */
    GGML_API void                 ggml_backend_event_free(ggml_backend_event_t event);
    /* Marks the current end of the backend's queue. */
    GGML_API void                 ggml_backend_event_record(ggml_backend_event_t event, ggml_backend_t backend);
    /* Blocks the caller until the recorded point is reached. */
    GGML_API void                 ggml_backend_event_synchronize(ggml_backend_event_t event);
    /* Makes later work queued on backend wait for the recorded point. */
    GGML_API void                 ggml_backend_event_wait(ggml_backend_t backend, ggml_backend_event_t event);

    /* ----------------------------------------------------------- device */

    /* Kind of device. */
    enum ggml_backend_dev_type {
        GGML_BACKEND_DEVICE_TYPE_CPU     = 0, /* the CPU, using system memory */
        GGML_BACKEND_DEVICE_TYPE_GPU     = 1, /* a GPU with its own memory */
        GGML_BACKEND_DEVICE_TYPE_GPU_UMA = 2, /* an integrated GPU sharing system memory */
        GGML_BACKEND_DEVICE_TYPE_IGPU    = GGML_BACKEND_DEVICE_TYPE_GPU_UMA, /* upstream's name for GPU_UMA */
        GGML_BACKEND_DEVICE_TYPE_ACCEL   = 3, /* an accelerator used together with the CPU (BLAS, NPU...) */
        GGML_BACKEND_DEVICE_TYPE_META    = 4, /* several devices acting as one, each holding slices of
                                                 the tensors (ggml_backend_meta_device) */
    };

    /* What a device can do. */
    struct ggml_backend_dev_caps {
        bool async;                /* asynchronous operations */
        bool host_buffer;          /* pinned host buffer type */
        bool buffer_from_host_ptr; /* buffers wrapping host memory */
        bool events;               /* event synchronization */
        bool mmap_support;         /* tensors may be loaded from memory-mapped files
                                      (its buffers read host memory the program maps) */
    };

    /* Everything known about a device. */
    struct ggml_backend_dev_props {
        const char * name;          /* short identifier, e.g. "CPU" or "CUDA0" */
        const char * description;   /* e.g. the processor's model name */
        size_t memory_free;         /* bytes */
        size_t memory_total;        /* bytes */
        enum ggml_backend_dev_type type;
        const char * device_id;     /* lower-case PCI bus id
                                       "domain:bus:device.function", or NULL */
        struct ggml_backend_dev_caps caps;
    };

    GGML_API const char *                  ggml_backend_dev_name(ggml_backend_dev_t device);
    GGML_API const char *                  ggml_backend_dev_description(ggml_backend_dev_t device);
    /* Free and total device memory in bytes. */
    GGML_API void                          ggml_backend_dev_memory(ggml_backend_dev_t device, size_t * free, size_t * total);
    GGML_API enum ggml_backend_dev_type    ggml_backend_dev_type(ggml_backend_dev_t device);
    /* Fills *props. */
    GGML_API void                          ggml_backend_dev_get_props(ggml_backend_dev_t device, struct ggml_backend_dev_props * props);
    /* Registry that provides the device. */
    GGML_API ggml_backend_reg_t            ggml_backend_dev_backend_reg(ggml_backend_dev_t device);
    /* New backend (stream) on the device; params is backend-specific, may be NULL. */
    GGML_API ggml_backend_t                ggml_backend_dev_init(ggml_backend_dev_t device, const char * params);
    /* Preferred buffer type of the device. */
    GGML_API ggml_backend_buffer_type_t    ggml_backend_dev_buffer_type(ggml_backend_dev_t device);
    /* Host (pinned) buffer type for fast transfers, or NULL. */
    GGML_API ggml_backend_buffer_type_t    ggml_backend_dev_host_buffer_type(ggml_backend_dev_t device);
    /* Buffer wrapping size bytes of host memory at ptr (not copied, not
     * freed); NULL when unsupported. */
    GGML_API ggml_backend_buffer_t         ggml_backend_dev_buffer_from_host_ptr(ggml_backend_dev_t device, void * ptr, size_t size, size_t max_tensor_size);

    /* True when the device can compute the node op. */
    GGML_API bool                          ggml_backend_dev_supports_op(ggml_backend_dev_t device, const struct ggml_tensor * op);
    /* True when the device can use tensors in buffers of type buft. */
    GGML_API bool                          ggml_backend_dev_supports_buft(ggml_backend_dev_t device, ggml_backend_buffer_type_t buft);
    /* True when the device wants to run op even though its weights live elsewhere. */
    GGML_API bool                          ggml_backend_dev_offload_op(ggml_backend_dev_t device, const struct ggml_tensor * op);

    /* --------------------------------------------------------- registry */

    GGML_API const char *       ggml_backend_reg_name(ggml_backend_reg_t reg);
    /* Number of devices of the registry. */
    GGML_API size_t             ggml_backend_reg_dev_count(ggml_backend_reg_t reg);
    /* Device index of the registry, or NULL. */
    GGML_API ggml_backend_dev_t ggml_backend_reg_dev_get(ggml_backend_reg_t reg, size_t index);
    /* Backend-specific function called name, or NULL. */
    GGML_API void *             ggml_backend_reg_get_proc_address(ggml_backend_reg_t reg, const char * name);

    /* Signatures of functions commonly found with ggml_backend_reg_get_proc_address. */

    /* "ggml_backend_comm_init": a communication context over backends[0..n_backends)
       of the registry's devices, or NULL. */
    typedef void * (*ggml_backend_comm_init_t)(ggml_backend_t * backends, size_t n_backends);
    /* "ggml_backend_comm_free": frees a context of ggml_backend_comm_init. */
    typedef void   (*ggml_backend_comm_free_t)(void * comm_ctx);
    /* "ggml_backend_comm_allreduce_tensor": replaces each of tensors[0..n_backends) (one per
       backend of the context, same shape) by the element-wise sum of all; false if it cannot. */
    typedef bool   (*ggml_backend_comm_allreduce_tensor_t)(void * comm_ctx, struct ggml_tensor ** tensors);

    /* "ggml_backend_split_buffer_type": buffer type splitting rows over devices. */
    typedef ggml_backend_buffer_type_t   (*ggml_backend_split_buffer_type_t)(int main_device, const float * tensor_split);
    /* "ggml_backend_set_n_threads": threads used by a backend. */
    typedef void                         (*ggml_backend_set_n_threads_t)(ggml_backend_t backend, int n_threads);
    /* "ggml_backend_dev_get_extra_bufts": NULL-terminated array of extra buffer types. */
    typedef ggml_backend_buffer_type_t * (*ggml_backend_dev_get_extra_bufts_t)(ggml_backend_dev_t device);
    /* "ggml_backend_set_abort_callback": abort hook polled during computation. */
    typedef void                         (*ggml_backend_set_abort_callback_t)(ggml_backend_t backend, ggml_abort_callback abort_callback, void * abort_callback_data);
    /* One build or run-time feature of a backend. */
    struct ggml_backend_feature {
        const char * name;
        const char * value;
    };
    /* "ggml_backend_get_features": array ended by an entry with a NULL name. */
    typedef struct ggml_backend_feature * (*ggml_backend_get_features_t)(ggml_backend_reg_t reg);

    /* Adds a registry and its devices to the global lists (a backend built
       into the program; plugins are registered by ggml_backend_load). */
    GGML_API void ggml_backend_register(ggml_backend_reg_t reg);

    /* Adds a device to the global list (its registry must be registered). */
    GGML_API void ggml_backend_device_register(ggml_backend_dev_t device);

    /* Registered registries. */
    GGML_API size_t             ggml_backend_reg_count(void);
    GGML_API ggml_backend_reg_t ggml_backend_reg_get(size_t index);
    /* Registry by case-insensitive name, or NULL. */
    GGML_API ggml_backend_reg_t ggml_backend_reg_by_name(const char * name);

    /* Devices of every registered registry. */
    GGML_API size_t             ggml_backend_dev_count(void);
    GGML_API ggml_backend_dev_t ggml_backend_dev_get(size_t index);
    /* Device by case-insensitive name, or NULL. */
    GGML_API ggml_backend_dev_t ggml_backend_dev_by_name(const char * name);
    /* First device of that type, or NULL. */
    GGML_API ggml_backend_dev_t ggml_backend_dev_by_type(enum ggml_backend_dev_type type);

    /* ggml_backend_dev_init(ggml_backend_dev_by_name(name), params). */
    GGML_API ggml_backend_t ggml_backend_init_by_name(const char * name, const char * params);
    /* ggml_backend_dev_init(ggml_backend_dev_by_type(type), params). */
    GGML_API ggml_backend_t ggml_backend_init_by_type(enum ggml_backend_dev_type type, const char * params);
    /* Backend on the first GPU, else integrated GPU, else the CPU. */
    GGML_API ggml_backend_t ggml_backend_init_best(void);

    /* Loads a backend plugin and registers it; NULL (logged) on failure. */
    GGML_API ggml_backend_reg_t ggml_backend_load(const char * path);
    /* Unregisters a loaded plugin and unloads it. */
    GGML_API void               ggml_backend_unload(ggml_backend_reg_t reg);
    /* Loads every plugin of the plugin directory and of GGML_BACKEND_PATH. */
    GGML_API void               ggml_backend_load_all(void);
    /* As ggml_backend_load_all, searching dir_path instead of the plugin directory. */
    GGML_API void               ggml_backend_load_all_from_path(const char * dir_path);

    /* -------------------------------------------------------- scheduler */

    /*
     * The scheduler runs one graph over several backends: it assigns each
     * node to a backend (explicit choices, then where the weights live,
     * then support), cuts the graph into splits, copies split inputs
     * between backends and allocates compute buffers.  Typical use:
     *
     *     sched = ggml_backend_sched_new(backends, NULL, n, GGML_DEFAULT_GRAPH_SIZE, false, true);
     *     ggml_backend_sched_reserve(sched, worst_case_graph);  // optional
     *     ggml_backend_sched_alloc_graph(sched, graph);
     *     ... ggml_backend_tensor_set() the inputs ...
     *     ggml_backend_sched_graph_compute(sched, graph);
     *     ggml_backend_sched_reset(sched);  // before the next graph
     */

    typedef struct ggml_backend_sched * ggml_backend_sched_t;

    /* Called for each node: with ask true, return whether you want to see
     * node t; with ask false, t has been computed and returning false
     * cancels the rest of the graph. */
    typedef bool (*ggml_backend_sched_eval_callback)(struct ggml_tensor * t, bool ask, void * user_data);

    /* New scheduler over backends[0..n_backends) in priority order (the
     * last must be the CPU), with compute buffer types bufts (NULL: each
     * backend's default), for graphs of up to graph_size nodes; parallel
     * keeps several copies of split inputs in flight, op_offload lets
     * devices take ops whose weights are in host memory. */
    GGML_API ggml_backend_sched_t ggml_backend_sched_new(ggml_backend_t * backends, ggml_backend_buffer_type_t * bufts, int n_backends, size_t graph_size, bool parallel, bool op_offload);
    /* Frees the scheduler and its buffers; NULL is a no-op. */
    GGML_API void                 ggml_backend_sched_free(ggml_backend_sched_t sched);

    /* Sizes and allocates the compute buffers for a worst-case graph. */
    GGML_API bool                 ggml_backend_sched_reserve(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph);
    /* Stores into sizes[0..n_backends) the compute buffer bytes the graph
     * would need per backend, allocating nothing. */
    GGML_API void                 ggml_backend_sched_reserve_size(ggml_backend_sched_t sched, struct ggml_cgraph * measure_graph, size_t * sizes);

    GGML_API int                  ggml_backend_sched_get_n_backends(ggml_backend_sched_t sched);
    /* Backend i, or NULL. */
    GGML_API ggml_backend_t       ggml_backend_sched_get_backend(ggml_backend_sched_t sched, int i);

    /* Splits of the last scheduled graph. */
    GGML_API int                  ggml_backend_sched_get_n_splits(ggml_backend_sched_t sched);
    /* Copies of the inputs kept for pipelining: 1, or 4 with parallel. */
    GGML_API int                  ggml_backend_sched_get_n_copies(ggml_backend_sched_t sched);

    /* Compute buffer type / current compute buffer size of a backend. */
    GGML_API ggml_backend_buffer_type_t ggml_backend_sched_get_buffer_type(ggml_backend_sched_t sched, ggml_backend_t backend);
    GGML_API size_t               ggml_backend_sched_get_buffer_size(ggml_backend_sched_t sched, ggml_backend_t backend);

    /* Pins node to backend until ggml_backend_sched_reset. */
    GGML_API void                 ggml_backend_sched_set_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node, ggml_backend_t backend);
    /* Backend assigned to node, or NULL. */
    GGML_API ggml_backend_t       ggml_backend_sched_get_tensor_backend(ggml_backend_sched_t sched, struct ggml_tensor * node);

    /* Assigns backends and splits the graph without allocating. */
    GGML_API void                 ggml_backend_sched_split_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
    /* Splits and allocates the graph without computing it. */
    GGML_API bool                 ggml_backend_sched_alloc_graph(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
    /* Allocates if needed, computes and waits. */
    GGML_API enum ggml_status     ggml_backend_sched_graph_compute(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
    /* Allocates if needed and queues the computation. */
    GGML_API enum ggml_status     ggml_backend_sched_graph_compute_async(ggml_backend_sched_t sched, struct ggml_cgraph * graph);
    /* Waits for every backend of the scheduler. */
    GGML_API void                 ggml_backend_sched_synchronize(ggml_backend_sched_t sched);

    /* Forgets the current graph's assignments and allocations. */
    GGML_API void                 ggml_backend_sched_reset(ggml_backend_sched_t sched);

    /* Installs the per-node observer (NULL removes it). */
    GGML_API void                 ggml_backend_sched_set_eval_callback(ggml_backend_sched_t sched, ggml_backend_sched_eval_callback callback, void * user_data);

    /* ------------------------------------------------------ META device */

    /*
     * A META device joins up to GGML_BACKEND_META_MAX_DEVICES devices
     * ("simple" devices) into one: each tensor allocated in its buffer type
     * is held as one slice per simple device, as a callback says, and its
     * backend computes a graph on every simple device's slices.  See
     * ggml-backend(7).
     */

#define GGML_BACKEND_META_MAX_DEVICES 16

    /* How a tensor is spread over the simple devices. */
    enum ggml_backend_meta_split_axis {
        GGML_BACKEND_SPLIT_AXIS_0 = 0,          /* sliced along dimension 0 ... */
        GGML_BACKEND_SPLIT_AXIS_1 = 1,
        GGML_BACKEND_SPLIT_AXIS_2 = 2,
        GGML_BACKEND_SPLIT_AXIS_3 = 3,          /* ... or 3 */
        GGML_BACKEND_SPLIT_AXIS_MIRRORED = 10,  /* a full copy on every device */
        GGML_BACKEND_SPLIT_AXIS_PARTIAL  = 11,  /* the sum of the devices' full-shaped copies */
        GGML_BACKEND_SPLIT_AXIS_NONE     = 98,  /* not a state of a tensor: bookkeeping */
        GGML_BACKEND_SPLIT_AXIS_UNKNOWN  = 99,  /* not a state of a tensor: bookkeeping */
    };
    /* "0".."3", "MIRRORED", "PARTIAL", "NONE", "UNKNOWN"; NULL (logged) otherwise. */
    GGML_API const char * ggml_backend_meta_split_axis_name(enum ggml_backend_meta_split_axis split_axis);

    /* The split of one tensor.  Along a split axis the tensor is a run of
     * segments; segment s is repeated nr[s] times and each repetition is
     * cut into ne[s*n_devs + 0], ..., ne[s*n_devs + n_devs-1] elements, one
     * piece per device in device order.  A device's slice is its pieces in
     * order.  n_segments == 0 asks for an even split (ggml_backend_meta_device(3)). */
    struct ggml_backend_meta_split_state {
        enum ggml_backend_meta_split_axis axis;
        int64_t  ne[16*GGML_BACKEND_META_MAX_DEVICES]; /* piece sizes, segment-major */
        uint32_t nr[16];                               /* repetitions of each segment */
        uint32_t n_segments;                           /* 0..16 */
    };

    /* Split of a tensor that is not computed (a weight or an input). */
    typedef struct ggml_backend_meta_split_state (*ggml_backend_meta_get_split_state_t)(const struct ggml_tensor * tensor, void * userdata);

    /* META device over devs[0..n_devs) (1..16, repeats allowed), splitting
     * tensors as get_split_state says; the same arguments give the same
     * device, which lives until the process ends.  NULL (logged) on bad
     * arguments. */
    GGML_API ggml_backend_dev_t ggml_backend_meta_device(
        ggml_backend_dev_t * devs, size_t n_devs, ggml_backend_meta_get_split_state_t get_split_state, void * get_split_state_ud);

    /* -------------------------------------------------------- utilities */

    /* Deep copy of a graph with its data on another backend. */
    struct ggml_backend_graph_copy {
        ggml_backend_buffer_t buffer;          /* holds the copied data */
        struct ggml_context * ctx_allocated;   /* tensors with data */
        struct ggml_context * ctx_unallocated; /* views */
        struct ggml_cgraph * graph;            /* the copied graph */
    };

    /* Copies graph and its data into a new buffer of backend; on failure
     * every member is NULL. */
    GGML_API struct ggml_backend_graph_copy ggml_backend_graph_copy(ggml_backend_t backend, struct ggml_cgraph * graph);
    /* Frees what ggml_backend_graph_copy made. */
    GGML_API void                           ggml_backend_graph_copy_free(struct ggml_backend_graph_copy copy);

    /* Compares node node_index as computed by two backends (t1, t2);
     * returning false stops the comparison. */
    typedef bool (*ggml_backend_eval_callback)(int node_index, struct ggml_tensor * t1, struct ggml_tensor * t2, void * user_data);

    /* Computes graph node by node on both backends and calls callback after
     * each node that computes something (or, when num_test_nodes > 0, after
     * computing the whole graph, for those nodes); false when a callback
     * returned false. */
    GGML_API bool ggml_backend_compare_graph_backend(ggml_backend_t backend1, ggml_backend_t backend2, struct ggml_cgraph * graph, ggml_backend_eval_callback callback, void * user_data, const struct ggml_tensor * const * test_nodes, size_t num_test_nodes);

    /* Places tensor at address addr inside buffer and initializes it there. */
    GGML_API enum ggml_status ggml_backend_tensor_alloc(ggml_backend_buffer_t buffer, struct ggml_tensor * tensor, void * addr);
    /* Gives a view its data pointer and buffer from its view_src. */
    GGML_API enum ggml_status ggml_backend_view_init(struct ggml_tensor * tensor);

    /* Host-memory buffer wrapping ptr[0..size) (not copied, not freed). */
    GGML_API ggml_backend_buffer_t      ggml_backend_cpu_buffer_from_ptr(void * ptr, size_t size);
    /* Buffer type of plain host memory. */
    GGML_API ggml_backend_buffer_type_t ggml_backend_cpu_buffer_type(void);

#ifdef __cplusplus
}
#endif

#endif /* GGML_BACKEND_H */
