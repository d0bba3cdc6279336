/*
 * simd/vmath-template.h - exp, tanh and erfc and the activations built on
 * them (sigmoid, silu, the gelu forms), written once for any vector width.
 * A level's vmath.h (avx2/vmath.h, avx512/vmath.h) defines the parameters
 * below for its vector type and includes this file, which defines static
 * inline functions VM_NAME(exp), VM_NAME(tanh), ... and #undefs the
 * parameters.  The same operations in the same order at every width: an
 * element's result is the same bits at every level using this file.
 *
 * Parameters (all lanes independent; fused ops rounded once):
 *   VM_F, VM_I            vector of floats, of int32
 *   VM_NAME(name)         the name of the function defined for name
 *   VM_SET1(c)            every lane c (float); VM_I_SET1(c) the same, int32
 *   VM_ADD, VM_SUB, VM_MUL, VM_DIV, VM_MIN, VM_MAX (a, b)
 *                         MIN and MAX give b when a lane of a or b is NaN
 *   VM_FMADD(a, b, c)     a * b + c;  VM_FNMADD(a, b, c): c - a * b;
 *   VM_FMSUB(a, b, c)     a * b - c
 *   VM_AND, VM_OR, VM_XOR (a, b), VM_ANDNOT(a, b) = ~a & b   (bits)
 *   VM_LT(a, b), VM_GE(a, b)  ordered, non-signalling compares
 *   VM_SELECT(m, a, b)    a where m holds, b elsewhere
 *   VM_ROUND(x)           x rounded to an integer value, nearest even
 *   VM_CVT_I(x)           x to int32, rounded to nearest even (INT32_MIN
 *                         for NaN)
 *   VM_I_ADD, VM_I_SUB (a, b), VM_I_SRAI(v, k), VM_I_SLLI(v, k) (shifts,
 *                         the right one arithmetic), VM_I_AS_F(v) (bits)
 *
 * Max relative errors against the exact function of the float input, over
 * all finite inputs (tests/test-kernels.c checks them over a dense sweep of
 * the float line at every level).  A result in the subnormal range carries
 * in addition an absolute error of at most 2^-148 (two roundings to the
 * subnormal grid).  Special values follow the C library: exp(+inf) = +inf,
 * exp(-inf) = 0, overflow gives +inf, underflow 0, NaN gives NaN.
 *   exp             2.5e-7
 *   tanh            4e-7
 *   erfc (parts)    1e-6
 *   sigmoid, silu   5e-7
 *   gelu (tanh)     5e-7 (1 + |2u|), u = sqrt(2/pi) (x + 0.044715 x^3):
 *                   u is rounded in float before the exponential, as in the op
 *   gelu_quick      5e-7 (1 + |1.702 x|), for the same reason
 *   gelu_erf        1.5e-6
 *   abs, neg, relu  exact
 */

/*
 * e^(hi + lo), where lo is a correction of at most a few units (the part
 * of the argument hi cannot hold; 0 for a plain exp).  Max relative error
 * 2.5e-7 (about 2 ulp).
 *
 * hi is clamped to [-104, 89]: beyond it the result is 0 or +inf anyway
 * (a NaN goes through the clamp and the polynomial).  n = round((hi + lo)
 * / ln 2) and r = hi - n ln 2 + lo, with ln 2 in two parts (ln2_hi holds
 * its leading 15 bits, so n * ln2_hi is exact for |n| < 2^9 and the fused
 * subtraction is exact); then e^r, |r| <= ln2 / 2 + tiny, by a polynomial
 * of degree 6 (fit error 2e-9), and 2^n applied as two
 * factors 2^(n/2) and 2^(n - n/2), both normal for n in [-152, 130], so
 * that a result near the overflow or subnormal range is rounded once.
 */
static inline VM_F VM_NAME(exp_reduced)(VM_F hi, VM_F lo, bool has_lo)
{
    const VM_F ln2_hi = VM_SET1(0.693145751953125f); /* 15 significant bits */
    const VM_F ln2_lo = VM_SET1(1.42860682030941723212e-6f);
    hi = VM_MIN(VM_SET1(89.0f), VM_MAX(VM_SET1(-104.0f), hi));
    /* (x + 0 is not x for x = -0: a plain exp skips the additions of lo) */
    const VM_F n = VM_ROUND(VM_MUL(has_lo ? VM_ADD(hi, lo) : hi, VM_SET1(1.44269504088896340736f)));
    VM_F r = VM_FNMADD(n, ln2_hi, hi);
    r = VM_FNMADD(n, ln2_lo, r);
    if (has_lo)
        r = VM_ADD(r, lo);

    /* degree 6, fitted to e^r at the Chebyshev nodes of [-ln2/2, ln2/2]
       (coefficients rounded to float; fit error 2e-9) */
    VM_F p = VM_SET1(0x1.6d7532p-10f);
    p = VM_FMADD(p, r, VM_SET1(0x1.126fa8p-7f));
    p = VM_FMADD(p, r, VM_SET1(0x1.5554acp-5f));
    p = VM_FMADD(p, r, VM_SET1(0x1.555404p-3f));
    p = VM_FMADD(p, r, VM_SET1(0.5f));
    p = VM_FMADD(p, r, VM_SET1(1.0f));
    p = VM_FMADD(p, r, VM_SET1(1.0f));

    /* a NaN's n converts to INT32_MIN: the factors are then garbage, p is NaN */
    const VM_I ni = VM_CVT_I(n);
    const VM_I bias = VM_I_SET1(127);
    /* every |n| < 126 (the usual case): 2^n is one normal factor, and
       scaling by it rounds exactly as the two factors below do */
    if (VM_NONE(VM_GE(VM_ANDNOT(VM_SET1(-0.0f), n), VM_SET1(126.0f))))
        return VM_MUL(p, VM_I_AS_F(VM_I_SLLI(VM_I_ADD(ni, bias), 23)));
    const VM_I n1 = VM_I_SRAI(ni, 1), n2 = VM_I_SUB(ni, n1);
    const VM_F f1 = VM_I_AS_F(VM_I_SLLI(VM_I_ADD(n1, bias), 23));
    const VM_F f2 = VM_I_AS_F(VM_I_SLLI(VM_I_ADD(n2, bias), 23));
    return VM_MUL(VM_MUL(p, f1), f2);
}

static inline VM_F VM_NAME(exp_parts)(VM_F hi, VM_F lo)
{
    return VM_NAME(exp_reduced)(hi, lo, true);
}

/* e^x; max relative error 2.5e-7 (exp_parts). */
static inline VM_F VM_NAME(exp)(VM_F x)
{
    return VM_NAME(exp_reduced)(x, x, false);
}

/*
 * tanh(x); max relative error 4e-7.  For |x| < 0.4 the odd Taylor
 * polynomial to x^13 (truncation below 4e-9); above, with e = e^(-2|x|),
 * (1 - e) / (1 + e) with the sign of x (the subtraction loses at most a
 * factor 1.2 of e's error there).  tanh(+-inf) = +-1, tanh(-0) = -0.
 */
static inline VM_F VM_NAME(tanh)(VM_F x)
{
    const VM_F sign = VM_SET1(-0.0f), one = VM_SET1(1.0f);
    const VM_F ax = VM_ANDNOT(sign, x);
    const VM_F e = VM_NAME(exp)(VM_MUL(VM_SET1(-2.0f), ax));
    const VM_F far = VM_OR(VM_DIV(VM_SUB(one, e), VM_ADD(one, e)), VM_AND(sign, x));
    const VM_F x2 = VM_MUL(x, x);
    VM_F q = VM_SET1((float) (21844.0 / 6081075.0));
    q = VM_FMADD(q, x2, VM_SET1((float) (-1382.0 / 155925.0)));
    q = VM_FMADD(q, x2, VM_SET1((float) (62.0 / 2835.0)));
    q = VM_FMADD(q, x2, VM_SET1((float) (-17.0 / 315.0)));
    q = VM_FMADD(q, x2, VM_SET1((float) (2.0 / 15.0)));
    q = VM_FMADD(q, x2, VM_SET1((float) (-1.0 / 3.0)));
    /* the sign of x put back: x + x^3 q(x^2) is +0 for x = -0 */
    const VM_F near = VM_OR(VM_FMADD(VM_MUL(x, x2), q, x), VM_AND(sign, x));
    return VM_SELECT(VM_LT(ax, VM_SET1(0.4f)), near, far);
}

/*
 * erfc(a / sqrt(2)) = *s * e for a >= 0 (or NaN), as two factors so that
 * a caller can scale s before the product (a tiny e multiplied by a small
 * s would be rounded twice on the subnormal grid).  Max relative error of
 * the product 1e-6.
 *
 * With t = a / sqrt(2) and s = 2 / (2 + t) in (0, 1]:
 * erfc(t) = s * e^(g(s) - t^2), where g is smooth on [0, 1]; here g is a
 * degree-12 Chebyshev fit (made for this file with mpmath, max error 7e-9
 * on [0, 1]).  t^2 = a^2 / 2 enters the exponent as an exact sum of two
 * floats (a fused multiply-add gives the rounding error of a * a), so the
 * result keeps its relative accuracy where it is tiny.  a is clamped to
 * 20, where erfc has long underflowed to 0.
 */
static inline VM_F VM_NAME(erfc_parts)(VM_F a, VM_F *s)
{
    a = VM_MIN(VM_SET1(20.0f), a);
    const VM_F two = VM_SET1(2.0f);
    const VM_F t = VM_MUL(a, VM_SET1(0.70710678118654752440f));
    *s = VM_DIV(two, VM_ADD(two, t));
    static const float g_coef[13] = {
        0.06308584359f, -0.5567954857f, 1.982286548f, -3.696915256f, 3.82257739f,
        -2.122718045f, 0.7125918328f, -0.3379492492f, -0.05647743427f, 0.08070750306f,
        0.3751206317f, 0.9999978344f, -1.265512117f,
    };
    VM_F g = VM_SET1(g_coef[0]);
    for (int k = 1; k < 13; k++)
        g = VM_FMADD(g, *s, VM_SET1(g_coef[k]));
    const VM_F half = VM_SET1(0.5f);
    const VM_F sq = VM_MUL(a, a);
    const VM_F sq_err = VM_FMSUB(a, a, sq); /* a * a - sq, exactly */
    const VM_F hi = VM_MUL(half, sq), lo = VM_FNMADD(half, sq_err, g);
    return VM_NAME(exp_parts)(VM_SUB(VM_SET1(0.0f), hi), lo);
}

/* ------------------------------------------------------ the activations */
/* The formulas of lib/cpu/ops/unary.c; special values as its scalar forms
   give them (silu(-inf) is NaN, like -inf / (1 + e^inf); relu(NaN) is 0,
   like x > 0 ? x : 0). */

static inline VM_F VM_NAME(abs)(VM_F x) { return VM_ANDNOT(VM_SET1(-0.0f), x); }
static inline VM_F VM_NAME(neg)(VM_F x) { return VM_XOR(VM_SET1(-0.0f), x); }
/* x > 0 ? x : +0 (MAX gives its second operand for NaN, and for two zeros) */
static inline VM_F VM_NAME(relu)(VM_F x) { return VM_MAX(x, VM_SET1(0.0f)); }

/* x / (1 + e^minus_arg), the common form of sigmoid, silu, gelu_quick and gelu */
static inline VM_F VM_NAME(x_over_one_plus_exp)(VM_F x, VM_F minus_arg)
{
    return VM_DIV(x, VM_ADD(VM_SET1(1.0f), VM_NAME(exp)(minus_arg)));
}

static inline VM_F VM_NAME(sigmoid)(VM_F x)
{
    return VM_NAME(x_over_one_plus_exp)(VM_SET1(1.0f), VM_NAME(neg)(x));
}

static inline VM_F VM_NAME(silu)(VM_F x)
{
    return VM_NAME(x_over_one_plus_exp)(x, VM_NAME(neg)(x));
}

static inline VM_F VM_NAME(gelu_quick)(VM_F x)
{
    const float coef = 1.702f;
    return VM_NAME(x_over_one_plus_exp)(x, VM_MUL(VM_SET1(-coef), x));
}

/* x / (1 + e^(-2u)), u = sqrt(2/pi) x (1 + 0.044715 x^2) */
static inline VM_F VM_NAME(gelu)(VM_F x)
{
    const float sqrt_2_over_pi = 0.79788456080286535588f, coef_a = 0.044715f;
    const VM_F inner = VM_FMADD(VM_SET1(coef_a), VM_MUL(x, x), VM_SET1(1.0f));
    const VM_F minus_2u = VM_MUL(VM_MUL(VM_SET1(-2.0f * sqrt_2_over_pi), x), inner);
    return VM_NAME(x_over_one_plus_exp)(x, minus_2u);
}

/*
 * 0.5 x erfc(-x / sqrt 2), with c = erfc(|x| / sqrt 2) = s e: (0.5 x s) e
 * for x < 0 (the tiny e multiplied last), 0.5 x (2 - c) for x >= 0.
 */
static inline VM_F VM_NAME(gelu_erf)(VM_F x)
{
    VM_F s;
    const VM_F e = VM_NAME(erfc_parts)(VM_NAME(abs)(x), &s);
    const VM_F half_x = VM_MUL(VM_SET1(0.5f), x);
    const VM_F negative = VM_MUL(VM_MUL(half_x, s), e);
    const VM_F positive = VM_MUL(half_x, VM_SUB(VM_SET1(2.0f), VM_MUL(s, e)));
    return VM_SELECT(VM_GE(x, VM_SET1(0.0f)), positive, negative);
}

#undef VM_F
#undef VM_I
#undef VM_NAME
#undef VM_SET1
#undef VM_I_SET1
#undef VM_ADD
#undef VM_SUB
#undef VM_MUL
#undef VM_DIV
#undef VM_MIN
#undef VM_MAX
#undef VM_FMADD
#undef VM_FNMADD
#undef VM_FMSUB
#undef VM_AND
#undef VM_OR
#undef VM_XOR
#undef VM_ANDNOT
#undef VM_LT
#undef VM_GE
#undef VM_SELECT
#undef VM_NONE
#undef VM_CVT_I
#undef VM_ROUND
#undef VM_I_ADD
#undef VM_I_SUB
#undef VM_I_SRAI
#undef VM_I_SLLI
#undef VM_I_AS_F
