/* Elementwise math numpy lacks, over float32 arrays, written so that gcc vectorises the loops:
   branch-free (both sides of a choice computed, then selected) and free of libm calls.
   Evaluated in double precision, so each result is within one float32 rounding of the exact value.
   `runtime/native/conv_kernels.c` is compiled after this file and calls `xrelay_erf_in_place` as
   an elementwise chain's erf step. */
#include <stdint.h>
#include <string.h>

/* No FP trap is ever enabled here; without this gcc sinks each side of a select into a branch and
   does not vectorise the loops. Only this file's functions. */
#pragma GCC push_options
#pragma GCC optimize("no-trapping-math")

static const double INVERSE_FACTORIALS[12] = {
    1.0, 1.0, 0.5, 1.0 / 6.0, 1.0 / 24.0, 1.0 / 120.0, 1.0 / 720.0, 1.0 / 5040.0, 1.0 / 40320.0,
    1.0 / 362880.0, 1.0 / 3628800.0, 1.0 / 39916800.0};
static const double ERF_SERIES[18] = {
    1.0, -1.0 / 3, 1.0 / 10, -1.0 / 42, 1.0 / 216, -1.0 / 1320, 1.0 / 9360, -1.0 / 75600,
    1.0 / 685440, -1.0 / 6894720, 1.0 / 76204800, -1.0 / 918086400, 1.0 / 11975040000.0,
    -1.0 / 168129561600.0, 1.0 / 2528170444800.0, -1.0 / 40537905408000.0,
    1.0 / 690452066304000.0, -1.0 / 12439163446272000.0};
static const double ERFC_FIT[10] = {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                                    0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277};

/* e^y for -700 <= y <= 700: y = k ln2 + r with |r| <= ln2/2, e^r by its Taylor series to r^12
   (error below 1e-14), 2^k built in the exponent bits. */
static inline double exp_bounded(double y) {
    const double shifter = 6755399441055744.0; /* 1.5 * 2^52: adding it rounds to an integer */
    double kd = y * 1.4426950408889634 + shifter;
    double k = kd - shifter;
    double r = y - k * 0.6931471803691238 - k * 1.9082149292705877e-10;
    double p = 1.0 / 479001600.0;
#pragma GCC unroll 12
    for (int i = 11; i >= 0; i--) p = p * r + INVERSE_FACTORIALS[i];
    int64_t bits, shifter_bits;
    memcpy(&bits, &kd, sizeof bits);
    memcpy(&shifter_bits, &shifter, sizeof shifter_bits);
    int64_t scale_bits = (bits - shifter_bits + 1023) << 52;
    double scale;
    memcpy(&scale, &scale_bits, sizeof scale);
    return p * scale;
}

/* erf: for |x| < 1 its Maclaurin series (18 terms, alternating terms below 1: no cancellation);
   else 1 - erfc, erfc(a) = t exp(-a^2 + P(t)) with t = 1 / (1 + a/2) (Numerical Recipes' Chebyshev
   fit, fractional error below 1.2e-7, and erfc <= 0.16 for a >= 1). Past a = 6, erf is 1 in float32. */
static inline float erf_value(float x) {
    double v = x;
    double a = v < 0 ? -v : v;
    double z = a < 1.0 ? a * a : 1.0;
    double s = ERF_SERIES[17];
#pragma GCC unroll 17
    for (int j = 16; j >= 0; j--) s = s * z + ERF_SERIES[j];
    double small = s * a * 1.1283791670955126; /* 2 / sqrt(pi) */
    double b = a < 1.0 ? 1.0 : (a < 6.0 ? a : 6.0);
    double t = 1.0 / (1.0 + 0.5 * b);
    double q = ERFC_FIT[9];
#pragma GCC unroll 9
    for (int j = 8; j >= 0; j--) q = q * t + ERFC_FIT[j];
    double large = 1.0 - t * exp_bounded(q - b * b);
    double magnitude = a < 1.0 ? small : large;
    double result = v < 0 ? -magnitude : magnitude;
    return v != v ? x : (v == 0 ? x : (float)result);
}

void xrelay_erf(const float *restrict x, float *restrict y, int64_t n) {
    for (int64_t i = 0; i < n; i++) y[i] = erf_value(x[i]);
}

void xrelay_erf_in_place(float *v, int64_t n) {
    for (int64_t i = 0; i < n; i++) v[i] = erf_value(v[i]);
}

#pragma GCC pop_options
