/*
 * ggml-backend-info - what libggml-backend sees on this machine: the
 * plugin search path, every plugin file found on it and what became of
 * it, the registries with their features, the devices, and the CPU
 * backend's topology and thread and memory placement.
 *
 *   ggml-backend-info [--json] [--numa STRATEGY] [--require NAME]... [--help] [--version]
 *
 * The plugins are loaded as any program loads them
 * (ggml_backend_load_all).  Then each plugin file of the search path is
 * offered again to ggml_backend_load with a log callback that keeps the
 * loader's messages: a file already registered comes back silently, a
 * rejected one is rejected again with the same reason, and a file whose
 * registry lost to another of the same name is reported as such.  Nothing
 * is unloaded: what the tool reports is what a program would get.
 *
 * Only the public API is used.  The plugin directory is the one configure
 * chose (backenddir), compiled in as GGML_BACKEND_TOOL_DIR; the loader
 * itself reads the same value.
 *
 * Exit status: 0; 2 on a bad option or when a --require'd device is
 * missing.
 */
#include "config.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "ggml.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "tool-util.h"

#ifndef GGML_BACKEND_TOOL_DIR
#    error "GGML_BACKEND_TOOL_DIR (the plugin directory) must be defined"
#endif

#define PROGRAM "ggml-backend-info"

/* ------------------------------------------------------ search path */

/* One place the loader searches. */
struct place {
    char *path;
    const char *origin;   /* "plugin directory" or "GGML_BACKEND_PATH" */
    const char *state;    /* "directory", "file", "missing", "not absolute: ignored", ... */
};

/* One plugin file found, and what became of it. */
struct plugin_file {
    char *path;
    const char *status;   /* "loaded", "not used", "rejected" */
    char *registry;       /* name of the registry it provides (loaded or not used) */
    char *reason;         /* the loader's message, or NULL */
};

struct report {
    struct place *places;
    size_t n_places;
    struct plugin_file *files;
    size_t n_files;
};

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size);
    if (p == NULL) {
        fprintf(stderr, PROGRAM ": out of memory\n");
        exit(1);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    return strcpy(xrealloc(NULL, strlen(s) + 1), s);
}

static void add_place(struct report *r, const char *path, const char *origin)
{
    r->places = xrealloc(r->places, (r->n_places + 1) * sizeof *r->places);
    struct place *p = &r->places[r->n_places++];
    struct stat st;
    p->path = xstrdup(path);
    p->origin = origin;
    if (path[0] != '/')
        p->state = "not an absolute path: ignored";
    else if (stat(path, &st) != 0)
        p->state = "missing";
    else if (S_ISDIR(st.st_mode))
        p->state = "directory";
    else
        p->state = "file";
}

static void add_file(struct report *r, const char *path)
{
    for (size_t i = 0; i < r->n_files; i++)
        if (strcmp(r->files[i].path, path) == 0)
            return;
    r->files = xrealloc(r->files, (r->n_files + 1) * sizeof *r->files);
    r->files[r->n_files++] = (struct plugin_file) { .path = xstrdup(path) };
}

/* The loader's rule for plugin file names: libggml-NAME.so, not this library. */
static int plugin_name_filter(const struct dirent *entry)
{
    const char *name = entry->d_name;
    const size_t len = strlen(name);
    return len > strlen("libggml-.so") && strncmp(name, "libggml-", 8) == 0 &&
           strcmp(name + len - 3, ".so") == 0 && strcmp(name, "libggml-backend.so") != 0;
}

static void find_files(struct report *r)
{
    for (size_t i = 0; i < r->n_places; i++) {
        const struct place *p = &r->places[i];
        if (strcmp(p->state, "file") == 0) {
            add_file(r, p->path);
            continue;
        }
        if (strcmp(p->state, "directory") != 0)
            continue;
        struct dirent **entries;
        int n = scandir(p->path, &entries, plugin_name_filter, alphasort);
        for (int e = 0; e < n; e++) {
            size_t len = strlen(p->path) + strlen(entries[e]->d_name) + 2;
            char *file = xrealloc(NULL, len);
            struct stat st;
            snprintf(file, len, "%s/%s", p->path, entries[e]->d_name);
            /* what is not a plugin file (a FIFO...) is listed too: the loader says why it refused it */
            if (lstat(file, &st) == 0)
                add_file(r, file);
            free(file);
            free(entries[e]);
        }
        if (n >= 0)
            free(entries);
    }
}

/* ------------------------------------------------- the loader's word */

/* Messages logged during one probe, joined with "; ". */
static char captured[2048];

static void capture_log(enum ggml_log_level level, const char *text, void *user_data)
{
    (void) user_data;
    if (level == GGML_LOG_LEVEL_DEBUG)
        return;
    const char *prefix = "ggml_backend_load: ";
    if (strncmp(text, prefix, strlen(prefix)) == 0)
        text += strlen(prefix);
    size_t used = strlen(captured), len = strcspn(text, "\n");
    if (len == 0)
        return;
    if (used > 0 && used + 2 < sizeof captured) {
        strcat(captured, "; ");
        used += 2;
    }
    if (used + len >= sizeof captured)
        len = sizeof captured - used - 1;
    memcpy(captured + used, text, len);
    captured[used + len] = '\0';
}

/* Offers each file to the loader again and records the outcome. */
static void probe_files(struct report *r)
{
    ggml_log_callback old_cb;
    void *old_data;
    ggml_log_get(&old_cb, &old_data);
    ggml_log_set(capture_log, NULL);
    for (size_t i = 0; i < r->n_files; i++) {
        struct plugin_file *f = &r->files[i];
        captured[0] = '\0';
        ggml_backend_reg_t reg = ggml_backend_load(f->path);
        if (reg == NULL) {
            f->status = "rejected";
        } else {
            /* "NAME: kept A over B": this file lost to another of its name */
            f->status = strstr(captured, "kept ") != NULL ? "not used" : "loaded";
            f->registry = xstrdup(ggml_backend_reg_name(reg));
        }
        /* "plugin PATH: why" or "plugin PATH why": the path is said already */
        const char *why = captured;
        size_t len = strlen("plugin ");
        if (strncmp(why, "plugin ", len) == 0 && strncmp(why + len, f->path, strlen(f->path)) == 0) {
            why += len + strlen(f->path);
            why += strspn(why, ": ");
        }
        f->reason = why[0] != '\0' ? xstrdup(why) : NULL;
    }
    ggml_log_set(old_cb, old_data);
}

/* --------------------------------------------------------- printing */

static const char *type_name(enum ggml_backend_dev_type type)
{
    switch (type) {
    case GGML_BACKEND_DEVICE_TYPE_CPU:     return "CPU";
    case GGML_BACKEND_DEVICE_TYPE_GPU:     return "GPU";
    case GGML_BACKEND_DEVICE_TYPE_GPU_UMA: return "GPU_UMA";
    case GGML_BACKEND_DEVICE_TYPE_ACCEL:   return "ACCEL";
    case GGML_BACKEND_DEVICE_TYPE_META:    return "META";
    }
    return "unknown";
}

static const char *buft_name_or_null(ggml_backend_buffer_type_t buft)
{
    return buft != NULL ? ggml_backend_buft_name(buft) : NULL;
}

/* The CPU backend's kernel level in use and the levels to choose from. */
static void print_cpu_kernels(void)
{
    ggml_backend_reg_t cpu = ggml_backend_reg_by_name("CPU");
    const char *in_use = tool_reg_feature(cpu, "ISA");
    if (in_use == NULL)
        return;
    const char *built = tool_reg_feature(cpu, "ISA_BUILT"), *runnable = tool_reg_feature(cpu, "ISA_RUNNABLE");
    printf("\nCPU kernels: %s (built in: %s; this CPU runs: %s; GGML_CPU_ISA chooses a lower one)\n", in_use,
           built != NULL ? built : "?", runnable != NULL ? runnable : "?");
    const char *emulated = tool_reg_feature(cpu, "ISA_EMULATED");
    if (emulated != NULL)
        printf("CPU kernel emulation: %s runs through SIMDe in this test build (slowly; not for use)\n", emulated);
}

/* The first line of the text report, and all of --version. */
static void print_version(void)
{
    printf(PROGRAM " %s (libggml-backend %s, commit %s)\n", PACKAGE_VERSION, ggml_version(), ggml_commit());
}

/* The CPU backend's topology and placement text (see ggml_numa_init(3)),
 * malloc'ed, or NULL when the CPU registry does not offer it. */
static char *cpu_placement_text(void)
{
    typedef size_t (*describe_fn)(int n_threads, char *buf, size_t size);
    describe_fn describe = (describe_fn) ggml_backend_reg_get_proc_address(ggml_backend_cpu_reg(),
                                                                          "ggml_backend_cpu_describe_placement");
    if (describe == NULL)
        return NULL;
    size_t need = describe(0, NULL, 0);
    char *text = xrealloc(NULL, need + 1);
    describe(0, text, need + 1);
    return text;
}

static void print_text(const struct report *r)
{
    print_version();

    printf("\nplugin search path:\n");
    for (size_t i = 0; i < r->n_places; i++)
        printf("  %s  (%s; %s)\n", r->places[i].path, r->places[i].origin, r->places[i].state);

    printf("\nplugin files: %zu\n", r->n_files);
    for (size_t i = 0; i < r->n_files; i++) {
        const struct plugin_file *f = &r->files[i];
        printf("  %s: %s", f->path, f->status);
        if (f->registry != NULL)
            printf(" (registry %s)", f->registry);
        if (f->reason != NULL)
            printf(": %s", f->reason);
        printf("\n");
    }

    printf("\nregistries: %zu\n", ggml_backend_reg_count());
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        size_t n = ggml_backend_reg_dev_count(reg);
        printf("  %s: %zu device%s\n", ggml_backend_reg_name(reg), n, n == 1 ? "" : "s");
        const struct ggml_backend_feature *f = tool_reg_features(reg);
        if (f != NULL && f->name != NULL) {
            printf("    features:");
            for (; f->name != NULL; f++)
                printf(" %s=%s", f->name, f->value != NULL ? f->value : "");
            printf("\n");
        }
    }

    printf("\ndevices: %zu\n", ggml_backend_dev_count());
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        struct ggml_backend_dev_props props;
        ggml_backend_dev_get_props(dev, &props);
        const char *host = buft_name_or_null(ggml_backend_dev_host_buffer_type(dev));
        printf("  %s\n", props.name);
        printf("    type:          %s\n", type_name(props.type));
        printf("    description:   %s\n", props.description != NULL ? props.description : "");
        printf("    registry:      %s\n", ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)));
        printf("    memory:        %zu MiB free of %zu MiB\n", props.memory_free >> 20, props.memory_total >> 20);
        if (props.device_id != NULL)
            printf("    device id:     %s\n", props.device_id);
        printf("    capabilities:  async %s, host_buffer %s, buffer_from_host_ptr %s, events %s\n",
               props.caps.async ? "yes" : "no", props.caps.host_buffer ? "yes" : "no",
               props.caps.buffer_from_host_ptr ? "yes" : "no", props.caps.events ? "yes" : "no");
        printf("    buffer types:  default %s, host %s\n",
               buft_name_or_null(ggml_backend_dev_buffer_type(dev)), host != NULL ? host : "none");
    }

    print_cpu_kernels();

    char *placement = cpu_placement_text();
    if (placement != NULL) {
        printf("\nCPU placement (default thread count):\n");
        for (char *line = placement, *end; *line != '\0'; line = *end ? end + 1 : end) {
            end = strchr(line, '\n');
            if (end == NULL)
                end = line + strlen(line);
            printf("  %.*s\n", (int) (end - line), line);
        }
        free(placement);
    }
}

static void print_json(const struct report *r)
{
    tool_json_identity(PROGRAM);

    printf(",\n  \"search_path\": [");
    for (size_t i = 0; i < r->n_places; i++) {
        printf("%s\n    {\"path\": ", i ? "," : "");
        tool_json_string(stdout, r->places[i].path);
        printf(", \"origin\": ");
        tool_json_string(stdout, r->places[i].origin);
        printf(", \"state\": ");
        tool_json_string(stdout, r->places[i].state);
        printf("}");
    }
    printf("%s],\n  \"plugin_files\": [", r->n_places ? "\n  " : "");
    for (size_t i = 0; i < r->n_files; i++) {
        const struct plugin_file *f = &r->files[i];
        printf("%s\n    {\"path\": ", i ? "," : "");
        tool_json_string(stdout, f->path);
        printf(", \"status\": ");
        tool_json_string(stdout, f->status);
        printf(", \"registry\": ");
        tool_json_string(stdout, f->registry);
        printf(", \"message\": ");
        tool_json_string(stdout, f->reason);
        printf("}");
    }
    printf("%s],\n  \"registries\": [", r->n_files ? "\n  " : "");
    for (size_t i = 0; i < ggml_backend_reg_count(); i++) {
        ggml_backend_reg_t reg = ggml_backend_reg_get(i);
        printf("%s\n    {\"name\": ", i ? "," : "");
        tool_json_string(stdout, ggml_backend_reg_name(reg));
        printf(", \"devices\": %zu, \"features\": {", ggml_backend_reg_dev_count(reg));
        const struct ggml_backend_feature *f = tool_reg_features(reg);
        for (int k = 0; f != NULL && f->name != NULL; f++, k++) {
            printf("%s", k ? ", " : "");
            tool_json_string(stdout, f->name);
            printf(": ");
            tool_json_string(stdout, f->value != NULL ? f->value : "");
        }
        printf("}}");
    }
    printf("%s],\n  \"devices\": [", ggml_backend_reg_count() ? "\n  " : "");
    for (size_t i = 0; i < ggml_backend_dev_count(); i++) {
        ggml_backend_dev_t dev = ggml_backend_dev_get(i);
        struct ggml_backend_dev_props props;
        ggml_backend_dev_get_props(dev, &props);
        printf("%s\n    {\"name\": ", i ? "," : "");
        tool_json_string(stdout, props.name);
        printf(", \"type\": ");
        tool_json_string(stdout, type_name(props.type));
        printf(", \"description\": ");
        tool_json_string(stdout, props.description);
        printf(", \"registry\": ");
        tool_json_string(stdout, ggml_backend_reg_name(ggml_backend_dev_backend_reg(dev)));
        printf(",\n     \"memory_free\": %zu, \"memory_total\": %zu, \"device_id\": ", props.memory_free,
               props.memory_total);
        tool_json_string(stdout, props.device_id);
        printf(",\n     \"caps\": {\"async\": %s, \"host_buffer\": %s, \"buffer_from_host_ptr\": %s, "
               "\"events\": %s},\n     \"buffer_type\": ",
               props.caps.async ? "true" : "false", props.caps.host_buffer ? "true" : "false",
               props.caps.buffer_from_host_ptr ? "true" : "false", props.caps.events ? "true" : "false");
        tool_json_string(stdout, buft_name_or_null(ggml_backend_dev_buffer_type(dev)));
        printf(", \"host_buffer_type\": ");
        tool_json_string(stdout, buft_name_or_null(ggml_backend_dev_host_buffer_type(dev)));
        printf("}");
    }
    printf("%s],\n  \"cpu_placement\": ", ggml_backend_dev_count() ? "\n  " : "");
    char *placement = cpu_placement_text();
    tool_json_string(stdout, placement);
    free(placement);
    printf("\n}\n");
}

/* ------------------------------------------------------------- main */

static void usage(FILE *out)
{
    fprintf(out,
            "usage: " PROGRAM " [--json] [--numa STRATEGY] [--require NAME]... [--help] [--version]\n"
            "Loads every backend plugin and prints the plugin search path, the plugin\n"
            "files found and whether they loaded, the registries and the devices.\n"
            "  --json          print the same as one JSON object\n"
            "  --numa STRATEGY show the CPU placement under ggml_numa_init(STRATEGY): disabled,\n"
            "                  distribute, isolate, numactl or mirror (default: none called)\n"
            "  --require NAME  exit with status 2 unless a device NAME exists (any case)\n"
            "  --help          print this help and exit\n"
            "  --version       print the version and exit\n");
}

static int bad_usage(const char *what, const char *arg)
{
    fprintf(stderr, PROGRAM ": %s '%s'\nTry '" PROGRAM " --help'.\n", what, arg);
    return 2;
}

/* Reads the options into *json, *numa and required[] (which holds argc - 1 names).
 * Returns -1 to go on, or the exit status of a --help, --version or bad
 * usage answered here. */
static int parse_options(int argc, char **argv, bool *json, enum ggml_numa_strategy *numa, const char **required,
                         int *n_required)
{
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--json") == 0) {
            *json = true;
        } else if (strcmp(arg, "--require") == 0) {
            if (i + 1 >= argc)
                return bad_usage("missing device name for option", arg);
            required[(*n_required)++] = argv[++i];
        } else if (strncmp(arg, "--require=", 10) == 0) {
            required[(*n_required)++] = arg + 10;
        } else if (strcmp(arg, "--numa") == 0 || strncmp(arg, "--numa=", 7) == 0) {
            const char *name = arg[6] == '=' ? arg + 7 : i + 1 < argc ? argv[++i] : NULL;
            if (name == NULL)
                return bad_usage("missing strategy for option", arg);
            if (!tool_parse_numa(name, numa))
                return bad_usage("unknown NUMA strategy", name);
        } else if (strcmp(arg, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(arg, "--version") == 0) {
            print_version();
            return 0;
        } else {
            return bad_usage("unknown option", arg);
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    bool json = false;
    const char **required = xrealloc(NULL, (size_t) argc * sizeof *required);
    int n_required = 0;
    enum ggml_numa_strategy numa = GGML_NUMA_STRATEGY_COUNT; /* COUNT: not asked for */
    int answered = parse_options(argc, argv, &json, &numa, required, &n_required);
    if (answered >= 0) {
        free(required);
        return answered;
    }
    if (numa != GGML_NUMA_STRATEGY_COUNT)
        ggml_numa_init(numa);

    /* the CPU kernels first, so that a warning about GGML_CPU_ISA is shown */
    ggml_log_set(tool_log_quiet, NULL);
    ggml_cpu_init();
    /* load as a program would; what went wrong is reported per file below */
    ggml_log_set(capture_log, NULL);
    ggml_backend_load_all();
    ggml_log_set(tool_log_quiet, NULL);

    struct report r = { 0 };
    add_place(&r, GGML_BACKEND_TOOL_DIR, "plugin directory");
    const char *env = getenv("GGML_BACKEND_PATH");
    if (env != NULL) {
        char *list = xstrdup(env);
        for (char *entry = list, *next; entry != NULL; entry = next) {
            next = strchr(entry, ':');
            if (next != NULL)
                *next++ = '\0';
            if (entry[0] != '\0')
                add_place(&r, entry, "GGML_BACKEND_PATH");
        }
        free(list);
    }
    find_files(&r);
    probe_files(&r);

    if (json)
        print_json(&r);
    else
        print_text(&r);
    fflush(stdout);

    int status = 0;
    for (int i = 0; i < n_required; i++)
        if (ggml_backend_dev_by_name(required[i]) == NULL) {
            fprintf(stderr, PROGRAM ": no device named '%s' (devices:", required[i]);
            for (size_t d = 0; d < ggml_backend_dev_count(); d++)
                fprintf(stderr, " %s", ggml_backend_dev_name(ggml_backend_dev_get(d)));
            fprintf(stderr, ")\n");
            status = 2;
        }

    for (size_t i = 0; i < r.n_places; i++)
        free(r.places[i].path);
    for (size_t i = 0; i < r.n_files; i++) {
        free(r.files[i].path);
        free(r.files[i].registry);
        free(r.files[i].reason);
    }
    free(r.places);
    free(r.files);
    free(required);
    return status;
}
