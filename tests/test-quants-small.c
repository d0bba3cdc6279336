/*
 * test-quants-small.c - MXFP4, NVFP4, Q1_0, Q2_0 and IQ4_NL: decoding and
 * quantizing against upstream ggml's recorded results, IQ4_NL's error
 * against upstream's, validation, ggml_quantize_chunk, and the CPU dot
 * products against a double-precision reference.
 *
 * The recorded data (tests/data/smallquants.txt, found through the
 * environment's top_srcdir) says in its header how it was made.  Besides
 * it, the decoders of small-quants-ref.h, written from the format
 * definitions, check the library's.
 */
#include "config.h"

#include "ggml-cpu.h"
#include "tap.h"
#include "quant-data.h"
#include "small-quants-ref.h"

#define N 128
#define MAX_CASES 8
#define MAX_LINE 8192

/* ---------------------------------------------------------- recorded data */

static const enum ggml_type types[] = { GGML_TYPE_MXFP4, GGML_TYPE_NVFP4, GGML_TYPE_Q1_0, GGML_TYPE_Q2_0,
                                        GGML_TYPE_IQ4_NL };
#define N_TYPES 5

struct recorded {
    float input[MAX_CASES][N];
    int n_cases;
    uint8_t quant[N_TYPES][MAX_CASES][N];
    uint32_t decode[N_TYPES][MAX_CASES][N];
    uint8_t raw[N_TYPES][2][N];
    uint32_t rawdecode[N_TYPES][2][N];
    uint32_t scale[2][256][2];   /* MXFP4, NVFP4: values 0 and 1 of a block with each scale byte */
    double rmse[3][2];
};

static int type_index(const char *name)
{
    for (int t = 0; t < N_TYPES; t++)
        if (strcmp(name, ggml_type_name(types[t])) == 0)
            return t;
    return -1;
}

static bool read_words(char *p, uint32_t *out, int n)
{
    for (int i = 0; i < n; i++) {
        char *end;
        out[i] = (uint32_t) strtoul(p, &end, 16);
        if (end == p)
            return false;
        p = end;
    }
    return true;
}

static bool load(struct recorded *r)
{
    FILE *f = qd_open_data("smallquants.txt");
    if (f == NULL)
        return false;
    static char line[MAX_LINE];
    bool good = true;
    while (good && fgets(line, sizeof line, f)) {
        char tag[16], name[16];
        int c, n;
        if (line[0] == '#' || sscanf(line, "%15s %15s %d%n", tag, name, &c, &n) != 3)
            continue;
        const int t = type_index(name);
        char *rest = line + n;
        while (*rest == ' ')
            rest++;
        if (strcmp(tag, "input") == 0 && c < MAX_CASES) {
            uint32_t w[N];
            good = read_words(rest, w, N);
            memcpy(r->input[c], w, sizeof w);
            r->n_cases = c + 1 > r->n_cases ? c + 1 : r->n_cases;
        } else if (t < 0) {
            good = false;
        } else if (strcmp(tag, "quant") == 0 && c < MAX_CASES) {
            good = qd_read_hex(rest, r->quant[t][c], ggml_row_size(types[t], N));
        } else if (strcmp(tag, "decode") == 0 && c < MAX_CASES) {
            good = read_words(rest, r->decode[t][c], N);
        } else if (strcmp(tag, "raw") == 0 && c < 2) {
            good = qd_read_hex(rest, r->raw[t][c], ggml_row_size(types[t], N));
        } else if (strcmp(tag, "rawdecode") == 0 && c < 2) {
            good = read_words(rest, r->rawdecode[t][c], N);
        } else if (strcmp(tag, "scale") == 0 && t < 2 && c >= 0 && c < 256) {
            good = read_words(rest, r->scale[t][c], 2);
        } else if (strcmp(tag, "rmse") == 0 && c >= 0 && c < 3) {
            int w;
            double v;
            good = sscanf(rest, "%d %la", &w, &v) == 2 && (w == 0 || w == 1);
            if (good)
                r->rmse[c][w] = v;
        }
    }
    fclose(f);
    return good && r->n_cases >= 6;
}

static uint32_t bits_of(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* ------------------------------------------------------------- checks */

static void check_recorded(const struct recorded *r)
{
    float y[N];
    uint8_t q[N];
    for (int t = 0; t < N_TYPES; t++) {
        const enum ggml_type type = types[t];
        const size_t rs = ggml_row_size(type, N);
        const ggml_to_float_t to_float = ggml_get_type_traits(type)->to_float;
        const ggml_from_float_t from_ref = ggml_get_type_traits(type)->from_float_ref;
        if (!ok(to_float != NULL && from_ref != NULL, "%s: to_float and from_float_ref exist", ggml_type_name(type)))
            continue;
        bool dec_ok = true, ref_ok = true, quant_ok = true, chunk_ok = true;
        for (int c = 0; c < r->n_cases; c++) {
            to_float(r->quant[t][c], y, N);
            for (int i = 0; i < N; i++) {
                if (bits_of(y[i]) != r->decode[t][c][i]) {
                    tap_diag("%s case %d value %d: %08x, upstream %08x", ggml_type_name(type), c, i, bits_of(y[i]),
                             r->decode[t][c][i]);
                    dec_ok = false;
                    break;
                }
                /* the format definition in double (the recorded values are finite here) */
                const double want = small_ref_value(type, r->quant[t][c], i);
                if ((double) y[i] != want && !(y[i] != y[i] && want != want))
                    ref_ok = false;
            }
            if (type == GGML_TYPE_IQ4_NL)
                continue;
            memset(q, 0xa5, sizeof q);
            from_ref(r->input[c], q, N);
            if (memcmp(q, r->quant[t][c], rs) != 0) {
                tap_diag("%s case %d: from_float_ref bytes differ from upstream's", ggml_type_name(type), c);
                quant_ok = false;
            }
            memset(q, 0x5a, sizeof q);
            if (ggml_quantize_chunk(type, r->input[c], q, 0, 1, N, NULL) != rs || memcmp(q, r->quant[t][c], rs) != 0)
                chunk_ok = false;
        }
        ok(dec_ok, "%s: upstream's blocks of %d cases decode to upstream's floats bit for bit", ggml_type_name(type),
           r->n_cases);
        ok(ref_ok, "%s: decoded values equal the format definition in double", ggml_type_name(type));
        if (type != GGML_TYPE_IQ4_NL) {
            ok(quant_ok, "%s: from_float_ref writes upstream's bytes on all %d cases", ggml_type_name(type),
               r->n_cases);
            ok(chunk_ok, "%s: ggml_quantize_chunk writes upstream's bytes", ggml_type_name(type));
        }
        bool raw_ok = true;
        for (int c = 0; c < 2; c++) {
            to_float(r->raw[t][c], y, N);
            for (int i = 0; i < N; i++)
                if (bits_of(y[i]) != r->rawdecode[t][c][i] &&
                    !(y[i] != y[i] && (r->rawdecode[t][c][i] & 0x7fffffffu) > 0x7f800000u))
                    raw_ok = false;
        }
        ok(raw_ok, "%s: blocks of arbitrary bytes decode as upstream decodes them", ggml_type_name(type));
    }

    /* every scale byte of MXFP4 and NVFP4 */
    for (int t = 0; t < 2; t++) {
        bool all = true;
        uint8_t b[36];
        for (int v = 0; v < 256; v++) {
            if (t == 0) {
                b[0] = (uint8_t) v;
                memset(b + 1, 0x71, 16);
            } else {
                memset(b, v, 4);
                memset(b + 4, 0xf7, 32);
            }
            ggml_get_type_traits(types[t])->to_float(b, y, ggml_blck_size(types[t]));
            if (bits_of(y[0]) != r->scale[t][v][0] || bits_of(y[1]) != r->scale[t][v][1]) {
                tap_diag("%s scale byte %02x: %08x %08x, upstream %08x %08x", ggml_type_name(types[t]), v,
                         bits_of(y[0]), bits_of(y[1]), r->scale[t][v][0], r->scale[t][v][1]);
                all = false;
            }
        }
        ok(all, "%s: all 256 scale bytes decode as upstream's", ggml_type_name(types[t]));
    }
}

/* The generator of the RMSE inputs (the same as the data file's). */
static uint32_t xs_state;
static uint32_t xs_next(void)
{
    uint32_t x = xs_state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return xs_state = x;
}
static float xs_uniform(void) { return (float) (xs_next() >> 8) / 8388608.0f - 1.0f; }
static float xs_bell(void) { return xs_uniform() + xs_uniform() + xs_uniform() + xs_uniform(); }

#define RR 32
#define RC 256

static void rmse_input(int kind, float *x, float *imat)
{
    xs_state = 0x1234567u + (uint32_t) kind * 7919u;
    for (int i = 0; i < RR * RC; i++) {
        const float u = xs_uniform();
        switch (kind) {
        case 0: x[i] = xs_bell(); break;
        case 1: x[i] = u * u * u * 10.0f; break;
        default: x[i] = 0.1f * xs_bell() + ((xs_next() % 61u) == 0 ? 5.0f * xs_uniform() : 0.0f); break;
        }
    }
    for (int j = 0; j < RC; j++) {
        const float u = xs_uniform();
        imat[j] = 0.05f + u * u * 4.0f;
    }
}

static void check_iq4nl_error(const struct recorded *r)
{
    static float x[RR * RC], y[RR * RC], imat[RC];
    static uint8_t q[RR * RC];
    for (int kind = 0; kind < 3; kind++) {
        rmse_input(kind, x, imat);
        for (int w = 0; w < 2; w++) {
            const size_t want = RR * ggml_row_size(GGML_TYPE_IQ4_NL, RC);
            const size_t got = ggml_quantize_chunk(GGML_TYPE_IQ4_NL, x, q, 0, RR, RC, w ? imat : NULL);
            ggml_get_type_traits(GGML_TYPE_IQ4_NL)->to_float(q, y, RR * RC);
            double e = 0, ew = 0, sw = 0;
            for (int i = 0; i < RR * RC; i++) {
                const double d = (double) x[i] - y[i];
                e += d * d;
                ew += imat[i % RC] * d * d;
                sw += imat[i % RC];
            }
            /* with weights, the error they weigh (as recorded for upstream) */
            const double rmse = w ? sqrt(ew / sw) : sqrt(e / (RR * RC));
            tap_diag("iq4_nl input %d: plain RMSE %.6g, importance-weighted RMSE %.6g", kind, sqrt(e / (RR * RC)),
                     sqrt(ew / sw));
            ok(got == want && rmse <= r->rmse[kind][w] * (1 + 1e-6),
               "iq4_nl: input %d %s: RMSE %.6g <= upstream's %.6g", kind,
               w ? "with importance weights, weighted" : "without importance weights", rmse, r->rmse[kind][w]);
        }
    }
    /* the reference quantizer (no weights, the same search) */
    rmse_input(0, x, imat);
    ggml_get_type_traits(GGML_TYPE_IQ4_NL)->from_float_ref(x, q, RR * RC);
    ggml_get_type_traits(GGML_TYPE_IQ4_NL)->to_float(q, y, RR * RC);
    double e = 0;
    for (int i = 0; i < RR * RC; i++)
        e += ((double) x[i] - y[i]) * ((double) x[i] - y[i]);
    ok(sqrt(e / (RR * RC)) <= r->rmse[0][0] * (1 + 1e-6), "iq4_nl: from_float_ref's RMSE %.6g is as low",
       sqrt(e / (RR * RC)));
}

/* Zero blocks, huge values, and round trips within the format's step. */
static void check_round_trips(void)
{
    float x[256], y[256];
    uint8_t q[512];
    for (int t = 0; t < N_TYPES; t++) {
        const enum ggml_type type = types[t];
        const struct ggml_type_traits *tr = ggml_get_type_traits(type);
        memset(x, 0, sizeof x);
        tr->from_float_ref(x, q, 256);
        tr->to_float(q, y, 256);
        bool zeros = true;
        for (int i = 0; i < 256; i++)
            zeros = zeros && (type == GGML_TYPE_Q1_0 ? fabsf(y[i]) == 0.0f : y[i] == 0.0f);
        ok(zeros, "%s: a zero row decodes to zeros", ggml_type_name(type));
        ok(!ggml_quantize_requires_imatrix(type), "%s: no importance matrix required", ggml_type_name(type));
        ok(ggml_validate_row_data(type, q, ggml_row_size(type, 256)), "%s: quantized zeros validate",
           ggml_type_name(type));
    }
    /* IQ4_NL: a scale beyond binary16 saturates at its largest finite value */
    for (int i = 0; i < 32; i++)
        x[i] = (i % 2 ? -1.0f : 1.0f) * 3e6f * (float) (i + 1) / 32.0f;
    ggml_get_type_traits(GGML_TYPE_IQ4_NL)->from_float_ref(x, q, 32);
    ggml_get_type_traits(GGML_TYPE_IQ4_NL)->to_float(q, y, 32);
    {
        bool finite = ggml_validate_row_data(GGML_TYPE_IQ4_NL, q, 18);
        for (int i = 0; i < 32; i++)
            finite = finite && isfinite(y[i]) && (y[i] > 0) == (x[i] > 0);
        ok(finite, "iq4_nl: values beyond the binary16 scale's range give a valid block of finite, same-sign values");
    }
}

static void check_validation(void)
{
    uint8_t b[36];
    memset(b, 0, sizeof b);
    b[0] = 0xff;
    ok(!ggml_validate_row_data(GGML_TYPE_MXFP4, b, 17), "mxfp4: E8M0 exponent 0xff is invalid");
    b[0] = 0xfe;
    ok(ggml_validate_row_data(GGML_TYPE_MXFP4, b, 17), "mxfp4: exponent 0xfe is valid");
    memset(b, 0xff, sizeof b);
    ok(ggml_validate_row_data(GGML_TYPE_NVFP4, b, 36), "nvfp4: every scale byte is valid (as upstream)");
    static const uint16_t bad[] = { 0x7c00, 0xfc00, 0x7e00 };
    const enum ggml_type with_d[] = { GGML_TYPE_Q1_0, GGML_TYPE_Q2_0, GGML_TYPE_IQ4_NL };
    for (int t = 0; t < 3; t++) {
        bool all = true;
        for (int k = 0; k < 3; k++) {
            memset(b, 0, sizeof b);
            b[18] = (uint8_t) bad[k];
            b[19] = (uint8_t) (bad[k] >> 8);
            /* second block's d */
            all = all && !ggml_validate_row_data(with_d[t], b, 36);
        }
        memset(b, 0, sizeof b);
        b[19] = 0x7b;
        all = all && ggml_validate_row_data(with_d[t], b, 36);
        ok(all, "%s: an infinite or NaN binary16 d is invalid, a finite one valid", ggml_type_name(with_d[t]));
    }
}

/* The CPU traits and vec_dot against Q8_0 rows, against a double reference. */
static void check_cpu(void)
{
    enum { K = 1024 };
    static float xv[K], yv[K];
    static uint8_t xq[K * 2], yq[K * 2];
    xs_state = 77;
    for (int i = 0; i < K; i++) {
        xv[i] = xs_bell();
        yv[i] = xs_bell();
    }
    const struct ggml_type_traits_cpu *q8 = ggml_get_type_traits_cpu(GGML_TYPE_Q8_0);
    q8->from_float(yv, yq, K);
    for (int t = 0; t < N_TYPES; t++) {
        const enum ggml_type type = types[t];
        const struct ggml_type_traits_cpu *c = ggml_get_type_traits_cpu(type);
        if (!ok(c->vec_dot_type == GGML_TYPE_Q8_0 && c->vec_dot != NULL && c->from_float != NULL && c->nrows == 1,
                "%s: CPU traits: vec_dot against q8_0, from_float", ggml_type_name(type)))
            continue;
        c->from_float(xv, xq, K);
        bool all = true;
        for (int n = (int) ggml_blck_size(type); n <= K; n *= 2) {
            double want = 0, mag = 0;
            for (int i = 0; i < n; i++) {
                const double p = small_ref_value(type, xq, i) * small_ref_value(GGML_TYPE_Q8_0, yq, i);
                want += p;
                mag += fabs(p);
            }
            float got = NAN;
            c->vec_dot(n, &got, 0, xq, 0, yq, 0, 1);
            if (!(fabs(got - want) <= 1e-5 * mag)) {
                tap_diag("%s n=%d: %.9g, reference %.9g", ggml_type_name(type), n, got, want);
                all = false;
            }
        }
        ok(all, "%s: vec_dot within 1e-5 of |products| of the double reference", ggml_type_name(type));
    }
}

int main(void)
{
    tap_capture_log();
    static struct recorded r;
    if (!ok(load(&r), "the recorded data loads"))
        return tap_done();
    check_recorded(&r);
    check_iq4nl_error(&r);
    check_round_trips();
    check_validation();
    check_cpu();
    return tap_done();
}
